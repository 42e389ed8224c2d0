# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""ctypes bindings to libdlcp (userspace/lib/libdlcp.so).

    import dlcp
    g = dlcp.Group.from_env()     # RANK, WORLD_SIZE; rendezvous through the
                                  # job's store (MASTER_ADDR:MASTER_PORT)
    g.allreduce(tensor, tag=3, iteration=it, budget_ppm=50000)
    g.close()

Buffers may be numpy arrays or torch tensors (contiguous, float32 or
int32, CPU); collectives work in place. Errors raise OSError with the errno
libdlcp returned (ETIMEDOUT for a dead rank, ECONNRESET/EPIPE for a
connection that broke, EMSGSIZE/EINVAL for a peer with another
size/dtype); a misconfigured environment raises ConfigError (a
ValueError) naming the variable or address. ctypes releases the GIL
during every call.

Submodules: dlcp.backend (the torch.distributed backend "dlcp":
init_process_group("dlcp")), dlcp.ddp (DDP comm hook), dlcp.dear (DeAR
scheduling), dlcp.rendezvous (how ranks find each other), dlcp.run
(torchrun launcher). Importing dlcp registers the backend when
torch.distributed is imported already; `import dlcp.backend` always does.

The library is found at $DLCP_LIB, else in the package (the libdlcp.so.0
that pip install built into it), else in the source tree
(userspace/lib/libdlcp.so), else in the LIBDIR make install put it into,
else by the loader (libdlcp.so.0).
"""
from __future__ import annotations

import ctypes
import importlib
import os
import socket
import struct
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from dlcp.rendezvous import ConfigError, DictStore, DirStore  # noqa: F401  (re-exported)

TRANSPORT_DLCP = 0
TRANSPORT_TCP = 1

DTYPE_BYTES = 0
DTYPE_FP32 = 1
DTYPE_FP16 = 2
DTYPE_BF16 = 3
DTYPE_INT8 = 4
DTYPE_INT32 = 5

ALGO_RING = 0       # enum dlcp_algo
ALGO_DIRECT = 1
REDUCE_MEAN = 0
REDUCE_SUM = 1
REDUCE_MEAN_ZEROFILL = 2

RECV_EXACT = 0
RECV_LOSSY = 1

# What the collectives take: a numpy array or a torch tensor, contiguous,
# float32 or int32 (float16/bfloat16/int8 where a function says so), on the
# CPU; it is reduced in place.
Buffer = Any
# The counters of one collective (CollStats' fields): messages, bytes,
# elements lost, ...
Stats = Dict[str, int]


def _build_info() -> Tuple[str, Optional[str]]:
    """(version, directory make install put libdlcp into, or None): what
    dlcp/_build.py recorded when the package was built or installed; in
    the source tree, the tree's VERSION file."""
    try:
        b = importlib.import_module("dlcp._build")
        return b.__version__, b.libdir
    except ImportError:
        pass
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        with open(os.path.join(here, "..", "..", "..", "VERSION")) as f:
            return f.read().strip(), None
    except OSError:     # neither built nor in the tree: a copy of the files
        return "unknown", None


__version__, _libdir = _build_info()


def _lib_candidates() -> List[str]:
    """Where libdlcp is looked for, in this order: $DLCP_LIB; the library
    the package carries (pip install); the source tree's; the one make
    install put into its LIBDIR; the loader's libdlcp.so.0."""
    here = os.path.dirname(os.path.abspath(__file__))
    cands = []
    if os.environ.get("DLCP_LIB"):
        cands.append(os.environ["DLCP_LIB"])
    cands.append(os.path.join(here, "libdlcp.so.0"))
    cands.append(os.path.join(here, "..", "..", "lib", "libdlcp.so"))
    if _libdir:
        cands.append(os.path.join(_libdir, "libdlcp.so.0"))
    cands.append("libdlcp.so.0")
    return cands


def _load() -> ctypes.CDLL:
    errs = []
    for c in _lib_candidates():
        try:
            return ctypes.CDLL(c, use_errno=True)
        except OSError as e:
            errs.append(str(e))
    raise OSError("libdlcp not found (pip install ./userspace/python builds the package "
                  "with its own; or make -C userspace/lib, or DLCP_LIB=): %s"
                  % "; ".join(errs))


_lib = _load()


class SockaddrIn(ctypes.Structure):
    _fields_ = [("family", ctypes.c_uint16), ("port", ctypes.c_uint16),
                ("addr", ctypes.c_uint32), ("zero", ctypes.c_uint8 * 8)]

    @classmethod
    def parse(cls, s):
        host, port = s.rsplit(":", 1)
        a = cls()
        a.family = socket.AF_INET
        a.port = socket.htons(int(port))
        a.addr = struct.unpack("=I", socket.inet_aton(host))[0]
        return a

    def __str__(self):
        return "%s:%d" % (socket.inet_ntoa(struct.pack("=I", self.addr)),
                          socket.ntohs(self.port))


