# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""How dlcp.backend's tensors travel and are reduced: host staging (CUDA
tensors through pinned memory, on a side stream), the packing of several
tensors into one buffer of aligned byte segments, the wire dtypes of
libdlcp's arithmetic, and the exact reduction, in a tensor's own dtype,
of what libdlcp cannot reduce. Private: dlcp.backend's process group uses
them.
"""
from __future__ import annotations

import functools
import threading
from typing import Any, Dict, List, Optional, Sequence

import torch
import torch.distributed as dist

import dlcp

_ALIGN = 16         # bytes: every tensor's bytes start at a multiple of this


# ---------------------------------------------------------------------------
# Host staging (CUDA tensors through pinned memory, on a side stream)

class _Staging:
    """Copies between tensors and the host buffers libdlcp works on.

    CPU tensors are copied (or used in place when they already are the wire
    buffer). A CUDA tensor is copied to or from pinned host memory on a side
    stream of its device: the copy to the host waits for an event that the
    caller's current stream recorded when the operation was issued, and
    each copy is waited for (stream synchronize) before its result is used,
    so the operation's Work completes only once the device tensors hold the
    result."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._streams: Dict[int, Any] = {}
        self._free: Dict[int, List[torch.Tensor]] = {}

    @staticmethod
    def events(tensors: Sequence[torch.Tensor]) -> Dict[int, Any]:
        """Per CUDA device among @tensors, an event on the caller's current
        stream (called on the caller's thread, when the operation is issued)."""
        evs: Dict[int, Any] = {}
        for t in tensors:
            if t.is_cuda and t.device.index not in evs:
                ev = torch.cuda.Event()
                ev.record(torch.cuda.current_stream(t.device))
                evs[t.device.index] = ev
        return evs

    @staticmethod
    def devices(tensors: Sequence[torch.Tensor]) -> List[torch.device]:
        return sorted({t.device for t in tensors if t.is_cuda}, key=lambda d: d.index)

    def stream(self, dev: torch.device) -> Any:
        with self._lock:
            s = self._streams.get(dev.index)
            if s is None:
                s = self._streams[dev.index] = torch.cuda.Stream(device=dev)
            return s

    def host(self, nbytes: int, pinned: bool) -> torch.Tensor:
        """A uint8 host buffer of at least @nbytes (a multiple of _ALIGN),
        pinned ones from a pool (give them back with release())."""
        nbytes = max(_ALIGN, -(-nbytes // _ALIGN) * _ALIGN)
        if not pinned:
            return torch.empty(nbytes, dtype=torch.uint8)
        size = 1 << (nbytes - 1).bit_length()
        with self._lock:
            lst = self._free.get(size)
            if lst:
                return lst.pop()[:nbytes]
        return torch.empty(size, dtype=torch.uint8, pin_memory=True)[:nbytes]

    def release(self, buf: torch.Tensor) -> None:
        if buf.is_pinned():
            base = buf._base if buf._base is not None else buf
            with self._lock:
                lst = self._free.setdefault(base.numel(), [])
                if len(lst) < 4:
                    lst.append(base)

    def to_host(self, t: torch.Tensor, dst: torch.Tensor, evs: Dict[int, Any]) -> None:
        """dst (host, contiguous, t's dtype and numel) <- t."""
        if not t.is_cuda:
            dst.copy_(t.reshape(-1))
            return
        s = self.stream(t.device)
        with torch.cuda.stream(s):
            ev = evs.get(t.device.index)
            if ev is not None:
                s.wait_event(ev)
            dst.copy_(t.reshape(-1), non_blocking=True)
        s.synchronize()

    def from_host(self, t: torch.Tensor, src: torch.Tensor, evs: Dict[int, Any]) -> None:
        """t <- src (host, contiguous, t's dtype and numel)."""
        if not t.is_cuda:
            t.copy_(src.view(t.shape))
            return
        s = self.stream(t.device)
        with torch.cuda.stream(s):
            ev = evs.get(t.device.index)
            if ev is not None:
                s.wait_event(ev)    # kernels queued before the operation
            t.copy_(src.view(t.shape), non_blocking=True)
        s.synchronize()


def _padded(nbytes: int) -> int:
    return -(-nbytes // _ALIGN) * _ALIGN


class _Bytes:
    """The raw bytes of a list of tensors in one host buffer, each tensor's
    at a multiple of _ALIGN bytes; a multiple of _ALIGN long in all."""

    def __init__(self, tensors: Sequence[torch.Tensor]) -> None:
        self.tensors = list(tensors)
        self.offs: List[int] = []
        n = used = 0
        for t in self.tensors:
            self.offs.append(n)
            used = n + t.numel() * t.element_size()    # without the last padding
            n = _padded(used)
        self.nbytes = n
        self.used = used

    def segment(self, buf: torch.Tensor, i: int) -> torch.Tensor:
        """Tensor @i's bytes in @buf (uint8), as a flat tensor of its dtype."""
        t = self.tensors[i]
        nb = t.numel() * t.element_size()
        return buf[self.offs[i]:self.offs[i] + nb].view(t.dtype)

    def pack(self, st: _Staging, buf: torch.Tensor, evs: Dict[int, Any]) -> None:
        for i, t in enumerate(self.tensors):
            st.to_host(t, self.segment(buf, i), evs)

    def unpack(self, st: _Staging, buf: torch.Tensor, evs: Dict[int, Any],
               into: Optional[Sequence[torch.Tensor]] = None) -> None:
        for i, t in enumerate(self.tensors if into is None else into):
            st.from_host(t, self.segment(buf, i), evs)


# ---------------------------------------------------------------------------
# Reductions

def _op_name(op: Any) -> str:
    for name in ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM"):
        if hasattr(dist.ReduceOp, name) and op == getattr(dist.ReduceOp, name):
            return name
    raise ValueError("dlcp backend: unknown reduce op %r" % (op,))


def _reduce_stack(stack: torch.Tensor, op: str, world: int) -> torch.Tensor:
    """Reduce @stack (world, n) along dim 0 in its own dtype, in rank order."""
    dt = stack.dtype
    if dt == torch.bool:
        if op in ("SUM", "MAX", "BOR"):
            return stack.any(0)
        if op in ("PRODUCT", "MIN", "BAND"):
            return stack.all(0)
        return functools.reduce(torch.bitwise_xor, stack.unbind(0))
    if op == "SUM":
        return stack.sum(0, dtype=dt)
    if op == "AVG":
        return stack.sum(0, dtype=dt) / world
    if op == "PRODUCT":
        if dt in (torch.float16, torch.bfloat16):     # no half prod on the CPU
            return stack.float().prod(0).to(dt)
        return stack.prod(0, dtype=dt)
    if op == "MIN":
        return stack.amin(0)
    if op == "MAX":
        return stack.amax(0)
    fn = {"BAND": torch.bitwise_and, "BOR": torch.bitwise_or, "BXOR": torch.bitwise_xor}[op]
    return functools.reduce(fn, stack.unbind(0))


def _check_reduce(op: str, tensors: Sequence[torch.Tensor]) -> None:
    """Raise (at once, on the caller's thread) what the operation cannot do."""
    for t in tensors:
        if op == "PREMUL_SUM":
            raise ValueError("dlcp backend: PREMUL_SUM is not supported")
        if t.is_complex() and op not in ("SUM", "AVG", "PRODUCT"):
            raise ValueError("dlcp backend: %s of a complex tensor" % op)
        if op == "AVG" and not (t.is_floating_point() or t.is_complex()):
            raise ValueError("dlcp backend: AVG needs a floating tensor, not %s" % t.dtype)
        if op in ("BAND", "BOR", "BXOR") and (t.is_floating_point() or t.is_complex()):
            raise ValueError("dlcp backend: %s needs an integer or bool tensor, not %s"
                             % (op, t.dtype))


# wire dtypes of the library's arithmetic
_WIRE = {torch.float32: (torch.float32, dlcp.DTYPE_FP32),
         torch.float16: (torch.float32, dlcp.DTYPE_FP32),
         torch.bfloat16: (torch.float32, dlcp.DTYPE_FP32),
         torch.int32: (torch.int32, dlcp.DTYPE_INT32)}


def _native(op: str, tensors: Sequence[torch.Tensor]) -> bool:
    """Can libdlcp's reduction do @op on @tensors (all one wire dtype)?"""
    if op not in ("SUM", "AVG") or not tensors:
        return False
    w = {_WIRE.get(t.dtype, (None,))[0] for t in tensors}
    return len(w) == 1 and None not in w and not (op == "AVG" and w == {torch.int32})


def _check_like(what: str, tensors: Sequence[torch.Tensor], ref_what: str,
                ref: torch.Tensor) -> None:
    """ValueError unless each of @tensors has @ref's dtype and size."""
    for t in tensors:
        if t.dtype != ref.dtype or t.numel() != ref.numel():
            raise ValueError("dlcp backend: %s %s of %s, %s %s of %s" % (
                what, tuple(t.shape), t.dtype, ref_what, tuple(ref.shape), ref.dtype))


def _listify(x: Any) -> List[torch.Tensor]:
    return [x] if isinstance(x, torch.Tensor) else list(x)
