# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""The objects of dlcp.backend beside the process group: its error
(DlcpError), its options (Options: pg_options, their defaults and checks;
the timeout of a call's options) and the Work that every operation
returns (DlcpWork). Private: import them from dlcp.backend, which says
what the backend does.
"""
from __future__ import annotations

import datetime
import errno as _errno
import os
import threading
import warnings
from typing import Any, Mapping, Optional, Union

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import Work

import dlcp
from dlcp.rendezvous import ConfigError

_ALGOS = {"ring": dlcp.ALGO_RING, "direct": dlcp.ALGO_DIRECT}
_TRANSPORTS = {"dlcp": dlcp.TRANSPORT_DLCP, "tcp": dlcp.TRANSPORT_TCP}
_PPM_MAX = 1000000
_INT_MAX = 0x7fffffff


# torch 2.x's error of a failed collective (a RuntimeError); 1.13 has none
_DistBackendError: Any = getattr(dist, "DistBackendError", RuntimeError)


class DlcpError(_DistBackendError):
    """An operation of the dlcp backend failed: a
    torch.distributed.DistBackendError where torch has it (2.x), else a
    RuntimeError. The message names the operation, this rank, the peer
    rank or root where one is known, and the cause; .errno is libdlcp's
    errno (ETIMEDOUT: a rank did not take part within the timeout) or
    None."""

    def __init__(self, msg: str, errno: Optional[int] = None) -> None:
        super().__init__(msg)
        self.errno = errno


# ---------------------------------------------------------------------------
# Options

# loss budgets a job may set in its environment expecting lossy groups:
# the backend does not read them, and says so once
_BUDGET_ENV = ("DLCP_BUDGET_PPM", "DLCP_BUDGET2_PPM")
_warned_env = False


def _warn_env_budget() -> None:
    """Warn once per process when DLCP_BUDGET_PPM or DLCP_BUDGET2_PPM is set
    to something but 0: the backend does not read them, so a job that
    expects its default group to be lossy learns that it is exact."""
    global _warned_env
    set_ = ["%s=%s" % (k, os.environ[k].strip()) for k in _BUDGET_ENV
            if os.environ.get(k, "").strip() not in ("", "0")]
    if _warned_env or not set_:
        return
    _warned_env = True
    warnings.warn("dlcp.backend: %s set, but the environment gives no dlcp group a loss "
                  "budget: a group without budget_ppm in its pg_options (the default group "
                  "among them) is exact. For lossy gradients make a group of their own: lossy = "
                  "dist.new_group(backend=\"dlcp\", pg_options={\"budget_ppm\": N}); "
                  "DDP(model, process_group=lossy) (see docs/torch-backend.md)"
                  % " and ".join(set_), UserWarning, stacklevel=2)


def _check_ppm(name: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= _PPM_MAX:
        raise ValueError("dlcp backend: %s=%r must be an integer 0..%d (ppm)"
                         % (name, v, _PPM_MAX))
    return v


def _env_choice(name: str, choices: Mapping[str, int], default: str) -> str:
    v = os.environ.get(name, "").strip() or default
    if v not in choices:
        raise ConfigError("%s=%r: one of %s" % (name, v, ", ".join(sorted(choices))))
    return v


class Options:
    """Options of a dlcp process group (pg_options of init_process_group or
    new_group; a dict with the same names works too). None: the default,
    0 (exact) for the budgets, the environment's (DLCP_ALGO,
    DLCP_TRANSPORT) else "ring" and "dlcp" for the others. The budgets
    have no environment default: a group is lossy only when its options
    say so."""

    FIELDS = ("budget_ppm", "budget2_ppm", "algo", "transport")

    def __init__(self, budget_ppm: Optional[int] = None, budget2_ppm: Optional[int] = None,
                 algo: Optional[str] = None, transport: Optional[str] = None) -> None:
        self.budget_ppm = budget_ppm
        self.budget2_ppm = budget2_ppm
        self.algo = algo
        self.transport = transport

    @classmethod
    def of(cls, obj: Union[None, "Options", Mapping[str, Any]]) -> "Options":
        """@obj as Options: ValueError for an unknown name, TypeError for
        something that is neither a mapping nor Options."""
        if obj is None:
            return cls()
        if isinstance(obj, cls):
            return cls(**{f: getattr(obj, f) for f in cls.FIELDS})
        if isinstance(obj, Mapping):
            unknown = sorted(str(k) for k in obj if k not in cls.FIELDS)
            if unknown:
                raise ValueError("dlcp backend: unknown option%s %s (the options are %s)" % (
                    "s" if len(unknown) > 1 else "", ", ".join(repr(u) for u in unknown),
                    ", ".join(cls.FIELDS)))
            return cls(**dict(obj))
        raise TypeError("dlcp backend: pg_options must be a dict or dlcp.backend.Options, "
                        "not %s" % type(obj).__name__)

    def resolved(self) -> "Options":
        """A copy with every None replaced by its default and every value
        checked (ValueError / ConfigError naming it)."""
        _warn_env_budget()
        r = Options()
        for f in ("budget_ppm", "budget2_ppm"):
            v = getattr(self, f)
            setattr(r, f, 0 if v is None else _check_ppm(f, v))
        for f, env, choices, default in (("algo", "DLCP_ALGO", _ALGOS, "ring"),
                                         ("transport", "DLCP_TRANSPORT", _TRANSPORTS, "dlcp")):
            v = getattr(self, f)
            if v is None:
                v = _env_choice(env, choices, default)
            elif v not in choices:
                raise ValueError("dlcp backend: %s=%r: one of %s"
                                 % (f, v, ", ".join(sorted(choices))))
            setattr(r, f, v)
        return r

    def __repr__(self) -> str:
        return "Options(%s)" % ", ".join("%s=%r" % (f, getattr(self, f)) for f in self.FIELDS)


def _timeout_ms(opts: Any, default_ms: int) -> int:
    t = getattr(opts, "timeout", None)
    if isinstance(t, datetime.timedelta) and t.total_seconds() > 0:
        return max(1, min(_INT_MAX, int(t.total_seconds() * 1000)))
    return default_ms


# ---------------------------------------------------------------------------
# Work objects

def _pywork_has_future() -> bool:
    """Does this torch's Python Work trampoline forward getFuture() (what
    DDP's reducer calls on the Work of an all_reduce) to a Python
    get_future()? Debian's torch 1.13 and torch 2.x do."""
    class _Probe(Work):
        def get_future(self):  # noqa: ANN201
            f = torch.futures.Future()
            f.set_result(None)
            return f
    try:
        Work.get_future(_Probe())    # type: ignore[attr-defined]  # not in torch 1.13's stubs
        return True
    except RuntimeError:
        return False