class SockaddrStorage(ctypes.Structure):
    """struct sockaddr_storage: an AF_INET or AF_INET6 address."""
    _fields_ = [("family", ctypes.c_uint16), ("data", ctypes.c_uint8 * 126)]

    @classmethod
    def make(cls, host, port):
        """From a numeric address (IPv4 or IPv6, no brackets) and a port."""
        a = cls()
        if ":" in host:
            scope = 0
            if "%" in host:
                host, ifname = host.split("%", 1)
                scope = socket.if_nametoindex(ifname)
            raw = struct.pack("!HI", port, 0) + socket.inet_pton(socket.AF_INET6, host) + \
                struct.pack("=I", scope)
            a.family = socket.AF_INET6
        else:
            raw = struct.pack("!H", port) + socket.inet_pton(socket.AF_INET, host)
            a.family = socket.AF_INET
        ctypes.memmove(a.data, raw, len(raw))
        return a

    @classmethod
    def parse(cls, s):
        """'a.b.c.d:port', '[v6]:port' or 'hostname:port' (resolved)."""
        host, port = split_host_port(s)
        try:
            info = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError) as e:
            raise ConfigError("cannot resolve %r: %s" % (host, e)) from None
        # IPv4 first, as dlcp.rendezvous does: every rank must pick the same
        info = [i for i in info if i[0] in (socket.AF_INET, socket.AF_INET6)]
        if not info:
            raise ConfigError("%r: no IPv4 or IPv6 address" % host)
        info.sort(key=lambda i: i[0] != socket.AF_INET)
        return cls.make(info[0][4][0], port)

    @property
    def host(self):
        b = bytes(self.data)
        if self.family == socket.AF_INET:
            return socket.inet_ntop(socket.AF_INET, b[2:6])
        if self.family == socket.AF_INET6:
            return socket.inet_ntop(socket.AF_INET6, b[6:22])
        return "?"

    @property
    def port(self):
        return struct.unpack("!H", bytes(self.data[:2]))[0]

    def __str__(self):
        if self.family == socket.AF_INET6:
            return "[%s]:%d" % (self.host, self.port)
        return "%s:%d" % (self.host, self.port)


def split_host_port(s: str) -> Tuple[str, int]:
    """'host:port' or '[v6]:port' -> (host, int port); ConfigError if malformed."""
    h, sep, p = s.rpartition(":")
    if not sep or not h or not p.isdigit() or int(p) > 65535:
        raise ConfigError("%r is not host:port ([addr]:port for IPv6)" % s)
    if h.startswith("[") and h.endswith("]"):
        h = h[1:-1]
    elif ":" in h:
        raise ConfigError("%r: an IPv6 address goes in brackets, [addr]:port" % s)
    return h, int(p)


class CollStats(ctypes.Structure):
    _fields_ = [("msgs_sent", ctypes.c_uint64), ("msgs_recv", ctypes.c_uint64),
                ("bytes_sent", ctypes.c_uint64), ("bytes_lost", ctypes.c_uint64),
                ("elems_lost", ctypes.c_uint64), ("elems_fallback", ctypes.c_uint64)]

    def as_dict(self):
        return {f: getattr(self, f) for f, _ in self._fields_}


class CollOpts(ctypes.Structure):
    _fields_ = [("tag", ctypes.c_uint32), ("iteration", ctypes.c_uint32),
                ("layer", ctypes.c_uint16), ("budget_ppm", ctypes.c_uint32),
                ("budget2_ppm", ctypes.c_uint32), ("reduce", ctypes.c_int),
                ("server", ctypes.c_int), ("dedicated_server", ctypes.c_int),
                ("timeout_ms", ctypes.c_int), ("stats", ctypes.POINTER(CollStats)),
                ("algo", ctypes.c_int)]


class Range(ctypes.Structure):
    _fields_ = [("offset", ctypes.c_uint32), ("len", ctypes.c_uint32)]


class TensorMeta(ctypes.Structure):
    _fields_ = [("tensor_id", ctypes.c_uint32), ("iteration", ctypes.c_uint32),
                ("layer", ctypes.c_uint16), ("dtype", ctypes.c_uint8),
                ("flags", ctypes.c_uint16), ("loss_budget_ppm", ctypes.c_uint32),
                ("deadline_ms", ctypes.c_uint32), ("crit", ctypes.POINTER(Range)),
                ("nr_crit", ctypes.c_uint32), ("seg_class", ctypes.POINTER(ctypes.c_uint8)),
                ("nr_seg_class", ctypes.c_uint32)]


class TensorInfo(ctypes.Structure):
    _fields_ = [("src", SockaddrIn), ("tensor_id", ctypes.c_uint32),
                ("iteration", ctypes.c_uint32), ("layer", ctypes.c_uint16),
                ("dtype", ctypes.c_uint8), ("status", ctypes.c_uint8),
                ("flags", ctypes.c_uint16), ("msg_len", ctypes.c_uint32),
                ("bytes_lost", ctypes.c_uint32), ("nr_lost", ctypes.c_uint32)]


_vp = ctypes.c_void_p
_P = ctypes.POINTER


def _sig(name, res, *args):
    f = getattr(_lib, name)
    f.restype = res
    f.argtypes = list(args)
    return f


_group_open = _sig("dlcp_group_open", ctypes.c_int, _P(_vp), ctypes.c_int, ctypes.c_int,
                   _P(SockaddrIn), ctypes.c_int, ctypes.c_int)
_group_open_sa = _sig("dlcp_group_open_sa", ctypes.c_int, _P(_vp), ctypes.c_int,
                      ctypes.c_int, _P(SockaddrStorage), ctypes.c_int, ctypes.c_int)
_group_open_ep = _sig("dlcp_group_open_ep", ctypes.c_int, _P(_vp), _vp, ctypes.c_int,
                      ctypes.c_int, _P(SockaddrStorage), ctypes.c_int)
