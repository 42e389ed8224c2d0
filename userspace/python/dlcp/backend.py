# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""A torch.distributed backend over libdlcp: init_process_group("dlcp").

    import torch.distributed as dist
    import dlcp.backend                      # registers "dlcp"

    dist.init_process_group("dlcp")          # under torchrun (env://): exact
    model = DistributedDataParallel(net)     # no comm hook: exact gradients

    # or lossy gradients: a group of their own with a loss budget (ppm)
    # for their reduce-scatter; the default group (metrics, SyncBatchNorm,
    # gradient-norm clipping) stays exact
    lossy = dist.new_group(backend="dlcp", pg_options={"budget_ppm": 50000})
    model = DistributedDataParallel(net, process_group=lossy)

    # one call with a budget, on any dlcp group:
    with dlcp.backend.lossy(None, budget_ppm=50000):   # None: the default group
        dist.all_reduce(t)

The process group is a Python subclass of torch.distributed.ProcessGroup
(torch calls its methods through the pybind trampoline it ships for
that), registered with Backend.register_backend(extended_api=True), so
the creator gets the group's store, rank, size, timeout and the
pg_options of init_process_group() / new_group(). It needs no compiled
extension, and the same code runs on torch 1.13 and 2.x; see
docs/torch-backend.md for why, and for what differs between them.

Operations and how they map onto libdlcp:

  all_reduce      SUM, AVG on float32 / int32: dlcp_allreduce (ring or
                  direct), with the loss budgets on float tensors; float16
                  and bfloat16 travel as float32. SUM is the library's
                  REDUCE_SUM (the sum scaled by N / contributions that
                  arrived: an unbiased estimate of the sum; DDP divides the
                  gradients by N first, so the result is the mean over what
                  arrived), AVG its REDUCE_MEAN. Other dtypes (float64,
                  int64, bool, ...) and MIN, MAX, PRODUCT, BAND, BOR, BXOR:
                  an exact all-gather of every rank's tensor, reduced
                  locally in the tensor's dtype, in rank order.
  reduce_scatter  dlcp_reduce_scatter on the concatenated inputs (same
                  rules; other dtypes and ops through the exact path).
  all_gather      dlcp_all_gather of the raw bytes (int32 words), exact.
  broadcast       dlcp_allreduce (SUM, int32 words, exact) of the raw
                  bytes, every rank but the root contributing zeros.
  barrier         dlcp_barrier.
  reduce          dlcp_reduce (the all_reduce's reduce-scatter, then each
                  rank's chunk to the root) for SUM, AVG of float32 / int32,
                  with the all_reduce's budgets; other dtypes and ops: an
                  exact dlcp_gather to the root, reduced there.
  gather, scatter dlcp_gather, dlcp_scatter of the raw bytes, exact.
  all_to_all, all_to_all_single
                  dlcp_all_to_allv of the raw bytes (uneven parts too),
                  exact, in its shifted schedule (no incast).
  send / recv     two endpoints of their own per rank (one sends, one
                  receives), one exact message per send; a receiver thread
                  matches messages to recv() calls by (source, tag, order);
                  recv() from any source takes the next message of the tag
                  from any rank.

Every collective runs on one worker thread per group, in the order the
ranks issue them, and returns a Work whose future completes with the
tensors. A collective fails (Work.wait() raises, the future holds the
error) when a rank does not take part within the group's timeout (the
timeout of init_process_group / new_group, or the options' timeout of
the call), and so does a recv() with no matching send.

CUDA tensors are staged through pinned host memory: the copy to the host
runs on a side stream of the tensor's device, after an event recorded on
the caller's current stream when the operation was issued (so it waits
for the kernels that produced the tensor and overlaps with later ones),
and the result is copied back on that stream before the Work completes.

Options (pg_options: a dict or an Options; an unknown name is an error):

  budget_ppm    loss budget of the reduce-scatter half of all_reduce, of
                reduce_scatter and of reduce, float tensors with SUM or
                AVG only (default 0: exact)
  budget2_ppm   loss budget of the all-gather half of all_reduce and of
                reduce's way to the root (default 0: exact); an element
                lost there keeps this rank's own value, so replicas may
                drift apart
  algo          "ring" or "direct" (default $DLCP_ALGO, else "ring")
  transport     "dlcp" or "tcp" (default $DLCP_TRANSPORT, else "dlcp")

A group is lossy only where its pg_options give it a budget, and a call
only where that group's budget or a lossy() block around it does; every
other operation (broadcast, all_gather, gather, scatter, the all-to-alls,
barrier, send / recv, the object collectives on top of them) and every
integer tensor and op but SUM and AVG is exact on any group. The
environment's DLCP_BUDGET_PPM and DLCP_BUDGET2_PPM are no budget of any
group: set, they make the first group warn (once) that it is exact.
pg.stats["lossy_calls"] counts the group's libdlcp calls that carried a
budget.

The endpoints bind the address dlcp.Group.from_env() would (DLCP_ADDR,
DLCP_IFNAME, else the route to MASTER_ADDR) on ports the kernel chooses,
and the ranks publish them in the group's store.