if not _pywork_has_future():
    warnings.warn("dlcp.backend: this torch does not forward Work.getFuture() to Python: "
                  "DDP over the dlcp backend will fail (Work::getFuture not implemented); "
                  "the collectives called from Python work")


class DlcpWork(Work):
    """The Work of one operation: wait() returns True once it is done, or
    raises its error; get_future() is a torch.futures.Future of the output
    tensors."""

    def __init__(self, name: str, fut: torch.futures.Future) -> None:
        super().__init__()
        self._name = name
        self._fut = fut
        self._done = threading.Event()
        self._exc: Optional[BaseException] = None
        self._value: Any = None
        self._src = -1          # a recv's: the rank the message came from
        self._peer = ""         # the peer its errors name ("to rank 1"), if any

    def _finish(self, value: Any, exc: Optional[BaseException]) -> None:
        self._value, self._exc = value, exc
        self._done.set()
        try:
            if exc is None:
                self._fut.set_result(value)
            else:
                self._fut.set_exception(exc)
        except Exception:  # a callback of the future failed: its own business
            pass

    def wait(self, timeout: Optional[datetime.timedelta] = None) -> bool:
        """Block until done (timeout None or 0: as long as the operation
        takes, which its own timeout bounds); raise the operation's error."""
        secs = timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else timeout
        if secs is None or secs <= 0:
            self._done.wait()
        elif not self._done.wait(secs):
            raise DlcpError("dlcp %s: not done after Work.wait(timeout=%s)"
                            % (self._name, timeout), _errno.ETIMEDOUT)
        if self._exc is not None:
            raise self._exc
        return True

    def get_future(self) -> torch.futures.Future:
        return self._fut

    def is_completed(self) -> bool:
        return self._done.is_set()

    def is_success(self) -> bool:
        return self._done.is_set() and self._exc is None

    def exception(self) -> Optional[BaseException]:
        return self._exc

    def result(self) -> Any:
        self.wait()
        return self._value

    def synchronize(self) -> None:
        self.wait()

    def _source_rank(self) -> int:
        """The rank a recv's message came from (what recv() from any source
        returns); -1 for other operations."""
        return self._src

    source_rank = _source_rank

    def __repr__(self) -> str:
        return "<DlcpWork %s %s>" % (self._name, "done" if self.is_completed() else "pending")