_group_open_env = _sig("dlcp_group_open_env", ctypes.c_int, _P(_vp), ctypes.c_int,
                       ctypes.c_int, ctypes.c_int)
_group_open_file = _sig("dlcp_group_open_file", ctypes.c_int, _P(_vp), ctypes.c_char_p,
                        ctypes.c_int, ctypes.c_int, ctypes.c_int)
_group_addr = _sig("dlcp_group_addr", ctypes.c_int, _vp, ctypes.c_int,
                   _P(SockaddrStorage))
_ep_open_sa = _sig("dlcp_ep_open_sa", ctypes.c_int, _P(_vp), _P(SockaddrStorage),
                   ctypes.c_uint32, ctypes.c_int)
_ep_addr_sa = _sig("dlcp_ep_addr_sa", ctypes.c_int, _vp, _P(SockaddrStorage))
_ep_close = _sig("dlcp_ep_close", ctypes.c_int, _vp, ctypes.c_int)
_group_close = _sig("dlcp_group_close", ctypes.c_int, _vp, ctypes.c_int)
_group_rank = _sig("dlcp_group_rank", ctypes.c_int, _vp)
_group_world = _sig("dlcp_group_world", ctypes.c_int, _vp)
_group_ep = _sig("dlcp_group_ep", _vp, _vp)
_allreduce = _sig("dlcp_allreduce", ctypes.c_int, _vp, _vp, ctypes.c_size_t, ctypes.c_int,
                  _P(CollOpts))
_reduce_scatter = _sig("dlcp_reduce_scatter", ctypes.c_int, _vp, _vp, ctypes.c_size_t,
                       ctypes.c_int, _P(CollOpts))
_all_gather = _sig("dlcp_all_gather", ctypes.c_int, _vp, _vp, ctypes.c_size_t, ctypes.c_int,
                   _P(CollOpts))
_ps = _sig("dlcp_ps_push_pull", ctypes.c_int, _vp, _vp, _vp, ctypes.c_size_t, ctypes.c_int,
           _P(CollOpts))
_barrier = _sig("dlcp_barrier", ctypes.c_int, _vp, ctypes.c_uint32, ctypes.c_int)
_reduce = _sig("dlcp_reduce", ctypes.c_int, _vp, _vp, ctypes.c_size_t, ctypes.c_int,
               ctypes.c_int, _P(CollOpts))
_gather = _sig("dlcp_gather", ctypes.c_int, _vp, _vp, _vp, ctypes.c_size_t, ctypes.c_int,
               ctypes.c_int, _P(CollOpts))
_scatter = _sig("dlcp_scatter", ctypes.c_int, _vp, _vp, _vp, ctypes.c_size_t, ctypes.c_int,
                ctypes.c_int, _P(CollOpts))
_SizeP = _P(ctypes.c_size_t)
_all_to_allv = _sig("dlcp_all_to_allv", ctypes.c_int, _vp, _vp, _SizeP, _SizeP, _vp, _SizeP,
                    _SizeP, ctypes.c_int, _P(CollOpts))
_chunk_range = _sig("dlcp_chunk_range", None, ctypes.c_size_t, ctypes.c_uint, ctypes.c_uint,
                    _P(ctypes.c_size_t), _P(ctypes.c_size_t))
_seg_classes = _sig("dlcp_seg_classes", ctypes.c_long, _vp, ctypes.c_size_t, ctypes.c_int,
                    ctypes.c_size_t, ctypes.c_double, _P(ctypes.c_uint8), ctypes.c_size_t)


class IoVec(ctypes.Structure):
    _fields_ = [("base", _vp), ("len", ctypes.c_size_t)]


_send_tensorv_sa = _sig("dlcp_send_tensorv_sa", ctypes.c_int, _vp, _P(SockaddrStorage),
                        ctypes.c_uint32, _P(IoVec), ctypes.c_int, _P(TensorMeta))
_recv_tensor_sa = _sig("dlcp_recv_tensor_sa", ctypes.c_long, _vp, _P(_vp), _P(TensorInfo),
                       _P(_P(Range)), ctypes.c_int, _P(SockaddrStorage))
_libc = ctypes.CDLL(None)
_libc.free.argtypes = [_vp]


def _check(rc, what):
    if rc < 0:
        raise OSError(-rc, "%s: %s" % (what, os.strerror(-rc)))
    return rc


def _buf(t):
    """(pointer, element count, dtype) of a contiguous numpy array or torch tensor."""
    mod = type(t).__module__
    if mod.startswith("torch"):
        if t.device.type != "cpu" or not t.is_contiguous():
            raise ValueError("need a contiguous CPU tensor")
        name = str(t.dtype)
        ptr, n = t.data_ptr(), t.numel()
    else:
        if not t.flags["C_CONTIGUOUS"] or not t.flags["WRITEABLE"]:
            raise ValueError("need a contiguous writeable array")
        name = str(t.dtype)
        ptr, n = t.ctypes.data, t.size
    if name.endswith("float32"):
        return ptr, n, DTYPE_FP32
    if name.endswith("int32"):
        return ptr, n, DTYPE_INT32
    raise ValueError("unsupported dtype %s (float32 or int32)" % name)


# the library's dtypes of the collectives that move elements (any other
# dtype travels as its bytes)
_MOVE_DTYPES = (("float32", DTYPE_FP32), ("int32", DTYPE_INT32), ("float16", DTYPE_FP16),
                ("bfloat16", DTYPE_BF16), ("int8", DTYPE_INT8))