A failed operation raises DlcpError, a torch.distributed.DistBackendError
on torch 2.x (a RuntimeError on 1.13), naming the operation, the rank,
the peer rank or root where there is one, and the cause.
"""
from __future__ import annotations

import atexit
import collections
import contextlib
import ctypes
import datetime
import errno as _errno
import functools
import inspect
import os
import queue
import threading
import time
import weakref
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, cast

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import Work

import dlcp
from dlcp import rendezvous as rdzv
from dlcp.rendezvous import ConfigError
from dlcp._backend_tensors import (_WIRE, _Bytes, _Staging, _check_like, _check_reduce, _listify,
                                   _native, _op_name, _reduce_stack)
from dlcp._backend_moves import _Moves
from dlcp._backend_work import (_ALGOS, _INT_MAX, _TRANSPORTS, DlcpError, DlcpWork, Options,
                                _check_ppm, _timeout_ms)

__all__ = ["BACKEND", "Options", "ProcessGroupDlcp", "DlcpError", "lossy", "register"]

BACKEND = "dlcp"

# the public classes defined in the private modules are dlcp.backend's
for _cls in (DlcpError, DlcpWork, Options):
    _cls.__module__ = __name__
del _cls

# message tags of the collectives (low 16 bits, with the sequence number as
# the iteration: every collective of a group has keys of its own)
_T_ALLREDUCE, _T_BCAST, _T_GATHER, _T_RSCATTER, _T_EXACT = 1, 2, 3, 4, 5


_vp = ctypes.c_void_p
_set_send_timeout = dlcp._sig("dlcp_ep_set_send_timeout", ctypes.c_int, _vp, ctypes.c_int)
_live: "weakref.WeakSet[ProcessGroupDlcp]" = weakref.WeakSet()


# ---------------------------------------------------------------------------
# The process group

# the methods of _Moves keep torch 1.13's and 2.x's names, not their stubs' types
class ProcessGroupDlcp(_Moves, dist.ProcessGroup):  # type: ignore[misc]
    """One rank's dlcp process group; made by init_process_group("dlcp") or
    new_group(backend="dlcp") through the registered creator."""

    def __init__(self, store: Any, rank: int, size: int, timeout: datetime.timedelta,
                 options: Optional[Options] = None) -> None:
        super().__init__(rank, size)    # type: ignore[call-arg]  # not in torch 1.13's stubs
        self.options = (options or Options()).resolved()
        self.timeout = timeout
        self._timeout_ms = max(1, min(_INT_MAX, int(timeout.total_seconds() * 1000)))
        # resolved() left no None
        self._transport = _TRANSPORTS[cast(str, self.options.transport)]
        self._algo = _ALGOS[cast(str, self.options.algo)]
        self._rank, self._size = rank, size
        self.stats: Dict[str, int] = collections.Counter()
        self._calls = threading.local()     # .budgets: those of a lossy() block
        self._stage = _Staging()
        self._seq = 0
        self._lock = threading.Lock()
        self._closed = False
        self._recent: "collections.deque[DlcpWork]" = collections.deque(maxlen=1024)
        self._pending: Dict[int, DlcpWork] = {}
        self._group, self._send_ep, self._recv_ep, self._p2p_addr, self._p2p_src = \
            self._rendezvous(store)
        # p2p state: (peer, tag) -> sequence numbers; messages and recvs by
        # (peer, tag, seq)
        self._sseq: Dict[Tuple[int, int], int] = collections.defaultdict(int)
        self._rseq: Dict[Tuple[int, int], int] = collections.defaultdict(int)
        self._inbox: Dict[Tuple[int, int, int], Tuple[bytes, int]] = {}
        self._waiting: Dict[Tuple[int, int, int],
                            Tuple[List[torch.Tensor], DlcpWork, float, Dict[int, Any]]] = {}
        # recvs from any source, in the order they were called: (tag, tensors,
        # work, deadline, events)
        self._any: List[Tuple[int, List[torch.Tensor], DlcpWork, float, Dict[int, Any]]] = []
        self._p2p_lock = threading.Lock()
        self._q: "queue.Queue[Optional[Tuple[DlcpWork, Callable[[], Any]]]]" = queue.Queue()
        self._sq: "queue.Queue[Optional[Tuple[DlcpWork, Callable[[], Any]]]]" = queue.Queue()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(self._q,), daemon=True,
                                          name="dlcp-pg%d-coll" % rank),
                         threading.Thread(target=self._run, args=(self._sq,), daemon=True,
                                          name="dlcp-pg%d-send" % rank),
                         threading.Thread(target=self._receiver, daemon=True,
                                          name="dlcp-pg%d-recv" % rank)]
        for t in self._threads:
            t.start()
        _live.add(self)

    # -- setup ------------------------------------------------------------

    def _rendezvous(self, store: Any) -> Tuple[dlcp.Group, Any, Any, List[Any], Dict[str, int]]:
        """Bind three endpoints (collectives, p2p send, p2p receive), publish
        them in @store and read everyone's."""
        host, why = rdzv.local_address()
        eps: List[Any] = []
        try:
            bound = []
            for _ in range(3):
                ep, b = dlcp._open_ep(dlcp.SockaddrStorage.make(host, 0), self._transport, why)
                eps.append(ep)
                bound.append(b)
            mine = " ".join(str(b) for b in bound)
            t0 = time.monotonic()
            try:
                peers = rdzv.exchange(store, self._rank, self._size, mine,
                                      timeout=self.timeout)
            except TimeoutError as e:
                raise DlcpError("dlcp backend: rendezvous of rank %d of %d timed out after "
                                "%.1f s (timeout %.6g s): %s" % (
                                    self._rank, self._size, time.monotonic() - t0,
                                    self._timeout_ms / 1000, e), _errno.ETIMEDOUT) from None
            addrs = [[dlcp.SockaddrStorage.parse(a) for a in p.split(" ")] for p in peers]
            if any(len(a) != 3 for a in addrs):
                raise ConfigError("dlcp backend: a rank published %r: not a dlcp backend "
                                  "group (another job on the same store?)" % peers)
            if len({a.family for row in addrs for a in row}) != 1:
                raise ConfigError("ranks published addresses of both families (%s, ...): set "
                                  "DLCP_ADDR or DLCP_IFNAME so that all use IPv4 or all IPv6"
                                  % ", ".join(peers[:4]))
            _set_send_timeout(eps[1], self._timeout_ms)
            group = dlcp.Group._on_ep(eps[0], self._rank, [a[0] for a in addrs],
                                      self._timeout_ms)
            eps[0] = None      # the group owns it now (closed it on failure)
        except BaseException:
            for ep in eps:
                if ep:
                    dlcp._ep_close(ep, 0)
            raise
        return (group, eps[1], eps[2], [a[2] for a in addrs],
                {str(a[1]): r for r, a in enumerate(addrs)})

    # -- machinery --------------------------------------------------------

    def getBackendName(self) -> str:  # noqa: N802  (torch's name)
        return BACKEND

    def __repr__(self) -> str:
        return "ProcessGroupDlcp(rank=%d, size=%d, %s, timeout=%s)" % (
            self._rank, self._size, self.options, self.timeout)

    def _work(self, name: str, tensors: Sequence[torch.Tensor]) -> DlcpWork:
        devs = _Staging.devices(tensors)
        fut: "torch.futures.Future[Any]" = (
            torch.futures.Future(devices=list(devs)) if devs else torch.futures.Future())
        return DlcpWork(name, fut)

    def _submit(self, q: "queue.Queue[Any]", name: str, tensors: Sequence[torch.Tensor],
                fn: Callable[[int, Dict[int, Any]], Any], peer: str = "") -> DlcpWork:
        """Queue fn(seq, events) for the worker of @q; its value completes the
        Work. The sequence number is taken here, in the order the caller
        issues the operations (the same on every rank). @peer ("to rank 2",
        "from root 0"): who the operation's errors name beside this rank.

        The group keeps the Work alive until it is done, and the last 1024
        done after that: C++ (DDP's reducer, _broadcast_coalesced) may hold
        the returned Work without its Python object, whose wait() and
        get_future() are then no longer reachable from C++."""
        if self._closed:
            raise DlcpError("dlcp %s: the process group is shut down" % name)
        w = self._work(name, tensors)
        w._peer = peer
        evs = _Staging.events(tensors)
        with self._lock:
            seq = self._seq
            if q is self._q:
                self._seq = (self._seq + 1) & 0xffffffff
            self._pending[id(w)] = w        # alive until done (C++ may hold it only)
            q.put((w, functools.partial(fn, seq, evs)))
        return w

    def _done(self, w: DlcpWork, value: Any, exc: Optional[BaseException]) -> None:
        with self._lock:
            self._pending.pop(id(w), None)
            self._recent.append(w)          # C++ waits right after the call
        w._finish(value, exc)

    def _run(self, q: "queue.Queue[Any]") -> None:
        while True:
            item = q.get()
            if item is None:
                return
            w, fn = item
            try:
                value = fn()
            except BaseException as e:  # noqa: BLE001  (reported through the Work)
                self._done(w, None, self._error(w._name, e, w._peer))
            else:
                self._done(w, value, None)

    def _error(self, name: str, e: BaseException, peer: str = "") -> BaseException:
        """@e as a DlcpError naming operation @name, this rank, @peer and the
        cause (an exception that is no Exception is left as it is)."""
        if isinstance(e, DlcpError):
            return e
        what = "dlcp %s%s on rank %d of %d" % (name, " " + peer if peer else "", self._rank,
                                               self._size)
        if isinstance(e, OSError) and e.errno is not None:
            if e.errno == _errno.ETIMEDOUT:
                why = ("a rank did not take part, or stopped answering, within the "
                       "timeout (%.6g s)" % (self._timeout_ms / 1000))
            else:
                why = os.strerror(e.errno)
            return DlcpError("%s: %s [%s: %s]" % (
                what, why, _errno.errorcode.get(e.errno, e.errno), e.strerror or e), e.errno)
        if isinstance(e, Exception):
            return DlcpError("%s: %s: %s" % (what, type(e).__name__, e))
        return e

    def _budgets(self) -> Tuple[int, int]:
        """(budget_ppm, budget2_ppm) of a reducing call this thread issues
        now: those of the lossy() block around it, else the group's."""
        b = getattr(self._calls, "budgets", None)
        if b is not None:
            return cast(Tuple[int, int], b)
        return cast(int, self.options.budget_ppm), cast(int, self.options.budget2_ppm)

    def _opts(self, tag: int, seq: int, timeout_ms: int, budget: int = 0, budget2: int = 0,
              reduce: int = dlcp.REDUCE_MEAN) -> Tuple[dlcp.CollOpts, dlcp.CollStats]:
        st = dlcp.CollStats()
        o = self._group._opts(tag & 0xffff, seq, 0, budget, budget2, reduce, 0, 0,
                              timeout_ms, st, self._algo)
        if budget or budget2:
            self.stats["lossy_calls"] += 1
        return o, st

    def _call(self, fn: Any, name: str, buf: torch.Tensor, n: int, dtype: int,
              o: dlcp.CollOpts, st: dlcp.CollStats) -> None:
        if not self._group._g:
            raise DlcpError("dlcp %s: the process group is shut down" % name)
        dlcp._check(fn(self._group._g, buf.data_ptr(), n, dtype, ctypes.byref(o)), name)
        for k, v in st.as_dict().items():
            self.stats[k] += v

    # -- building blocks on the worker thread ------------------------------

    def _gather_bytes(self, tag: int, seq: int, tmo: int, b: _Bytes, evs: Dict[int, Any],
                      pinned: bool) -> torch.Tensor:
        """Every rank's bytes of @b: a uint8 host tensor (world, b.nbytes)."""
        W = self._size
        buf = self._stage.host(W * b.nbytes, pinned)
        try:
            mine = buf[self._rank * b.nbytes:(self._rank + 1) * b.nbytes]
            b.pack(self._stage, mine, evs)
            if W > 1 and b.nbytes:
                o, st = self._opts(tag, seq, tmo)
                self._call(dlcp._all_gather, "dlcp_all_gather", buf, W * b.nbytes // 4,
                           dlcp.DTYPE_INT32, o, st)
            return buf[:W * b.nbytes].clone().view(W, b.nbytes)
        finally:
            self._stage.release(buf)

    def _exact_reduce(self, tag: int, seq: int, tmo: int, op: str,
                      tensors: Sequence[torch.Tensor], evs: Dict[int, Any]) -> List[torch.Tensor]:
        """The reduction of each of @tensors over the ranks (host tensors)."""
        b = _Bytes(tensors)
        rows = self._gather_bytes(tag, seq, tmo, b, evs, any(t.is_cuda for t in tensors))
        out = []
        for i, t in enumerate(tensors):
            stack = torch.stack([b.segment(rows[r], i) for r in range(self._size)])
            out.append(_reduce_stack(stack, op, self._size))
        return out

    def _native_reduce(self, fn: Any, name: str, tag: int, seq: int, tmo: int, op: str,
                       ins: Sequence[torch.Tensor], outs: Sequence[torch.Tensor],
                       evs: Dict[int, Any], budgets: Tuple[int, int],
                       out_chunk: Optional[int] = None) -> None:
        """libdlcp's all-reduce (@out_chunk None: outs[i] <- result of ins[i])
        or reduce-scatter (outs[0] <- chunk @out_chunk of the result) on the
        concatenation of @ins in their wire dtype; @budgets (the call's
        _budgets()) on float tensors, none on integer ones."""
        wd, dt = _WIRE[ins[0].dtype]
        n = sum(t.numel() for t in ins)
        floating = wd == torch.float32
        budget, budget2 = budgets if floating else (0, 0)
        reduce = dlcp.REDUCE_SUM if op == "SUM" else dlcp.REDUCE_MEAN
        cuda = any(t.is_cuda for t in list(ins) + list(outs))
        t0 = ins[0]
        inplace = (len(ins) == 1 and not t0.is_cuda and t0.dtype == wd and t0.is_contiguous()
                   and out_chunk is None)
        hb = None if inplace else self._stage.host(n * 4, cuda)
        try:
            flat = t0.view(-1) if hb is None else hb[:n * 4].view(wd)
            if not inplace:
                off = 0
                for t in ins:
                    k = t.numel()
                    if t.dtype == wd or not t.is_cuda:
                        if t.is_cuda:
                            self._stage.to_host(t, flat[off:off + k], evs)
                        else:
                            flat[off:off + k].copy_(t.reshape(-1))
                    else:
                        tmp = self._stage.host(k * t.element_size(), True)
                        try:
                            seg = tmp[:k * t.element_size()].view(t.dtype)
                            self._stage.to_host(t, seg, evs)
                            flat[off:off + k].copy_(seg)
                        finally:
                            self._stage.release(tmp)
                    off += k
            if self._size > 1 and n:
                o, st = self._opts(tag, seq, tmo, budget, budget2, reduce)
                self._call(fn, name, flat, n, dt, o, st)
            if inplace:
                return
            if out_chunk is None:
                pairs, off = [], 0
                for t in ins:
                    pairs.append((t, flat[off:off + t.numel()]))
                    off += t.numel()
            else:
                off, ln = dlcp.chunk_range(n, self._size, out_chunk)
                pairs = [(outs[0], flat[off:off + ln])]
            for t, seg in pairs:
                if not t.is_cuda:
                    t.copy_(seg.view(t.shape))
                elif t.dtype == wd:
                    self._stage.from_host(t, seg, evs)
                else:
                    tmp = self._stage.host(seg.numel() * t.element_size(), True)
                    try:
                        conv = tmp[:seg.numel() * t.element_size()].view(t.dtype)
                        conv.copy_(seg)
                        self._stage.from_host(t, conv, evs)
                    finally:
                        self._stage.release(tmp)
        finally:
            if hb is not None:
                self._stage.release(hb)

    # -- collectives ---------------------------------------------------------

    def allreduce(self, tensors: Any, opts: Any = None) -> Work:
        """all_reduce of each tensor in place (see the module's doc)."""
        tensors = _listify(tensors)
        if isinstance(opts, dist.ReduceOp) or (opts is not None and not hasattr(opts, "reduceOp")):
            op, opts = _op_name(opts), None
        else:
            op = _op_name(opts.reduceOp) if opts is not None else "SUM"
        _check_reduce(op, tensors)
        tmo = _timeout_ms(opts, self._timeout_ms)
        budgets = self._budgets()
        self.stats["allreduce"] += 1

        def run(seq: int, evs: Dict[int, Any]) -> List[torch.Tensor]:
            groups: Dict[Any, List[torch.Tensor]] = collections.OrderedDict()
            for t in tensors:       # one libdlcp call per wire dtype
                key = _WIRE[t.dtype][0] if _native(op, [t]) else None
                groups.setdefault(key, []).append(t)
            for i, (key, ts) in enumerate(groups.items()):
                tag = _T_ALLREDUCE | i << 8
                if key is not None:
                    self._native_reduce(dlcp._allreduce, "dlcp_allreduce", tag, seq, tmo, op,
                                        ts, ts, evs, budgets)
                else:
                    res = self._exact_reduce(_T_EXACT | i << 8, seq, tmo, op, ts, evs)
                    for t, r in zip(ts, res):
                        self._stage.from_host(t, r.to(t.dtype), evs)
            return tensors
        return self._submit(self._q, "all_reduce", tensors, run)

    def allreduce_coalesced(self, tensors: Any, opts: Any = None) -> Work:
        return self.allreduce(tensors, opts)

    def broadcast(self, tensors: Any, opts: Any = None) -> Work:
        """broadcast of the root's tensors (opts.rootRank) into everyone's."""
        tensors = _listify(tensors)
        root = opts.rootRank if opts is not None else 0
        if not 0 <= root < self._size:
            raise ValueError("dlcp backend: broadcast root %d: not a rank of %d"
                             % (root, self._size))
        tmo = _timeout_ms(opts, self._timeout_ms)
        self.stats["broadcast"] += 1

        def run(seq: int, evs: Dict[int, Any]) -> List[torch.Tensor]:
            b = _Bytes(tensors)
            cuda = any(t.is_cuda for t in tensors)
            buf = self._stage.host(b.nbytes, cuda)
            try:
                buf.zero_()
                if self._rank == root:
                    b.pack(self._stage, buf, evs)
                if self._size > 1 and b.nbytes:
                    o, st = self._opts(_T_BCAST, seq, tmo, reduce=dlcp.REDUCE_SUM)
                    self._call(dlcp._allreduce, "dlcp_allreduce", buf, b.nbytes // 4,
                               dlcp.DTYPE_INT32, o, st)
                if self._rank != root:
                    b.unpack(self._stage, buf, evs)
            finally:
                self._stage.release(buf)
            return tensors
        return self._submit(self._q, "broadcast", tensors, run, "from root %d" % root)

    # torch's stubs overload allgather and reduce_scatter with a form of one
    # tensor per rank in a flat list, which the backend does not take (a
    # ValueError)
    def allgather(self, output_tensors: List[List[torch.Tensor]],  # type: ignore[override]
                  input_tensors: List[torch.Tensor], opts: Any = None) -> Work:
        """all_gather: output_tensors[0][r] <- rank r's input_tensors[0]."""
        if len(input_tensors) != 1 or len(output_tensors) != 1:
            raise ValueError("dlcp backend: all_gather takes one input tensor per process")
        inp, outs = input_tensors[0], list(output_tensors[0])
        if len(outs) != self._size:
            raise ValueError("dlcp backend: all_gather into %d tensors, the group has %d ranks"
                             % (len(outs), self._size))
        _check_like("all_gather output", outs, "input", inp)
        tmo = _timeout_ms(opts, self._timeout_ms)
        self.stats["allgather"] += 1

        def run(seq: int, evs: Dict[int, Any]) -> List[List[torch.Tensor]]:
            b = _Bytes([inp])
            rows = self._gather_bytes(_T_GATHER, seq, tmo, b, evs, inp.is_cuda or any(
                o.is_cuda for o in outs))
            for r, o in enumerate(outs):
                self._stage.from_host(o, b.segment(rows[r], 0), evs)
            return output_tensors
        return self._submit(self._q, "all_gather", [inp] + outs, run)

    def _allgather_base(self, output: torch.Tensor, input: torch.Tensor,  # noqa: A002
                        opts: Any = None) -> Work:
        """all_gather into one tensor of size * input's elements."""
        if output.numel() != input.numel() * self._size:
            raise ValueError("dlcp backend: all_gather_into_tensor: output has %d elements, "
                             "needs %d" % (output.numel(), input.numel() * self._size))
        if not output.is_contiguous():
            raise ValueError("dlcp backend: all_gather_into_tensor needs a contiguous output")
        return self.allgather([list(output.view(-1).chunk(self._size))], [input], opts)

    def allgather_into_tensor_coalesced(self, outputs: List[torch.Tensor],
                                        inputs: List[torch.Tensor], opts: Any = None) -> Work:
        if len(outputs) != 1 or len(inputs) != 1:
            raise ValueError("dlcp backend: one tensor per coalesced all_gather")
        return self._allgather_base(outputs[0], inputs[0], opts)

    def reduce_scatter(self, output_tensors: List[torch.Tensor],  # type: ignore[override]
                       input_tensors: List[List[torch.Tensor]], opts: Any = None) -> Work:
        """reduce_scatter: output_tensors[0] <- the reduction over the ranks of
        their input_tensors[0][this rank]."""
        if len(output_tensors) != 1 or len(input_tensors) != 1:
            raise ValueError("dlcp backend: reduce_scatter takes one output tensor per process")
        out, ins = output_tensors[0], list(input_tensors[0])
        if len(ins) != self._size:
            raise ValueError("dlcp backend: reduce_scatter of %d tensors, the group has %d "
                             "ranks" % (len(ins), self._size))
        _check_like("reduce_scatter input", ins, "output", out)
        op = _op_name(opts.reduceOp) if opts is not None else "SUM"
        _check_reduce(op, [out])
        tmo = _timeout_ms(opts, self._timeout_ms)
        budgets = (self._budgets()[0], 0)     # budget2_ppm: no all-gather half
        self.stats["reduce_scatter"] += 1

        def run(seq: int, evs: Dict[int, Any]) -> List[torch.Tensor]:
            if _native(op, [out]):
                self._native_reduce(dlcp._reduce_scatter, "dlcp_reduce_scatter", _T_RSCATTER,
                                    seq, tmo, op, ins, [out], evs, budgets,
                                    out_chunk=self._rank)
            else:
                res = self._exact_reduce(_T_EXACT, seq, tmo, op, ins, evs)
                self._stage.from_host(out, res[self._rank].to(out.dtype), evs)
            return output_tensors
        return self._submit(self._q, "reduce_scatter", [out] + ins, run)

    def _reduce_scatter_base(self, output: torch.Tensor, input: torch.Tensor,  # noqa: A002
                             opts: Any = None) -> Work:
        """reduce_scatter of one tensor of size * output's elements."""
        if input.numel() != output.numel() * self._size:
            raise ValueError("dlcp backend: reduce_scatter_tensor: input has %d elements, "
                             "needs %d" % (input.numel(), output.numel() * self._size))
        return self.reduce_scatter([output], [list(input.reshape(-1).chunk(self._size))], opts)

    def reduce_scatter_tensor_coalesced(self, outputs: List[torch.Tensor],
                                        inputs: List[torch.Tensor], opts: Any = None) -> Work:
        if len(outputs) != 1 or len(inputs) != 1:
            raise ValueError("dlcp backend: one tensor per coalesced reduce_scatter")
        return self._reduce_scatter_base(outputs[0], inputs[0], opts)

    def barrier(self, opts: Any = None) -> Work:
        """Returns when every rank has entered the barrier."""
        tmo = _timeout_ms(opts, self._timeout_ms)
        self.stats["barrier"] += 1

        def run(seq: int, evs: Dict[int, Any]) -> List[torch.Tensor]:
            if self._size > 1:
                dlcp._check(dlcp._barrier(self._group._g, seq, tmo), "dlcp_barrier")
            return []
        return self._submit(self._q, "barrier", [], run)

    # -- point to point ------------------------------------------------------

    def send(self, tensors: List[torch.Tensor], dstRank: int, tag: int) -> Work:  # noqa: N803
        """Send @tensors (one message) to rank @dstRank; matched by tag and
        order with its recv()."""
        tensors = _listify(tensors)
        if not 0 <= dstRank < self._size:
            raise ValueError("dlcp backend: send to rank %d of %d" % (dstRank, self._size))
        key = (dstRank, tag)
        with self._p2p_lock:
            seq = self._sseq[key]
            self._sseq[key] += 1
        self.stats["send"] += 1

        def run(_seq: int, evs: Dict[int, Any]) -> List[torch.Tensor]:
            b = _Bytes(tensors)
            buf = self._stage.host(b.nbytes, any(t.is_cuda for t in tensors))
            try:
                b.pack(self._stage, buf, evs)
                m = dlcp.TensorMeta()
                m.tensor_id, m.iteration, m.dtype = tag & 0xffffffff, seq, dlcp.DTYPE_BYTES
                m.flags = 0
                iov = dlcp.IoVec(buf.data_ptr(), b.used)
                a = self._p2p_addr[dstRank]
                dlcp._check(dlcp._send_tensorv_sa(self._send_ep, ctypes.byref(a),
                                                  ctypes.sizeof(a), ctypes.byref(iov), 1,
                                                  ctypes.byref(m)), "dlcp_send_tensor")
            finally:
                self._stage.release(buf)
            return tensors
        return self._submit(self._sq, "send", tensors, run, "to rank %d" % dstRank)

    def recv(self, tensors: List[torch.Tensor], srcRank: int, tag: int) -> Work:  # noqa: N803
        """Receive into @tensors the next message rank @srcRank sent with @tag;
        fails after the group's timeout without one."""
        tensors = _listify(tensors)
        if not 0 <= srcRank < self._size:
            raise ValueError("dlcp backend: recv from rank %d of %d" % (srcRank, self._size))
        if self._closed:
            raise DlcpError("dlcp recv: the process group is shut down")
        w = self._work("recv", tensors)
        w._peer = "from rank %d" % srcRank
        evs = _Staging.events(tensors)
        self.stats["recv"] += 1
        with self._p2p_lock:
            k2 = (srcRank, tag)
            key = (srcRank, tag, self._rseq[k2])
            self._rseq[k2] += 1
            msg = self._inbox.pop(key, None)
            if msg is None:
                self._waiting[key] = (tensors, w, time.monotonic() + self._timeout_ms / 1000,
                                      evs)
        with self._lock:
            self._pending[id(w)] = w
        w._src = srcRank
        if msg is not None:
            self._deliver(key, tensors, w, msg, evs)
        return w

    def recv_anysource(self, tensors: List[torch.Tensor], tag: int) -> Work:
        """Receive into @tensors the next message with @tag from any rank
        (from each rank in the order it sent them); Work._source_rank()
        is the sender. Fails after the group's timeout without one."""
        tensors = _listify(tensors)
        if self._closed:
            raise DlcpError("dlcp recv: the process group is shut down")
        w = self._work("recv", tensors)
        w._peer = "from any rank"
        self.stats["recv"] += 1
        with self._lock:
            self._pending[id(w)] = w
        with self._p2p_lock:
            self._any.append((tag, tensors, w, time.monotonic() + self._timeout_ms / 1000,
                              _Staging.events(tensors)))
            ready = self._match_any()
        for key, v, msg in ready:
            self._deliver(key, v[1], v[2], msg, v[4])
        return w

    def _match_any(self) -> List[Tuple[Tuple[int, int, int], Any, Tuple[bytes, int]]]:
        """Pair recvs from any source with the messages in the inbox that are
        next in order from their sender (under _p2p_lock): (key, recv, message)
        to deliver."""
        out = []
        for v in list(self._any):
            key = next((k for k in self._inbox
                        if k[1] == v[0] and k[2] == self._rseq[(k[0], k[1])]), None)
            if key is None:
                continue
            self._any.remove(v)
            self._rseq[(key[0], key[1])] += 1
            v[2]._src = key[0]
            out.append((key, v, self._inbox.pop(key)))
        return out

    def _deliver(self, key: Tuple[int, int, int], tensors: List[torch.Tensor], w: DlcpWork,
                 msg: Tuple[bytes, int], evs: Dict[int, Any]) -> None:
        data, nr_lost = msg
        try:
            b = _Bytes(tensors)
            if nr_lost:
                raise DlcpError("dlcp recv from rank %d (tag %d): %d ranges of the message "
                                "lost" % (key[0], key[1], nr_lost), _errno.EIO)
            if len(data) != b.used:
                raise DlcpError("dlcp recv from rank %d (tag %d): the message has %d bytes, "
                                "these tensors take %d" % (key[0], key[1], len(data), b.used),
                                _errno.EMSGSIZE)
            buf = torch.frombuffer(bytearray(data), dtype=torch.uint8) if data else \
                torch.empty(0, dtype=torch.uint8)
            b.unpack(self._stage, buf, evs)
        except BaseException as e:  # noqa: BLE001
            self._done(w, None, self._error("recv", e, "from rank %d" % key[0]))
        else:
            self._done(w, tensors, None)

    def _receiver(self) -> None:
        """Receive p2p messages; file them for recv(); time out old recvs."""
        while not self._stop.is_set():
            buf = _vp()
            info = dlcp.TensorInfo()
            lost = ctypes.POINTER(dlcp.Range)()
            src = dlcp.SockaddrStorage()
            n = dlcp._recv_tensor_sa(self._recv_ep, ctypes.byref(buf), ctypes.byref(info),
                                     ctypes.byref(lost), 100, ctypes.byref(src))
            if n >= 0:
                try:
                    data = ctypes.string_at(buf, n) if n else b""
                finally:
                    dlcp._libc.free(buf)
                    dlcp._libc.free(ctypes.cast(lost, _vp))
                peer = self._p2p_src.get(str(src))
                if peer is not None:
                    tag = info.tensor_id
                    tag = tag - (1 << 32) if tag >= 1 << 31 else tag
                    key = (peer, tag, info.iteration)
                    ready = []
                    with self._p2p_lock:
                        waiting = self._waiting.pop(key, None)
                        if waiting is None:
                            self._inbox[key] = (data, info.nr_lost)
                            ready = self._match_any()
                    if waiting is not None:
                        self._deliver(key, waiting[0], waiting[1], (data, info.nr_lost),
                                      waiting[3])
                    for k, v, msg in ready:
                        self._deliver(k, v[1], v[2], msg, v[4])
            elif n != -_errno.ETIMEDOUT and n != -_errno.EINTR and n != -_errno.EAGAIN:
                if self._stop.is_set():
                    return
                self._fail_waiting(OSError(-n, "dlcp_recv_tensor: %s" % os.strerror(-n)))
                time.sleep(0.1)
            now = time.monotonic()
            with self._p2p_lock:
                late = [k for k, v in self._waiting.items() if v[2] <= now]
                items = [(k, self._waiting.pop(k)) for k in late]
                late_any = [v for v in self._any if v[3] <= now]
                for v in late_any:
                    self._any.remove(v)
            for k, v in items:
                self._done(v[1], None, DlcpError(
                    "dlcp recv on rank %d of %d: nothing from rank %d (tag %d) within the "
                    "timeout (%.6g s)" % (self._rank, self._size, k[0], k[1],
                                          self._timeout_ms / 1000), _errno.ETIMEDOUT))
            for v in late_any:
                self._done(v[2], None, DlcpError(
                    "dlcp recv on rank %d of %d: nothing from any rank (tag %d) within the "
                    "timeout (%.6g s)" % (self._rank, self._size, v[0],
                                          self._timeout_ms / 1000), _errno.ETIMEDOUT))

    def _fail_waiting(self, e: BaseException) -> None:
        with self._p2p_lock:
            works = [v[1] for v in self._waiting.values()] + [v[2] for v in self._any]
            self._waiting.clear()
            self._any.clear()
        for w in works:
            self._done(w, None, self._error("recv", e, w._peer))

    # -- teardown ------------------------------------------------------------

    def shutdown(self, linger_ms: Optional[int] = None) -> None:
        """Finish the queued operations, then close the endpoints (waiting at
        most @linger_ms, default the timeout up to 30 s, for unsent data).
        Idempotent; runs at exit for every group still open."""
        if self._closed:
            return
        self._closed = True
        linger = min(self._timeout_ms, 30000) if linger_ms is None else linger_ms
        self._q.put(None)
        self._sq.put(None)
        for t in self._threads[:2]:
            t.join(linger / 1000 + 1)
        self._stop.set()
        self._threads[2].join(2)
        self._fail_waiting(OSError(_errno.ESHUTDOWN, "the process group was shut down"))
        if not any(t.is_alive() for t in self._threads):
            try:
                self._group.close(linger)
            except OSError:
                pass
            dlcp._ep_close(self._send_ep, linger)
            dlcp._ep_close(self._recv_ep, 0)
        _live.discard(self)

    def _shutdown(self) -> None:
        self.shutdown()


