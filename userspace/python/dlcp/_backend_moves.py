# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""The operations of dlcp.backend's process group that have a root or a
part for every peer: reduce, gather, scatter, all_to_all (alltoall) and
all_to_all_single (alltoall_base). Private: a mixin of
dlcp.backend.ProcessGroupDlcp, whose machinery (_submit, _stage, _opts,
_native_reduce) they use.

Gather, scatter and the all-to-alls move every tensor's raw bytes
(libdlcp's DTYPE_BYTES), exactly: no loss budget ever applies to them.
reduce of float32 / int32 (float16 and bfloat16 as float32) with SUM or
AVG is libdlcp's dlcp_reduce, with the call's budgets on float tensors as
all_reduce has them (budget_ppm on the reduce-scatter, budget2_ppm on the
chunks' way to the root); other dtypes and ops gather every rank's tensor
at the root, exactly, which reduces them in the tensor's dtype, in rank
order.
"""
from __future__ import annotations

import ctypes
from typing import Any, Dict, List, Optional, Sequence

import torch

import dlcp
from dlcp._backend_tensors import (_Bytes, _check_like, _check_reduce, _listify, _native,
                                   _op_name, _reduce_stack)
from dlcp._backend_work import DlcpError, _timeout_ms

# message tags (low 16 bits; dlcp.backend's are 1..5)
_T_REDUCE, _T_ROOTED, _T_A2A = 6, 7, 8


def _sizes(v: Sequence[int]) -> Any:
    return (ctypes.c_size_t * len(v))(*v)


def _nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


class _Moves:
    """reduce, gather, scatter and the all-to-alls of ProcessGroupDlcp."""

    _rank: int
    _size: int
    # the rest of ProcessGroupDlcp that these use
    _q: Any
    _opts: Any
    _timeout_ms: int
    stats: Any
    _stage: Any
    _submit: Any
    _native_reduce: Any
    _budgets: Any
    _group: Any

    def _root(self, name: str, opts: Any) -> int:
        root = getattr(opts, "rootRank", 0) if opts is not None else 0
        if not 0 <= root < self._size:
            raise ValueError("dlcp backend: %s root %d: not a rank of %d"
                             % (name, root, self._size))
        return root

    def _rooted(self, name: str, opts: Any, ones: List[torch.Tensor], what: str,
                lists: List[List[torch.Tensor]], many: str) -> Any:
        """(root, this rank's one tensor, the root's list of one per rank,
        timeout) of a gather or scatter; the other ranks' list is empty,
        whatever they pass."""
        root = self._root(name, opts)
        if len(ones) != 1:
            raise ValueError("dlcp backend: %s takes one %s tensor per process" % (name, what))
        ts: List[torch.Tensor] = []
        if self._rank == root:
            if len(lists) != 1 or len(lists[0]) != self._size:
                raise ValueError("dlcp backend: %s at the root needs one list of %d %s "
                                 "tensors" % (name, self._size, many))
            ts = list(lists[0])
            _check_like("%s %s" % (name, many), ts, what, ones[0])
        self.stats[name] += 1
        return root, ones[0], ts, _timeout_ms(opts, self._timeout_ms)

    def _lib(self, name: str, st: Any, call: Any) -> None:
        """call(group handle) -> libdlcp's return code; its stats counted."""
        if not self._group._g:
            raise DlcpError("dlcp %s: the process group is shut down" % name)
        dlcp._check(call(self._group._g), name)
        for k, v in st.as_dict().items():
            self.stats[k] += v

    def _gather_root(self, seq: int, tmo: int, b: _Bytes, evs: Dict[int, Any],
                     pinned: bool, root: int) -> Optional[torch.Tensor]:
        """Every rank's bytes of @b at @root: a uint8 host tensor (world,
        b.nbytes) there, None on the other ranks."""
        W, nb, at_root = self._size, b.nbytes, self._rank == root
        buf = self._stage.host((W if at_root else 1) * nb, pinned)
        try:
            mine = buf[root * nb:(root + 1) * nb] if at_root else buf[:nb]
            b.pack(self._stage, mine, evs)
            if W > 1 and nb:
                o, st = self._opts(_T_ROOTED, seq, tmo)
                self._lib("dlcp_gather", st, lambda g: dlcp._gather(
                    g, mine.data_ptr(), buf.data_ptr() if at_root else None, nb,
                    dlcp.DTYPE_BYTES, root, ctypes.byref(o)))
            if not at_root:
                return None
            rows = buf[:W * nb].view(W, nb)
            return rows.clone() if rows.is_pinned() else rows
        finally:
            self._stage.release(buf)

    def reduce(self, tensors: Any, opts: Any = None) -> Any:
        """reduce: the root's tensor <- the reduction over the ranks; the
        others' tensors are left as they were."""
        tensors = _listify(tensors)
        if len(tensors) != 1:
            raise ValueError("dlcp backend: reduce takes one tensor per process")
        root = self._root("reduce", opts)
        op = _op_name(opts.reduceOp) if opts is not None else "SUM"
        _check_reduce(op, tensors)
        tmo = _timeout_ms(opts, self._timeout_ms)
        budgets = self._budgets()
        self.stats["reduce"] += 1

        def at_root(g: Any, ptr: int, n: int, dt: int, o: Any) -> int:
            return dlcp._reduce(g, ptr, n, dt, root, o)

        def run(seq: int, evs: Dict[int, Any]) -> List[torch.Tensor]:
            t = tensors[0]
            if _native(op, [t]):
                self._native_reduce(at_root, "dlcp_reduce", _T_REDUCE, seq, tmo, op, [t], [t],
                                    evs, budgets)
                return tensors
            b = _Bytes([t])
            rows = self._gather_root(seq, tmo, b, evs, t.is_cuda, root)
            if rows is not None:
                stack = torch.stack([b.segment(rows[r], 0) for r in range(self._size)])
                self._stage.from_host(t, _reduce_stack(stack, op, self._size).to(t.dtype), evs)
            return tensors
        return self._submit(self._q, "reduce", tensors, run, "to root %d" % root)

    def gather(self, output_tensors: List[List[torch.Tensor]],
               input_tensors: List[torch.Tensor], opts: Any = None) -> Any:
        """gather: at the root, output_tensors[0][r] <- rank r's
        input_tensors[0]; the other ranks pass no outputs."""
        root, inp, outs, tmo = self._rooted("gather", opts, input_tensors, "input",
                                            output_tensors, "output")

        def run(seq: int, evs: Dict[int, Any]) -> List[List[torch.Tensor]]:
            b = _Bytes([inp])
            rows = self._gather_root(seq, tmo, b, evs,
                                     inp.is_cuda or any(o.is_cuda for o in outs), root)
            if rows is not None:    # the root: the others have no outputs
                for r, o in enumerate(outs):
                    self._stage.from_host(o, b.segment(rows[r], 0), evs)
            return output_tensors
        return self._submit(self._q, "gather", [inp] + outs, run, "to root %d" % root)

    def scatter(self, output_tensors: List[torch.Tensor],
                input_tensors: List[List[torch.Tensor]], opts: Any = None) -> Any:
        """scatter: rank r's output_tensors[0] <- the root's
        input_tensors[0][r]; the other ranks pass no inputs."""
        root, out, ins, tmo = self._rooted("scatter", opts, output_tensors, "output",
                                           input_tensors, "input")

        def run(seq: int, evs: Dict[int, Any]) -> List[torch.Tensor]:
            W, at_root = self._size, self._rank == root
            b = _Bytes([out])
            nb = b.nbytes
            buf = self._stage.host((W if at_root else 1) * nb,
                                   out.is_cuda or any(t.is_cuda for t in ins))
            try:
                for r, t in enumerate(ins):
                    _Bytes([t]).pack(self._stage, buf[r * nb:(r + 1) * nb], evs)
                mine = buf[root * nb:(root + 1) * nb] if at_root else buf[:nb]
                if W > 1 and nb:
                    o, st = self._opts(_T_ROOTED, seq, tmo)
                    self._lib("dlcp_scatter", st, lambda g: dlcp._scatter(
                        g, buf.data_ptr() if at_root else None, mine.data_ptr(), nb,
                        dlcp.DTYPE_BYTES, root, ctypes.byref(o)))
                b.unpack(self._stage, mine, evs)
            finally:
                self._stage.release(buf)
            return output_tensors
        return self._submit(self._q, "scatter", [out] + ins, run, "from root %d" % root)

    def _alltoall(self, name: str, outs: Sequence[torch.Tensor], ins: Sequence[torch.Tensor],
                  opts: Any, result: Any, flat: Optional[Sequence[torch.Tensor]] = None) -> Any:
        """outs[p] <- rank p's ins[this rank], every tensor's bytes, over
        dlcp_all_to_allv (its shifted schedule). @flat: (output, input),
        contiguous CPU tensors of which @outs and @ins are views, which the
        library then reads and writes in place."""
        tmo = _timeout_ms(opts, self._timeout_ms)
        self.stats[name] += 1

        def call(seq: int, sp: int, soffs: Sequence[int], rp: int,
                 roffs: Sequence[int]) -> None:
            o, st = self._opts(_T_A2A, seq, tmo)
            self._lib("dlcp_all_to_allv", st, lambda g: dlcp._all_to_allv(
                g, sp, _sizes([_nbytes(t) for t in ins]), _sizes(soffs), rp,
                _sizes([_nbytes(t) for t in outs]), _sizes(roffs), dlcp.DTYPE_BYTES,
                ctypes.byref(o)))

        def run(seq: int, evs: Dict[int, Any]) -> Any:
            if flat is not None:
                rp, sp = flat[0].data_ptr(), flat[1].data_ptr()
                call(seq, sp, [t.data_ptr() - sp for t in ins], rp,
                     [t.data_ptr() - rp for t in outs])
                return result
            bi, bo = _Bytes(ins), _Bytes(outs)
            pinned = any(t.is_cuda for t in list(ins) + list(outs))
            sbuf = self._stage.host(bi.nbytes, pinned)
            rbuf = self._stage.host(bo.nbytes, pinned)
            try:
                bi.pack(self._stage, sbuf, evs)
                call(seq, sbuf.data_ptr(), bi.offs, rbuf.data_ptr(), bo.offs)
                bo.unpack(self._stage, rbuf, evs)
            finally:
                self._stage.release(sbuf)
                self._stage.release(rbuf)
            return result
        return self._submit(self._q, name, list(outs) + list(ins), run)

    def alltoall(self, output_tensors: List[torch.Tensor], input_tensors: List[torch.Tensor],
                 opts: Any = None) -> Any:
        """all_to_all: output_tensors[p] <- rank p's input_tensors[this rank]
        (the tensors may differ in size: uneven parts)."""
        if len(output_tensors) != self._size or len(input_tensors) != self._size:
            raise ValueError("dlcp backend: all_to_all of %d inputs into %d outputs, the "
                             "group has %d ranks" % (len(input_tensors), len(output_tensors),
                                                     self._size))
        for t in list(output_tensors) + list(input_tensors):
            if t.dtype != input_tensors[0].dtype:
                raise ValueError("dlcp backend: all_to_all of tensors of %s and %s"
                                 % (input_tensors[0].dtype, t.dtype))
        return self._alltoall("all_to_all", output_tensors, input_tensors, opts,
                              output_tensors)

    def _split(self, t: torch.Tensor, sizes: Sequence[int], what: str) -> List[torch.Tensor]:
        W = self._size
        rows = t.size(0) if t.dim() else 1
        if not sizes:
            if rows % W:
                raise ValueError("dlcp backend: all_to_all_single %s of %d rows does not split "
                                 "into %d equal parts" % (what, rows, W))
            sizes = [rows // W] * W
        elif len(sizes) != W or sum(sizes) != rows or min(sizes) < 0:
            raise ValueError("dlcp backend: all_to_all_single %s split sizes %s: %d sizes of "
                             "%d rows in all needed" % (what, list(sizes), W, rows))
        return list((t if t.dim() else t.reshape(1)).split(list(sizes)))

    def alltoall_base(self, output: torch.Tensor, input: torch.Tensor,  # noqa: A002
                      output_split_sizes: List[int], input_split_sizes: List[int],
                      opts: Any = None) -> Any:
        """all_to_all_single: the rows of @input cut by @input_split_sizes
        (empty: equal parts) to the ranks in order, the parts from them into
        the rows of @output cut by @output_split_sizes."""
        if output.dtype != input.dtype:
            raise ValueError("dlcp backend: all_to_all_single of %s into %s"
                             % (input.dtype, output.dtype))
        ins = self._split(input, input_split_sizes, "input")
        outs = self._split(output, output_split_sizes, "output")
        flat = [output, input] if all(not t.is_cuda and t.is_contiguous() and
                                      t.data_ptr() != 0 for t in (output, input)) else None
        return self._alltoall("all_to_all_single", outs, ins, opts, [output], flat)