def _move_buf(t):
    """(pointer, elements, dtype, library elements per element) of a
    contiguous numpy array or CPU torch tensor of any dtype."""
    mod = type(t).__module__
    if mod.startswith("torch"):
        if t.device.type != "cpu" or not t.is_contiguous():
            raise ValueError("need a contiguous CPU tensor")
        ptr, n, size = t.data_ptr(), t.numel(), t.element_size()
    else:
        if not t.flags["C_CONTIGUOUS"] or not t.flags["WRITEABLE"]:
            raise ValueError("need a contiguous writeable array")
        ptr, n, size = t.ctypes.data, t.size, t.itemsize
    name = str(t.dtype)
    for suffix, dt in _MOVE_DTYPES:
        if name.endswith(suffix) and not name.endswith("uint8"):
            return ptr, n, dt, 1
    return ptr, n * size, DTYPE_BYTES, size


def _sizes(v, scale):
    return None if v is None else (ctypes.c_size_t * len(v))(*[int(x) * scale for x in v])


def chunk_range(n: int, world: int, i: int) -> Tuple[int, int]:
    """(offset, length) of rank @i's chunk of @n elements split @world ways."""
    off, ln = ctypes.c_size_t(), ctypes.c_size_t()
    _chunk_range(n, world, i, ctypes.byref(off), ctypes.byref(ln))
    return off.value, ln.value


def seg_classes(t: Buffer, seg_size: int, top_fraction: float,
                dtype: Optional[int] = None) -> bytes:
    """Per-segment magnitude classes (0 important, 1 droppable) as a bytes object."""
    ptr, n, dt = _buf(t)
    if dtype is not None:
        dt = dtype
    esz = {DTYPE_FP32: 4, DTYPE_FP16: 2, DTYPE_BF16: 2}.get(dt, 4)
    nbytes = n * 4 if dtype is None else n * esz
    nseg = (nbytes + seg_size - 1) // max(1, seg_size - seg_size % esz) + 1
    out = (ctypes.c_uint8 * max(1, nseg))()
    k = _check(_seg_classes(ptr, nbytes, dt, seg_size, top_fraction, out, nseg),
               "dlcp_seg_classes")
    return bytes(out[:k])


GROUP_MAX = 4096     # DLCP_GROUP_MAX


def _open_ep(addr, transport, why):
    """An endpoint bound to @addr (a SockaddrStorage): (handle, bound address)."""
    ep = _vp()
    rc = _ep_open_sa(ctypes.byref(ep), ctypes.byref(addr), ctypes.sizeof(addr), transport)
    if rc == -99:   # EADDRNOTAVAIL
        raise ConfigError("%s: %s is not an address of this host" % (why, addr.host))
    if rc == -98:   # EADDRINUSE
        raise ConfigError("%s: port %d is in use (DLCP_PORT)" % (why, addr.port))
    if transport == TRANSPORT_DLCP and rc in (-93, -94, -97):
        raise OSError(-rc, "DLCP sockets: %s (is the dlcp module loaded? "
                      "DLCP_TRANSPORT=tcp selects TCP)" % os.strerror(-rc))
    _check(rc, "dlcp_ep_open %s" % addr)
    bound = SockaddrStorage()
    rc = _ep_addr_sa(ep, ctypes.byref(bound))
    if rc < 0:
        _ep_close(ep, 0)
        _check(rc, "dlcp_ep_addr_sa")
    return ep, bound


# ---------------------------------------------------------------------------
# Homomorphic quantized collectives (libdlcp quant.c / qcoll.c)

class QuantOpts(ctypes.Structure):
    _fields_ = [("bits", ctypes.c_int), ("hadamard", ctypes.c_int), ("seed", ctypes.c_uint32),
                ("fit", ctypes.c_int)]


_allreduce_q = _sig("dlcp_allreduce_q", ctypes.c_int, _vp, _vp, ctypes.c_size_t,
                    _P(CollOpts), _P(QuantOpts))
_ps_q = _sig("dlcp_ps_push_pull_q", ctypes.c_int, _vp, _vp, _vp, ctypes.c_size_t,
             _P(CollOpts), _P(QuantOpts))
_reduce_scatter_q = _sig("dlcp_reduce_scatter_q", ctypes.c_int, _vp, _vp, ctypes.c_size_t,
                         _P(CollOpts), _P(QuantOpts), _vp)
_all_gather_q = _sig("dlcp_all_gather_q", ctypes.c_int, _vp, _vp, ctypes.c_size_t,
                     _P(CollOpts), _vp)
_qstate_alloc = _sig("dlcp_qstate_alloc", ctypes.c_int, _P(_vp))
_qstate_free = _sig("dlcp_qstate_free", None, _vp)


class QState:
    """State of one quantized tensor between reduce_scatter_q and all_gather_q."""

    def __init__(self):
        self._p = _vp()
        _check(_qstate_alloc(ctypes.byref(self._p)), "dlcp_qstate_alloc")

    def __del__(self):
        if getattr(self, "_p", None):
            _qstate_free(self._p)
            self._p = None


def _qopts(bits, hadamard, seed, fit=False):
    q = QuantOpts()
    q.bits, q.hadamard, q.seed = bits, int(bool(hadamard)), seed & 0xffffffff
    q.fit = int(bool(fit))
    return q