@atexit.register
def _close_all() -> None:
    for pg in list(_live):
        try:
            pg.shutdown()
        except Exception:  # noqa: BLE001  (at exit: nothing left to tell)
            pass


# ---------------------------------------------------------------------------
# Loss budgets of single calls

@contextlib.contextmanager
def lossy(group: Any, budget_ppm: int, budget2_ppm: int = 0) -> Iterator[None]:
    """Within the block, the all_reduce, reduce_scatter and reduce of float
    tensors with SUM or AVG that this thread issues on @group (a dlcp
    group; None: the default group) have these loss budgets instead of the
    group's; budget_ppm=0 makes them exact on a lossy group. Every other
    operation stays exact, and other threads' calls keep the group's
    budgets. On a rank outside @group (new_group() of other ranks) the
    block runs as it is; a group of another backend is a TypeError, and
    None before init_process_group() a RuntimeError, as torch's own calls
    have it.

        with dlcp.backend.lossy(None, budget_ppm=50000):
            dist.all_reduce(grad)
    """
    b = (_check_ppm("budget_ppm", budget_ppm), _check_ppm("budget2_ppm", budget2_ppm))
    pg = dist.group.WORLD if group is None else group
    if pg is None:
        raise RuntimeError("dlcp.backend.lossy: the default process group has not been "
                           "initialized: call init_process_group() first")
    if pg == dist.GroupMember.NON_GROUP_MEMBER:
        yield
        return
    if not isinstance(pg, ProcessGroupDlcp):
        raise TypeError("dlcp.backend.lossy: %s is not a dlcp process group"
                        % type(pg).__name__)
    prev = getattr(pg._calls, "budgets", None)
    pg._calls.budgets = b
    try:
        yield
    finally:
        pg._calls.budgets = prev


# ---------------------------------------------------------------------------
# Registration

def _create(*args: Any) -> ProcessGroupDlcp:
    """The creator torch calls: (backend options, pg_options) with the
    extended API, as registered; (store, rank, size, timeout) without it."""
    if len(args) == 2:
        o, pg_options = args
        return ProcessGroupDlcp(o.store, o.group_rank, o.group_size, o.timeout,
                                Options.of(pg_options))
    store, rank, size, timeout = args
    return ProcessGroupDlcp(store, rank, size, timeout)


def register() -> None:
    """Register the "dlcp" backend with torch.distributed (idempotent; done
    when this module is imported)."""
    if BACKEND.upper() in getattr(dist.Backend, "_plugins", {}):
        return
    kw: Dict[str, Any] = {}
    if "devices" in inspect.signature(dist.Backend.register_backend).parameters:
        kw["devices"] = ["cpu", "cuda"]      # torch >= 2.1 asks which
    dist.Backend.register_backend(BACKEND, _create, extended_api=True, **kw)


# a torch built without libuv (Debian's 2.x) refuses the TCPStore client
# through which init_process_group() reaches torchrun's store: make it
# use the other server (nothing changes on other torches)
rdzv.patch_libuv()
register()
