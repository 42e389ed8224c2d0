# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""How the ranks of a dlcp.Group find each other (dlcp.Group.from_env()).

Every rank binds an endpoint (port 0 unless DLCP_PORT is set: the kernel
chooses, so several ranks per host and concurrent jobs never collide) and
publishes its address in a key-value store shared by the job: a
torch.distributed store (the default process group's, or the TCPStore at
MASTER_ADDR:MASTER_PORT that torchrun's agent hosts, or one rank 0 hosts),
or any object with set(key, value) and a get(key) that waits for the key.
Rank 0 collects the addresses and publishes the whole list under one key,
so a rank reads one value, not one per peer (thousands of ranks).

The address a rank binds, first found of:
  DLCP_ADDR     an address (IPv4, IPv6) or a host name of this host
  DLCP_IFNAME   an interface: its IPv4 address, else its global IPv6 one
  MASTER_ADDR   the local address of the route to it (a UDP socket
                connect()ed there, nothing sent)

Environment read: RANK, WORLD_SIZE, LOCAL_RANK (with DLCP_PORT),
MASTER_ADDR, MASTER_PORT, DLCP_ADDR, DLCP_IFNAME, DLCP_PORT,
DLCP_RDZV_TIMEOUT (seconds a rank waits for the others, default 300).
"""
import datetime
import fcntl
import os
import socket
import struct
import threading
import time
from typing import Any, Dict, List, Optional, Tuple


class ConfigError(ValueError):
    """The environment (or an argument) does not describe a usable group."""


def env_int(name: str, default: Optional[int] = None) -> int:
    """Integer environment variable @name; ConfigError if unset or not one."""
    v = os.environ.get(name)
    if v is None or v.strip() == "":
        if default is not None:
            return default
        raise ConfigError("%s is not set (torchrun sets it; or export it)" % name)
    try:
        return int(v.strip())
    except ValueError:
        raise ConfigError("%s=%r is not an integer" % (name, v)) from None


def rdzv_timeout() -> float:
    """$DLCP_RDZV_TIMEOUT in seconds (default 300)."""
    v = os.environ.get("DLCP_RDZV_TIMEOUT", "300")
    try:
        t = float(v)
    except ValueError:
        raise ConfigError("DLCP_RDZV_TIMEOUT=%r is not a number of seconds" % v) from None
    if t <= 0:
        raise ConfigError("DLCP_RDZV_TIMEOUT=%r must be > 0" % v)
    return t


def _resolve(host, what, port=0, family=socket.AF_UNSPEC):
    """Numeric addresses of @host, IPv4 first; ConfigError naming @what."""
    try:
        info = socket.getaddrinfo(host, port, family, socket.SOCK_DGRAM)
    except (socket.gaierror, UnicodeError) as e:
        raise ConfigError("%s=%s: cannot resolve: %s" % (what, host, e)) from None
    info.sort(key=lambda i: i[0] != socket.AF_INET)
    return [(i[0], i[4]) for i in info if i[0] in (socket.AF_INET, socket.AF_INET6)]


def _ifname_addr(ifname):
    try:
        socket.if_nametoindex(ifname)
    except OSError:
        raise ConfigError("DLCP_IFNAME=%s: no such interface" % ifname) from None
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        req = struct.pack("256s", ifname.encode()[:15])
        res = fcntl.ioctl(s.fileno(), 0x8915, req)    # SIOCGIFADDR
        return socket.inet_ntoa(res[20:24])
    except OSError:
        pass
    finally:
        s.close()
    try:    # address, index, prefix length, scope, flags, name
        with open("/proc/net/if_inet6") as f:
            for line in f:
                a, _, _, scope, _, name = line.split()
                if name == ifname and scope == "00":
                    return socket.inet_ntop(socket.AF_INET6, bytes.fromhex(a))
    except OSError:
        pass
    raise ConfigError("DLCP_IFNAME=%s has no IPv4 or global IPv6 address" % ifname)


def local_address(addr: Optional[str] = None) -> Tuple[str, str]:
    """(numeric address to bind, where it came from, for error messages)."""
    env = os.environ
    if addr is None and env.get("DLCP_ADDR"):
        addr, what = env["DLCP_ADDR"], "DLCP_ADDR"
    else:
        what = "addr"
    if addr is not None:
        a = addr[1:-1] if addr.startswith("[") and addr.endswith("]") else addr
        fam, sa = _resolve(a, what)[0]
        return sa[0], "%s=%s" % (what, addr)
    if env.get("DLCP_IFNAME"):
        a = _ifname_addr(env["DLCP_IFNAME"])
        return a, "DLCP_IFNAME=%s (%s)" % (env["DLCP_IFNAME"], a)
    master = env.get("MASTER_ADDR")
    if not master:
        raise ConfigError("MASTER_ADDR is not set: set it (torchrun does), or say which "
                          "address to bind with DLCP_ADDR or DLCP_IFNAME")
    port = env_int("MASTER_PORT", 0) if env.get("MASTER_PORT", "").strip() else 9
    last = None
    for fam, sa in _resolve(master, "MASTER_ADDR", port):
        s = socket.socket(fam, socket.SOCK_DGRAM)
        try:
            s.connect(sa)   # routes only, sends nothing
            a = s.getsockname()[0]
            return a, "the route to MASTER_ADDR=%s (%s)" % (master, a)
        except OSError as e:
            last = e
        finally:
            s.close()
    raise ConfigError("MASTER_ADDR=%s: no route from this host (%s); set DLCP_ADDR or "
                      "DLCP_IFNAME" % (master, last))


def local_port() -> int:
    """DLCP_PORT + LOCAL_RANK when DLCP_PORT is set, else 0 (any)."""
    if not os.environ.get("DLCP_PORT"):
        return 0
    p = env_int("DLCP_PORT") + env_int("LOCAL_RANK", 0)
    if not 0 < p <= 65535:
        raise ConfigError("DLCP_PORT + LOCAL_RANK = %d is not a port" % p)
    return p


class DictStore:
    """A store for ranks that are threads of one process (tests, tools).

    A get() of a missing key waits on that key alone: a set() wakes only
    the threads that wait for its key, so a rendezvous of n ranks costs
    O(n) wake-ups, not n for every set.

    torch.distributed.HashStore serves as well where torch is installed
    (any store works as store=); this one stays so that the bindings need
    numpy alone, as on nodes and in tests without torch.
    """

    def __init__(self, timeout: float = 300.0) -> None:
        self._d: Dict[str, bytes] = {}
        self._lock = threading.Lock()
        self._waits: Dict[str, threading.Event] = {}     # while the key is missing
        self.timeout = timeout

    def _put(self, key: str, value: bytes) -> None:
        with self._lock:
            self._d[key] = value
            ev = self._waits.pop(key, None)
        if ev is not None:
            ev.set()

    def set(self, key: str, value: Any) -> None:
        self._put(key, value.encode() if isinstance(value, str) else bytes(value))

    def add(self, key: str, n: int) -> int:
        with self._lock:
            v = int(self._d.get(key, b"0")) + n
            self._d[key] = str(v).encode()
            ev = self._waits.pop(key, None)
        if ev is not None:
            ev.set()
        return v

    def get(self, key: str) -> bytes:
        with self._lock:
            if key in self._d:
                return self._d[key]
            ev = self._waits.setdefault(key, threading.Event())
        if not ev.wait(self.timeout):
            raise TimeoutError("DictStore: no key %r after %g s" % (key, self.timeout))
        with self._lock:
            return self._d[key]


class DirStore:
    """A store for ranks that are processes of one host (or of hosts that
    share a file system), without torch: a file per key in @path, written
    whole (a rename), read by a get() that polls until it appears or
    @timeout seconds have passed (TimeoutError). Each job needs an empty
    directory of its own: an earlier job's keys would be read as its."""

    def __init__(self, path: str, timeout: float = 300.0) -> None:
        self.path, self.timeout = path, timeout

    def _f(self, key: str) -> str:
        return os.path.join(self.path, key.replace("/", "_"))

    def set(self, key: str, value: Any) -> None:
        tmp = "%s.%d.%d.tmp" % (self._f(key), os.getpid(), threading.get_ident())
        with open(tmp, "wb") as f:
            f.write(value.encode() if isinstance(value, str) else bytes(value))
        os.rename(tmp, self._f(key))

    def get(self, key: str) -> bytes:
        end = time.monotonic() + self.timeout
        while True:
            try:
                with open(self._f(key), "rb") as f:
                    return f.read()
            except FileNotFoundError:
                if time.monotonic() > end:
                    raise TimeoutError("DirStore: no key %r after %g s"
                                       % (key, self.timeout)) from None
                time.sleep(0.01)


_LIBUV_MISSING = "without libuv"     # torch's error when its default is not built in
_libuv_missing = None


def libuv_missing():
    """Is torch's TCPStore built without the libuv server it uses by default
    (use_libuv=True, torch >= 2.4)? Debian's torch 2.x is, and refuses
    every TCPStore made without use_libuv=False: "use_libuv was requested
    but PyTorch was build without libuv support". Found out once, with a
    throwaway server on a port the kernel chooses; torch 1.13 has neither
    the option nor the server."""
    global _libuv_missing
    if _libuv_missing is None:
        import torch.distributed as dist
        _libuv_missing = False
        if "use_libuv" in (dist.TCPStore.__init__.__doc__ or ""):
            try:
                dist.TCPStore("127.0.0.1", 0, 1, True, wait_for_workers=False,
                              use_libuv=True)
            except RuntimeError as e:
                _libuv_missing = _LIBUV_MISSING in str(e)
    return _libuv_missing


def patch_libuv():
    """Where torch lacks its default libuv TCPStore server (libuv_missing()),
    make this process's stores use the other one: USE_LIBUV=0 (unless set),
    which torch's env:// rendezvous and torchrun's agent store read and
    torchrun's workers inherit, and a TCPStore whose use_libuv defaults to
    False, for the code that passes none (the TCPStore client of a worker
    under torchrun, torchrun's c10d rendezvous). Without it, torchrun and
    init_process_group() under torchrun fail on such a torch whatever the
    backend. The replacement is a subclass, so isinstance() still holds;
    it takes the place of torch.distributed.TCPStore and of the same name
    in the torch.distributed modules imported already. Idempotent; True if
    this torch needs it."""
    import sys
    if not libuv_missing():
        return False
    os.environ.setdefault("USE_LIBUV", "0")
    import torch.distributed as dist
    orig = dist.TCPStore
    if getattr(orig, "_dlcp_no_libuv", False):
        return True

    class TCPStore(orig):
        """torch's TCPStore, without libuv unless asked for."""
        _dlcp_no_libuv = True

        def __init__(self, *args, **kw):
            kw.setdefault("use_libuv", False)
            super().__init__(*args, **kw)

    TCPStore.__qualname__ = "TCPStore"     # dlcp.rendezvous.TCPStore in reprs
    for name, m in list(sys.modules.items()):
        if name.startswith("torch.distributed") and getattr(m, "TCPStore", None) is orig:
            m.TCPStore = TCPStore
    return True


def job_store(store: Any, rank: int, world: int) -> Tuple[Any, Any]:
    """(store, object to keep alive while the group lives)."""
    if store is not None:
        return store, None
    env = os.environ
    try:
        import torch.distributed as dist
    except ImportError:
        raise ConfigError("no store: torch is not importable here; pass store=, or list "
                          "the ranks in DLCP_GROUP_FILE") from None
    if dist.is_available() and dist.is_initialized():
        return dist.distributed_c10d._get_default_store(), None
    host = env.get("MASTER_ADDR")
    if not host:
        raise ConfigError("MASTER_ADDR is not set (the store's host; torchrun sets it)")
    port = env_int("MASTER_PORT")
    if not 0 < port <= 65535:
        raise ConfigError("MASTER_PORT=%d is not a port" % port)
    _resolve(host, "MASTER_ADDR")
    tmo = datetime.timedelta(seconds=rdzv_timeout())
    patch_libuv()
    agent = env.get("TORCHELASTIC_USE_AGENT_STORE") == "True"
    try:
        if agent:   # torchrun: its agent hosts the store, as for c10d
            st = dist.TCPStore(host, port, world, False, tmo)
            return dist.PrefixStore("/worker/attempt_%s" % env.get(
                "TORCHELASTIC_RESTART_COUNT", "0"), st), st
        st = dist.TCPStore(host, port, world, rank == 0, tmo)
    except RuntimeError as e:
        raise ConfigError("MASTER_ADDR=%s MASTER_PORT=%d: %s the store: %s" % (
            host, port, "cannot reach" if agent or rank else "cannot host", e)) from None
    return st, st


_seq: Dict[Tuple[int, int], int] = {}      # stores without add(): (id, rank) -> groups opened
_seq_lock = threading.Lock()


def _text(v):
    return v.decode() if isinstance(v, (bytes, bytearray)) else str(v)


def _get(store, key, timeout):
    """store.get(key), first waiting at most @timeout (a timedelta) when the
    store can wait with a timeout of its own (torch's stores)."""
    if timeout is not None and hasattr(store, "wait"):
        store.wait([key], timeout)
    return store.get(key)


def exchange(store: Any, rank: int, world: int, mine: str, seq: Optional[int] = None,
             timeout: Optional[datetime.timedelta] = None) -> List[str]:
    """Publish @mine ('addr:port'); the list of every rank's, in rank order.

    The groups opened one after the other get keys of their own (the n-th
    group of every rank: a counter per rank in the store), so one store
    serves them all; all ranks must open their groups in the same order.
    @timeout (a datetime.timedelta) bounds each wait when the store has
    wait(keys, timeout) (torch's do); otherwise the store's own timeout.
    """
    if seq is None:
        if hasattr(store, "add"):
            seq = store.add("dlcp/groups/%d" % rank, 1) - 1
        else:
            with _seq_lock:
                seq = _seq.get((id(store), rank), 0)
                _seq[(id(store), rank)] = seq + 1
    base = "dlcp/%d/" % seq
    store.set(base + "addr/%d" % rank, mine)
    if rank == 0:
        addrs = []
        for r in range(world):
            try:
                addrs.append(_text(_get(store, base + "addr/%d" % r, timeout)))
            except (RuntimeError, TimeoutError) as e:
                raise TimeoutError("rendezvous: rank %d of %d never published its address "
                                   "(%s)" % (r, world, e)) from None
        store.set(base + "all", "\n".join(addrs))
        return addrs
    try:
        addrs = _text(_get(store, base + "all", timeout)).split("\n")
    except (RuntimeError, TimeoutError) as e:
        raise TimeoutError("rendezvous: rank 0 never published the group's addresses "
                           "(%s)" % e) from None
    if len(addrs) != world or addrs[rank] != mine:
        raise ConfigError("rendezvous: the store's group (%d ranks, this rank at %s) is not "
                          "this one (WORLD_SIZE=%d, %s): another job on the same store?"
                          % (len(addrs), addrs[rank] if rank < len(addrs) else "-",
                             world, mine))
    return addrs