def _fp32(t):
    ptr, n, dt = _buf(t)
    if dt != DTYPE_FP32:
        raise ValueError("quantized collectives need float32")
    return ptr, n


class Group:
    """One rank of a DLCP (or TCP) group; see libdlcp.h for the semantics.

    Group(rank, addrs): rank r binds addrs[r] ('a.b.c.d:port', '[v6]:port'
    or 'host:port'; port 0 in this rank's own entry: any). Usually
    Group.from_env() instead, which finds the other ranks by itself.
    timeout_ms 0: $DLCP_TIMEOUT seconds, else 30 s.
    """

    def __init__(self, rank: int, addrs: Sequence[str], transport: int = TRANSPORT_DLCP,
                 timeout_ms: int = 0) -> None:
        arr = (SockaddrStorage * len(addrs))(*[SockaddrStorage.parse(a) for a in addrs])
        self._g = _vp()
        self._store = None
        _check(_group_open_sa(ctypes.byref(self._g), rank, len(addrs), arr, transport,
                              timeout_ms), "dlcp_group_open")

    @classmethod
    def _on_ep(cls, ep, rank, addrs, timeout_ms):
        self = cls.__new__(cls)
        self._g = _vp()
        self._store = None
        arr = (SockaddrStorage * len(addrs))(*addrs)
        rc = _group_open_ep(ctypes.byref(self._g), ep, rank, len(addrs), arr, timeout_ms)
        if rc < 0:
            _ep_close(ep, 0)
            _check(rc, "dlcp_group_open_ep")
        return self

    @classmethod
    def from_env(cls, base_port: int = 0, transport: int = -1, timeout_ms: int = 0,
                 store: Any = None, addr: Optional[str] = None, rank: Optional[int] = None,
                 world_size: Optional[int] = None) -> "Group":
        """Rank @rank (default $RANK) of @world_size ($WORLD_SIZE) ranks.

        The ranks find each other through a store (torch.distributed's or
        anything with set(key, value) and a blocking get(key)): @store, else
        the default process group's when torch.distributed is initialised,
        else a TCPStore at $MASTER_ADDR:$MASTER_PORT (the torchrun agent's
        under torchrun; otherwise rank 0 hosts it). Each rank binds @addr
        ($DLCP_ADDR, else the address of $DLCP_IFNAME, else the local
        address that routes to $MASTER_ADDR), port $DLCP_PORT + $LOCAL_RANK
        if DLCP_PORT is set, else one the kernel chooses, and publishes it.

        Explicit address lists instead: $DLCP_GROUP_FILE (one addr:port per
        rank), or the fixed plans DLCP_SAME_HOST=1 (127.0.0.1:base_port+r)
        and DLCP_ADDR_PLAN=10.77 (10.77.0.(r+1):base_port), base_port 0
        reading $DLCP_BASE_PORT (default 29600).

        @transport < 0: $DLCP_TRANSPORT ('tcp' or 'dlcp', default dlcp).
        Misconfiguration raises ConfigError naming the variable or address.
        """
        from dlcp import rendezvous as rdzv
        env = os.environ
        if rank is None:
            rank = rdzv.env_int("RANK")
        if world_size is None:
            world_size = rdzv.env_int("WORLD_SIZE")
        if not 1 <= world_size <= GROUP_MAX:
            raise ConfigError("WORLD_SIZE=%d: must be 1..%d" % (world_size, GROUP_MAX))
        if not 0 <= rank < world_size:
            raise ConfigError("RANK=%d: must be 0..WORLD_SIZE-1 (WORLD_SIZE=%d)"
                              % (rank, world_size))
        if transport < 0:
            tr = env.get("DLCP_TRANSPORT", "dlcp") or "dlcp"
            if tr not in ("dlcp", "tcp"):
                raise ConfigError("DLCP_TRANSPORT=%r: 'dlcp' or 'tcp'" % tr)
            transport = TRANSPORT_TCP if tr == "tcp" else TRANSPORT_DLCP
        gfile = env.get("DLCP_GROUP_FILE")
        if gfile:
            self = cls.__new__(cls)
            self._g = _vp()
            self._store = None
            rc = _group_open_file(ctypes.byref(self._g), gfile.encode(), rank, transport,
                                  timeout_ms)
            if rc == -22:
                raise ConfigError("DLCP_GROUP_FILE=%s: a bad line, or RANK=%d not in it"
                                  % (gfile, rank))
            _check(rc, "dlcp_group_open_file %s" % gfile)
            return self
        if env.get("DLCP_SAME_HOST") == "1" or env.get("DLCP_ADDR_PLAN"):
            if env.get("DLCP_ADDR_PLAN", "10.77") != "10.77":
                raise ConfigError("DLCP_ADDR_PLAN=%r: the only plan is 10.77"
                                  % env["DLCP_ADDR_PLAN"])
            self = cls.__new__(cls)
            self._g = _vp()
            self._store = None
            if store is not None or addr is not None:
                raise ConfigError("DLCP_SAME_HOST / DLCP_ADDR_PLAN fix the addresses: "
                                  "no store or addr with them")
            _check(_group_open_env(ctypes.byref(self._g), base_port, transport, timeout_ms),
                   "dlcp_group_open_env")
            return self
        host, why = rdzv.local_address(addr)
        port = rdzv.local_port()
        ep, bound = _open_ep(SockaddrStorage.make(host, port), transport, why)
        try:
            st, keep = rdzv.job_store(store, rank, world_size)
            peers = rdzv.exchange(st, rank, world_size, str(bound))
            addrs = [SockaddrStorage.parse(p) for p in peers]
        except BaseException:
            _ep_close(ep, 0)
            raise
        fams = {a.family for a in addrs}
        if len(fams) != 1:
            _ep_close(ep, 0)
            raise ConfigError("ranks published addresses of both families (%s, ...): set "
                              "DLCP_ADDR or DLCP_IFNAME so that all use IPv4 or all IPv6"
                              % ", ".join(peers[:4]))
        self = cls._on_ep(ep, rank, addrs, timeout_ms)
        self._store = keep      # a TCPStore this rank hosts lives as long
        return self

    def addr(self, r: int) -> str:
        """Address of rank @r as 'a.b.c.d:port' or '[v6]:port'."""
        a = SockaddrStorage()
        _check(_group_addr(self._g, r, ctypes.byref(a)), "dlcp_group_addr")
        return str(a)

    @property
    def rank(self) -> int:
        """This rank's index in the group."""
        return _group_rank(self._g)

    @property
    def world(self) -> int:
        """The number of ranks."""
        return _group_world(self._g)

    def close(self, linger_ms: int = -1) -> None:
        """Close the group; @linger_ms as SO_LINGER (-1: the default wait)."""
        if self._g:
            g, self._g = self._g, _vp()
            self._store = None
            _check(_group_close(g, linger_ms), "dlcp_group_close")

    def __enter__(self) -> "Group":
        return self

    def __exit__(self, *a: Any) -> None:
        self.close()

    def _opts(self, tag, iteration, layer, budget_ppm, budget2_ppm, reduce, server,
              dedicated_server, timeout_ms, stats, algo=ALGO_RING):
        o = CollOpts()
        o.algo = algo
        o.tag, o.iteration, o.layer = tag, iteration & 0xffffffff, layer
        o.budget_ppm = budget_ppm
        o.budget2_ppm = budget_ppm if budget2_ppm is None else budget2_ppm
        o.reduce, o.server, o.dedicated_server = reduce, server, int(dedicated_server)
        o.timeout_ms = timeout_ms
        if stats is not None:
            o.stats = ctypes.pointer(stats)
        return o

    def _coll(self, fn, name, t, kw):
        stats = CollStats()
        o = self._opts(stats=stats, **kw)
        ptr, n, dt = _buf(t)
        _check(fn(self._g, ptr, n, dt, ctypes.byref(o)), name)
        return stats.as_dict()

    def allreduce(self, t: Buffer, tag: int = 0, iteration: int = 0, layer: int = 0,
                  budget_ppm: int = 0, budget2_ppm: Optional[int] = None,
                  reduce: int = REDUCE_MEAN, timeout_ms: int = 0,
                  algo: int = ALGO_RING) -> Stats:
        """All-reduce in place (ring or direct); returns the stats dict."""
        return self._coll(_allreduce, "dlcp_allreduce", t, dict(
            tag=tag, iteration=iteration, layer=layer, budget_ppm=budget_ppm,
            budget2_ppm=budget2_ppm, reduce=reduce, server=0, dedicated_server=0,
            timeout_ms=timeout_ms, algo=algo))

    def reduce_scatter(self, t: Buffer, tag: int = 0, iteration: int = 0, layer: int = 0,
                       budget_ppm: int = 0, reduce: int = REDUCE_MEAN, timeout_ms: int = 0,
                       algo: int = ALGO_RING) -> Stats:
        """Reduce-scatter in place: this rank's chunk (chunk_range()) is reduced."""
        return self._coll(_reduce_scatter, "dlcp_reduce_scatter", t, dict(
            tag=tag, iteration=iteration, layer=layer, budget_ppm=budget_ppm,
            budget2_ppm=None, reduce=reduce, server=0, dedicated_server=0,
            timeout_ms=timeout_ms, algo=algo))

    def all_gather(self, t: Buffer, tag: int = 0, iteration: int = 0, layer: int = 0,
                   budget_ppm: int = 0, timeout_ms: int = 0, algo: int = ALGO_RING) -> Stats:
        """All-gather in place: every rank's chunk (chunk_range()) to every rank."""
        return self._coll(_all_gather, "dlcp_all_gather", t, dict(
            tag=tag, iteration=iteration, layer=layer, budget_ppm=0,
            budget2_ppm=budget_ppm, reduce=REDUCE_MEAN, server=0, dedicated_server=0,
            timeout_ms=timeout_ms, algo=algo))

    def ps_push_pull(self, send: Optional[Buffer],
                     recv: Union[Buffer, Tuple[int, int], None] = None, tag: int = 0,
                     iteration: int = 0, layer: int = 0, budget_ppm: int = 0,
                     budget2_ppm: Optional[int] = None, reduce: int = REDUCE_MEAN,
                     server: int = 0, dedicated_server: bool = False,
                     timeout_ms: int = 0) -> Stats:
        """Parameter server; recv (default: send) keeps its old values where lost."""
        stats = CollStats()
        o = self._opts(tag, iteration, layer, budget_ppm, budget2_ppm, reduce, server,
                       dedicated_server, timeout_ms, stats)
        if send is None:
            sp = rp = None
            n, dt = recv if isinstance(recv, tuple) else (0, DTYPE_FP32)
        else:
            sp, n, dt = _buf(send)
            rp = _buf(recv if recv is not None else send)[0]
        _check(_ps(self._g, sp, rp, n, dt, ctypes.byref(o)), "dlcp_ps_push_pull")
        return stats.as_dict()

    def barrier(self, iteration: int = 0, timeout_ms: int = 0) -> None:
        """Return once every rank has entered the barrier of @iteration."""
        _check(_barrier(self._g, iteration, timeout_ms), "dlcp_barrier")

    def reduce(self, t: Buffer, root: int = 0, tag: int = 0, iteration: int = 0,
               layer: int = 0, budget_ppm: int = 0, budget2_ppm: Optional[int] = None,
               reduce: int = REDUCE_MEAN, timeout_ms: int = 0, algo: int = ALGO_RING) -> Stats:
        """Reduce to @root in place: only @root's @t gets the result
        (budget_ppm: the reduce-scatter, budget2_ppm: the chunks' way to
        the root)."""
        stats = CollStats()
        o = self._opts(tag, iteration, layer, budget_ppm, budget2_ppm, reduce, 0, 0,
                       timeout_ms, stats, algo)
        ptr, n, dt = _buf(t)
        _check(_reduce(self._g, ptr, n, dt, root, ctypes.byref(o)), "dlcp_reduce")
        return stats.as_dict()

    def _move_opts(self, tag, iteration, layer, budget_ppm, timeout_ms):
        stats = CollStats()
        return self._opts(tag, iteration, layer, budget_ppm, 0, REDUCE_MEAN, 0, 0,
                          timeout_ms, stats), stats

    def gather(self, send: Buffer, recv: Optional[Buffer] = None, root: int = 0,
               tag: int = 0, iteration: int = 0, layer: int = 0, budget_ppm: int = 0,
               timeout_ms: int = 0) -> Stats:
        """@root's @recv (world times @send's elements, any dtype) <- every
        rank's @send in rank order; exact unless @budget_ppm (an element
        lost keeps @recv's value). @recv: None on the other ranks."""
        o, stats = self._move_opts(tag, iteration, layer, budget_ppm, timeout_ms)
        sp, n, dt, _ = _move_buf(send)
        rp = _move_buf(recv)[0] if recv is not None else None
        _check(_gather(self._g, sp, rp, n, dt, root, ctypes.byref(o)), "dlcp_gather")
        return stats.as_dict()

    def scatter(self, send: Optional[Buffer], recv: Buffer, root: int = 0, tag: int = 0,
                iteration: int = 0, layer: int = 0, budget_ppm: int = 0,
                timeout_ms: int = 0) -> Stats:
        """Every rank's @recv <- its part (rank r: the r-th @recv-sized part)
        of @root's @send (None on the other ranks); exact unless @budget_ppm."""
        o, stats = self._move_opts(tag, iteration, layer, budget_ppm, timeout_ms)
        rp, n, dt, _ = _move_buf(recv)
        sp = _move_buf(send)[0] if send is not None else None
        _check(_scatter(self._g, sp, rp, n, dt, root, ctypes.byref(o)), "dlcp_scatter")
        return stats.as_dict()

    def all_to_all(self, send: Buffer, recv: Buffer, scounts: Optional[Sequence[int]] = None,
                   rcounts: Optional[Sequence[int]] = None,
                   sdispls: Optional[Sequence[int]] = None,
                   rdispls: Optional[Sequence[int]] = None, tag: int = 0, iteration: int = 0,
                   layer: int = 0, budget_ppm: int = 0, timeout_ms: int = 0) -> Stats:
        """All-to-all of any dtype: @scounts[p] elements of @send from
        @sdispls[p] to rank p, @rcounts[p] from rank p into @recv at
        @rdispls[p] (displacements None: packed in rank order; counts None:
        equal parts of the whole buffer). Exact unless @budget_ppm."""
        o, stats = self._move_opts(tag, iteration, layer, budget_ppm, timeout_ms)
        sp, sn, dt, scale = _move_buf(send)
        rp, rn, rdt, _ = _move_buf(recv)
        if rdt != dt:
            raise ValueError("all_to_all: send and recv of different dtypes")
        w = self.world
        if scounts is None:
            scounts = [sn // scale // w] * w
        if rcounts is None:
            rcounts = [rn // scale // w] * w
        if len(scounts) != w or len(rcounts) != w or \
                any(len(d) != w for d in (sdispls, rdispls) if d is not None):
            raise ValueError("all_to_all: counts and displacements need %d entries each" % w)
        _check(_all_to_allv(self._g, sp, _sizes(scounts, scale), _sizes(sdispls, scale), rp,
                            _sizes(rcounts, scale), _sizes(rdispls, scale), dt,
                            ctypes.byref(o)), "dlcp_all_to_allv")
        return stats.as_dict()

    # point to point on the group's endpoint
    def send(self, dst_addr: str, t: Buffer, tensor_id: int = 0, iteration: int = 0,
             layer: int = 0, budget_ppm: int = 0) -> None:
        """Send @t to @dst_addr ('a.b.c.d:port', '[v6]:port', 'host:port')."""
        ptr, n, dt = _buf(t)
        m = TensorMeta()
        m.tensor_id, m.iteration, m.layer, m.dtype = tensor_id, iteration, layer, dt
        m.loss_budget_ppm = budget_ppm
        a = SockaddrStorage.parse(dst_addr)
        iov = IoVec(ptr, n * 4)
        _check(_send_tensorv_sa(_group_ep(self._g), ctypes.byref(a), ctypes.sizeof(a),
                                ctypes.byref(iov), 1, ctypes.byref(m)), "dlcp_send_tensor")

    def recv(self, timeout_ms: int = -1
             ) -> Tuple[bytes, Dict[str, Any], List[Tuple[int, int]]]:
        """One message: (bytes, info dict, [(offset, len) lost ranges])."""
        buf = _vp()
        info = TensorInfo()
        lost = _P(Range)()
        src = SockaddrStorage()
        n = _check(_recv_tensor_sa(_group_ep(self._g), ctypes.byref(buf), ctypes.byref(info),
                                   ctypes.byref(lost), timeout_ms, ctypes.byref(src)),
                   "dlcp_recv_tensor")
        try:
            data = ctypes.string_at(buf, n)
            ranges = [(lost[i].offset, lost[i].len) for i in range(info.nr_lost)] \
                if lost else []
        finally:
            _libc.free(buf)
            _libc.free(ctypes.cast(lost, _vp))
        d = {f: getattr(info, f) for f, _ in TensorInfo._fields_ if f != "src"}
        d["src"] = str(src)
        return data, d, ranges

    # quantized collectives (libdlcp quant.c, qcoll.c)

    def allreduce_q(self, t: Buffer, bits: int = 8, hadamard: bool = False,
                    seed: int = 0, fit: bool = False, tag: int = 0, iteration: int = 0,
                    layer: int = 0, budget_ppm: int = 0, budget2_ppm: Optional[int] = None,
                    reduce: int = REDUCE_MEAN, timeout_ms: int = 0) -> Stats:
        """Quantized ring all-reduce in place (bits 4 or 8); returns the stats dict."""
        stats = CollStats()
        o = self._opts(tag, iteration, layer, budget_ppm, budget2_ppm, reduce, 0, 0,
                       timeout_ms, stats)
        ptr, n = _fp32(t)
        q = _qopts(bits, hadamard, seed, fit)
        _check(_allreduce_q(self._g, ptr, n, ctypes.byref(o), ctypes.byref(q)),
               "dlcp_allreduce_q")
        return stats.as_dict()

    def ps_push_pull_q(self, send: Optional[Buffer],
                       recv: Union[Buffer, Tuple[int, int], None] = None, bits: int = 8,
                       hadamard: bool = False, seed: int = 0, fit: bool = False, tag: int = 0,
                       iteration: int = 0, layer: int = 0, budget_ppm: int = 0,
                       budget2_ppm: Optional[int] = None, reduce: int = REDUCE_MEAN,
                       server: int = 0, dedicated_server: bool = False,
                       timeout_ms: int = 0) -> Stats:
        """Parameter server with quantized pushes and pulls (float32)."""
        stats = CollStats()
        o = self._opts(tag, iteration, layer, budget_ppm, budget2_ppm, reduce, server,
                       dedicated_server, timeout_ms, stats)
        q = _qopts(bits, hadamard, seed, fit)
        if send is None:
            sp = rp = None
            n = recv[0] if isinstance(recv, tuple) else 0
        else:
            sp, n = _fp32(send)
            rp = _fp32(recv if recv is not None else send)[0]
        _check(_ps_q(self._g, sp, rp, n, ctypes.byref(o), ctypes.byref(q)),
               "dlcp_ps_push_pull_q")
        return stats.as_dict()

    def reduce_scatter_q(self, t: Buffer, qstate: QState, bits: int = 8,
                         hadamard: bool = False, seed: int = 0, fit: bool = False,
                         tag: int = 0, iteration: int = 0, layer: int = 0,
                         budget_ppm: int = 0, reduce: int = REDUCE_MEAN,
                         timeout_ms: int = 0) -> Stats:
        """Quantized reduce-scatter in place; @qstate keeps the scales for
        all_gather_q()."""
        stats = CollStats()
        o = self._opts(tag, iteration, layer, budget_ppm, None, reduce, 0, 0, timeout_ms,
                       stats)
        ptr, n = _fp32(t)
        q = _qopts(bits, hadamard, seed, fit)
        _check(_reduce_scatter_q(self._g, ptr, n, ctypes.byref(o), ctypes.byref(q),
                                 qstate._p), "dlcp_reduce_scatter_q")
        return stats.as_dict()

    def all_gather_q(self, t: Buffer, qstate: QState, tag: int = 0,
                     iteration: int = 0, layer: int = 0, budget_ppm: int = 0,
                     timeout_ms: int = 0) -> Stats:
        """Quantized all-gather in place, with the scales of reduce_scatter_q()."""
        stats = CollStats()
        o = self._opts(tag, iteration, layer, 0, budget_ppm, REDUCE_MEAN, 0, 0, timeout_ms,
                       stats)
        ptr, n = _fp32(t)
        _check(_all_gather_q(self._g, ptr, n, ctypes.byref(o), qstate._p),
               "dlcp_all_gather_q")
        return stats.as_dict()


def _register_backend():
    """Register the torch.distributed backend if torch.distributed is loaded
    (without importing torch, which the bindings do not need)."""
    import sys
    d = sys.modules.get("torch.distributed")
    if d is not None and getattr(d, "is_available", lambda: False)():
        import dlcp.backend  # noqa: F401  (registers "dlcp")


_register_backend()
