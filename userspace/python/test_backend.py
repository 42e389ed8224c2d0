#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Tests of the torch.distributed backend (dlcp.backend). TAP on stdout.

    /usr/bin/python3 userspace/python/test_backend.py [tcp|dlcp] [--loss]

Every job is started the way a user starts one: torchrun (python3 -m
dlcp.run, with a c10d rendezvous on a port the kernel chooses), whose
workers call init_process_group("dlcp"):

1. 2 and 3 ranks: every collective (all_reduce and reduce of every op on
   every dtype, exact against results computed on Python numbers, and the
   op/dtype pairs it refuses; every dtype through broadcast, all_gather,
   reduce_scatter and send/recv; broadcast from each root, their
   single-tensor forms, barrier, send/recv with tags) against values each
   rank computes itself; reduce, gather, scatter, all_to_all and
   all_to_all_single (uneven and empty parts; libdlcp's tests cover parts
   of several messages) against gloo's results or direct computations, gather_object,
   scatter_object_list, recv from any source; asynchronous Works and their
   futures; loss budgets only where asked: every job runs with
   DLCP_BUDGET_PPM and DLCP_BUDGET2_PPM set, which warn once and leave the
   default group and a new group without options exact, a group with a
   budget in its pg_options is lossy in its float all_reduce,
   reduce_scatter and reduce only, dlcp.backend.lossy() in the calls of
   its block only (pg.stats["lossy_calls"] counts the library calls that
   carried a budget); bad options and unsupported operations raise clear
   errors; a group with a 3 s timeout where the last rank never joins the
   all_reduce nor sends what another rank receives (nor anything a recv
   from any source would take): each fails with a timeout error within it,
   a torch.distributed.DistBackendError on torch 2.x; DDP (no comm
   hook) trains a small model for a few steps: its parameters agree across
   the ranks bit for bit, with a single-process reference and with DDP over
   gloo.
2. 2 ranks, one never calls init_process_group: the other's fails with a
   timeout error within the group's timeout.
3. 3 ranks, the last one's process exits in the middle of a 16 MiB
   all_reduce: the others' all_reduce, and the next one, fail with an
   error within the group's timeout; over DLCP, with ECONNREFUSED before
   it (the dead rank's host answers for its closed port).
4. 2 ranks on ::1 (DLCP_ADDR; without --loss, where the host has IPv6):
   the collectives of 1. over IPv6, in place of 1.'s 2-rank job.

Transport: libdlcp's TCP transport by default (any host), `dlcp` for DLCP
sockets (the VM, module loaded). With --loss (a lossy link, e.g. netem on
lo) only job 1's 3 ranks run, the checks that need every element are left
to the exact operations (the default group's among them: exact though
DLCP_BUDGET_PPM is set), and the loss-budget group checks what loss cannot
change (a mean over the contributions that arrived of equal contributions
is exact) and that its calls lost something.

    tools/vm-run --timeout 1800 --insmod kmod/dlcp.ko -- \\
        /usr/bin/python3 userspace/python/test_backend.py dlcp
"""
import datetime
import glob
import hashlib
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

from backend_checks import (ENV_BUDGETS, Checks, _backend_error, _expect_error, _same, _vals,
                            budgets, init_warned)

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT_S = 3.0          # the timeout of the group where a rank stays away
# how much later than it the error may come: 2.5 s on 2 shared cores, times
# DLCP_TIMEOUT_SCALE on a slow (debug) kernel, as the selftests' timeouts
SLACK_S = 2.5 * float(os.environ.get("DLCP_TIMEOUT_SCALE") or 1)


# ---------------------------------------------------------------------------
# Workers (run by torchrun)

def collectives(ck, loss):
    import torch
    import torch.distributed as dist
    R, W = dist.get_rank(), dist.get_world_size()
    ranks = range(W)
    f32, i64 = torch.float32, torch.int64

    def allreduce(name, dtype, op, n, expect):
        def t():
            x = _vals(R, n, dtype)
            dist.all_reduce(x, op=op)
            want = expect([_vals(r, n, dtype) for r in ranks])
            return _same(x, want), "got %s want %s" % (x[:4].tolist(), want[:4].tolist())
        ck.run("all_reduce %s %s (%d elements) exact" % (name, dtype, n), t)

    S = dist.ReduceOp
    tsum = lambda xs: torch.stack(xs).sum(0, dtype=xs[0].dtype)  # noqa: E731
    allreduce("SUM", f32, S.SUM, 1000, tsum)
    allreduce("SUM", f32, S.SUM, 1001, tsum)
    allreduce("SUM", torch.int32, S.SUM, 333, tsum)
    allreduce("SUM", torch.float16, S.SUM, 100, tsum)
    allreduce("SUM", torch.float64, S.SUM, 77, tsum)
    allreduce("SUM", i64, S.SUM, 77, tsum)
    if hasattr(S, "AVG"):
        allreduce("AVG", f32, S.AVG, 500, lambda xs: tsum(xs) / W)
    allreduce("MAX", i64, S.MAX, 50, lambda xs: torch.stack(xs).amax(0))
    allreduce("MIN", f32, S.MIN, 50, lambda xs: torch.stack(xs).amin(0))
    allreduce("PRODUCT", i64, S.PRODUCT, 9, lambda xs: torch.stack(xs).prod(0))

    def big_int():
        x = torch.full((5,), 1 << 40, dtype=i64) + R
        dist.all_reduce(x)
        want = torch.full((5,), W << 40, dtype=i64) + sum(ranks)
        return _same(x, want), x.tolist()
    ck.run("all_reduce SUM int64 beyond 32 bits exact", big_int)

    def bools():
        x = torch.tensor([R == 0, False, True, R == W - 1])
        dist.all_reduce(x)          # SUM of bool: any
        return _same(x, torch.tensor([True, False, True, True])), x.tolist()
    ck.run("all_reduce SUM bool (any)", bools)

    def bor():
        x = torch.tensor([1 << R, 3], dtype=i64)
        dist.all_reduce(x, op=S.BOR)
        return _same(x, torch.tensor([(1 << W) - 1, 3], dtype=i64)), x.tolist()
    ck.run("all_reduce BOR int64", bor)

    def coalesced():
        a, b = _vals(R, 10, f32), _vals(R, 6, f32).view(2, 3)
        dist.all_reduce_coalesced([a, b])
        return (_same(a, tsum([_vals(r, 10, f32) for r in ranks])) and
                _same(b, tsum([_vals(r, 6, f32).view(2, 3) for r in ranks]))), (a[:3], b)
    ck.run("all_reduce_coalesced of two tensors in one call", coalesced)

    def noncontig():
        x = _vals(R, 12, f32).view(3, 4).t()
        dist.all_reduce(x)
        want = tsum([_vals(r, 12, f32) for r in ranks]).view(3, 4).t()
        return _same(x, want)
    ck.run("all_reduce of a non-contiguous tensor", noncontig)

    def bcast():
        bad = []
        for root in ranks:
            a = (_vals(R, 20, f32) + 1000 * R).view(4, 5).t()      # non-contiguous
            b = _vals(R, 7, i64) * (1 << 35)
            c = torch.tensor([R == root, R != root, True])
            for t in (a, b, c):
                dist.broadcast(t, root)
            wa = (_vals(root, 20, f32) + 1000 * root).view(4, 5).t()
            ok = _same(a, wa) and _same(b, _vals(root, 7, i64) * (1 << 35)) and \
                _same(c, torch.tensor([True, False, True]))
            if not ok:
                bad.append(root)
        return not bad, "wrong from roots %s" % bad
    ck.run("broadcast float32 (non-contiguous), int64, bool from every root", bcast)

    def gather():
        outs = [torch.zeros(7, dtype=i64) for _ in ranks]
        dist.all_gather(outs, _vals(R, 7, i64) + R * 1000)
        outf = [torch.zeros(5) for _ in ranks]
        dist.all_gather(outf, _vals(R, 5, f32) / 4)
        return all(_same(outs[r], _vals(r, 7, i64) + r * 1000) and
                   _same(outf[r], _vals(r, 5, f32) / 4) for r in ranks), outs
    ck.run("all_gather int64 (7 elements) and float32", gather)

    def gather_base():
        fn = getattr(dist, "all_gather_into_tensor", None) or dist._all_gather_base
        out = torch.zeros(W * 6, dtype=torch.int32)
        fn(out, _vals(R, 6, torch.int32))
        return _same(out, torch.cat([_vals(r, 6, torch.int32) for r in ranks]))
    ck.run("all_gather_into_tensor (_all_gather_base)", gather_base)

    def rscatter():
        ins = [_vals(R, 9, f32) + j for j in ranks]
        out = torch.zeros(9)
        dist.reduce_scatter(out, ins)
        want = tsum([_vals(r, 9, f32) + R for r in ranks])
        outm = torch.zeros(4, dtype=i64)
        dist.reduce_scatter(outm, [_vals(R, 4, i64) * (j + 1) for j in ranks], op=S.MAX)
        wantm = torch.stack([_vals(r, 4, i64) * (R + 1) for r in ranks]).amax(0)
        return _same(out, want) and _same(outm, wantm), (out[:3], want[:3], outm, wantm)
    ck.run("reduce_scatter SUM float32 and MAX int64", rscatter)

    def rscatter_base():
        fn = getattr(dist, "reduce_scatter_tensor", None) or dist._reduce_scatter_base
        inp = torch.cat([_vals(R, 5, f32) * (j + 1) for j in ranks])
        out = torch.zeros(5)
        fn(out, inp)
        return _same(out, tsum([_vals(r, 5, f32) * (R + 1) for r in ranks]))
    ck.run("reduce_scatter_tensor (_reduce_scatter_base)", rscatter_base)

    def async_work():
        x = _vals(R, 64, f32)
        w = dist.all_reduce(x, async_op=True)
        v = w.get_future().wait()
        want = tsum([_vals(r, 64, f32) for r in ranks])
        return (w.is_completed() and w.wait() and isinstance(v, list) and _same(v[0], want)
                and _same(x, want)), type(w).__name__
    ck.run("async all_reduce: Work.wait(), get_future() holds the result", async_work)

    def p2p():
        nxt, prv = (R + 1) % W, (R - 1) % W
        got = torch.zeros(10, dtype=i64)
        rw = dist.irecv(got, prv, tag=5)
        sw = dist.isend(torch.arange(10, dtype=i64) + 100 * R, nxt, tag=5)
        sw.wait()
        rw.wait()
        ok = _same(got, torch.arange(10, dtype=i64) + 100 * prv)
        # tags match independently of order; one tag keeps its order
        if R == 0:
            for tag, v in ((1, 1.0), (2, 2.0), (7, 3.0), (7, 4.0)):
                dist.send(torch.full((3,), v), 1, tag=tag)
        elif R == 1:
            a, b, c, d = (torch.zeros(3) for _ in range(4))
            w2 = dist.irecv(b, 0, tag=2)
            w1 = dist.irecv(a, 0, tag=1)
            dist.recv(c, 0, tag=7)
            dist.recv(d, 0, tag=7)
            w2.wait()
            w1.wait()
            ok = ok and all(_same(t, torch.full((3,), v)) for t, v in
                            ((a, 1.0), (b, 2.0), (c, 3.0), (d, 4.0)))
        return ok, got.tolist()
    ck.run("send/recv: a ring of isend/irecv, tags matched, one tag in order", p2p)

    def barrier():
        time.sleep(0.4 * R)
        t0 = time.time()
        dist.barrier()
        return True, json.dumps([t0, time.time()])
    ck.run("barrier", barrier)

    budgets(ck, loss)


# every dtype the backend moves; the reference results below are computed
# on Python integers (and complex numbers), not with torch's reductions
_DTYPES = ("uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
           "float32", "float64", "bool", "complex64")
_OPS = ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR")


def _kind(name):
    return "bool" if name == "bool" else "complex" if name.startswith("complex") else \
        "float" if name.startswith(("float", "bfloat")) else "int"


def _op_valid(op, kind):
    """Which (op, kind of dtype) the backend reduces; the rest raise ValueError."""
    if op == "AVG":
        return kind in ("float", "complex")
    if op in ("BAND", "BOR", "BXOR"):
        return kind in ("int", "bool")
    return kind != "complex" or op == "SUM"


def _mvals(op, kind, r, w, n):
    """Rank @r's values for @op: small enough that every result is exact in
    every dtype (float16 and bfloat16 included) and no integer overflows."""
    out = []
    for k in range(n):
        if kind == "bool":
            v = (k >> r) & 1
        elif op == "PRODUCT":
            v = 1 + (k + r) % 3 if kind != "float" else (1 + (k + r) % 3) * (-1) ** (k % 2)
        elif op == "AVG":
            v = w * ((k % 5) + r) * (-1) ** (k % 2)      # sums divide by w
        elif op in ("BAND", "BOR", "BXOR"):
            v = (k * 37 + r * 11) % 128
        else:
            v = (k * 7 + r * 13) % 23 - (11 if kind != "uint8" else 0)
        out.append(complex(v, (k + r) % 3) if kind == "complex" else v)
    return out


def _mreduce(op, cols, w):
    import functools
    fns = {"SUM": sum, "AVG": lambda c: sum(c) / w,
           "PRODUCT": lambda c: functools.reduce(lambda a, b: a * b, c),
           "MIN": min, "MAX": max,
           "BAND": lambda c: functools.reduce(lambda a, b: a & b, c),
           "BOR": lambda c: functools.reduce(lambda a, b: a | b, c),
           "BXOR": lambda c: functools.reduce(lambda a, b: a ^ b, c)}
    return [fns[op](c) for c in cols]


def _mtensor(vals, name):
    import torch
    dt = getattr(torch, name)
    if name == "bool":
        return torch.tensor([bool(v) for v in vals], dtype=dt)
    if name.startswith("complex"):
        return torch.tensor(vals, dtype=dt)
    if name.startswith(("float", "bfloat")):
        return torch.tensor([float(v) for v in vals], dtype=torch.float64).to(dt)
    return torch.tensor([int(v) for v in vals], dtype=torch.int64).to(dt)


def matrix(ck):
    """all_reduce and reduce of every op on every dtype, exactly; the op/dtype
    pairs the backend does not reduce raise ValueError; every dtype through broadcast,
    all_gather, reduce_scatter and send/recv."""
    import torch
    import torch.distributed as dist
    R, W = dist.get_rank(), dist.get_world_size()
    n = 37
    for op in _OPS:
        if not hasattr(dist.ReduceOp, op):
            continue
        rop = getattr(dist.ReduceOp, op)

        def one_op():
            bad, done = [], []
            for name in _DTYPES:
                kind = "uint8" if name == "uint8" else _kind(name)
                valid = _op_valid(op, _kind(name))
                x = _mtensor(_mvals(op, kind, R, W, n), name)
                if not valid:
                    # torch itself refuses complex tensors for these ops
                    ok, msg = _expect_error(lambda: dist.all_reduce(x, op=rop),
                                            "complex" if _kind(name) == "complex" else op)
                    if not ok:
                        bad.append("%s: %s" % (name, msg))
                    continue
                y = x.clone()
                dist.all_reduce(x, op=rop)
                cols = list(zip(*[_mvals(op, kind, r, W, n) for r in range(W)]))
                want = _mtensor(_mreduce(op, cols, W), name)
                if not _same(x, want):
                    bad.append("%s: got %s want %s" % (name, x[:5].tolist(), want[:5].tolist()))
                mine = y.clone()
                dist.reduce(y, W - 1, op=rop)       # the same to the last rank alone
                if not _same(y, want if R == W - 1 else mine):
                    bad.append("%s: reduce got %s" % (name, y[:5].tolist()))
                done.append(name)
            return not bad, "; ".join(bad) or "exact: " + " ".join(done)
        valid = [d for d in _DTYPES if _op_valid(op, _kind(d))]
        ck.run("all_reduce and reduce %s exact on %s; ValueError on %s" % (
            op, " ".join(valid), " ".join(d for d in _DTYPES if d not in valid) or "none"),
            one_op)

    for name in _DTYPES:
        kind = "uint8" if name == "uint8" else _kind(name)

        def moves():
            bad = []
            mine = _mtensor(_mvals("SUM", kind, R, W, n), name)
            for root in (0, W - 1):
                t = mine.clone()
                dist.broadcast(t, root)
                if not _same(t, _mtensor(_mvals("SUM", kind, root, W, n), name)):
                    bad.append("broadcast from %d" % root)
            outs = [torch.zeros_like(mine) for _ in range(W)]
            dist.all_gather(outs, mine)
            if not all(_same(outs[r], _mtensor(_mvals("SUM", kind, r, W, n), name))
                       for r in range(W)):
                bad.append("all_gather")
            # rank r's j-th input: its values + j (bool: its bits alone)
            add = (lambda v, j: v) if kind == "bool" else (lambda v, j: v + j)
            ins = [_mtensor([add(v, j) for v in _mvals("SUM", kind, R, W, n)], name)
                   for j in range(W)]
            out = torch.zeros_like(mine)
            dist.reduce_scatter(out, ins)
            cols = list(zip(*[[add(v, R) for v in _mvals("SUM", kind, r, W, n)]
                              for r in range(W)]))
            want = _mtensor(_mreduce("SUM", cols, W), name)
            if not _same(out, want):
                bad.append("reduce_scatter got %s want %s" % (out[:4].tolist(),
                                                              want[:4].tolist()))
            got = torch.zeros_like(mine)
            nxt, prv = (R + 1) % W, (R - 1) % W
            rw = dist.irecv(got, prv, tag=40)
            dist.isend(mine, nxt, tag=40).wait()
            rw.wait()
            if not _same(got, _mtensor(_mvals("SUM", kind, prv, W, n), name)):
                bad.append("send/recv")
            return not bad, ", ".join(bad)
        ck.run("%s: broadcast, all_gather, reduce_scatter SUM, send/recv exact" % name, moves)


def moves(ck):
    """reduce, gather, scatter, all_to_all, all_to_all_single (equal and
    uneven parts, empty ones), the object collectives on top of them and
    recv from any source, against direct computations and against gloo."""
    import torch
    import torch.distributed as dist
    R, W = dist.get_rank(), dist.get_world_size()
    S, f32, i64 = dist.ReduceOp, torch.float32, torch.int64
    gloo = dist.new_group(backend="gloo")

    def reduce():
        bad = []
        ops = [(S.SUM, f32, 1001), (S.SUM, torch.int32, 77), (S.SUM, torch.float16, 50),
               (S.MAX, i64, 33), (S.PRODUCT, torch.float64, 9), (S.MIN, torch.bool, 5)]
        if hasattr(S, "AVG"):
            ops.append((S.AVG, f32, 40))
        for root in sorted({0, W - 1}):
            for op, dt, n in ops:
                x, xg = _vals(R, n, dt), _vals(R, n, dt)
                if op == S.PRODUCT:
                    x, xg = x % 3 + 1, xg % 3 + 1
                mine = x.clone()
                dist.reduce(x, root, op=op)
                # gloo reduces neither bool (MIN: "all") nor with AVG
                if dt == torch.bool:
                    xg = torch.stack([_vals(r, n, dt) for r in range(W)]).all(0)
                elif op == getattr(S, "AVG", None):
                    xg = torch.stack([_vals(r, n, dt) for r in range(W)]).sum(0) / W
                else:
                    dist.reduce(xg, root, op=op, group=gloo)
                if R == root and not _same(x, xg) or R != root and not _same(x, mine):
                    bad.append("%s %s root %d: %s, gloo %s" % (op, dt, root, x[:4].tolist(),
                                                               xg[:4].tolist()))
        return not bad, "; ".join(bad)
    ck.run("reduce SUM float32/int32/float16, MAX int64, PRODUCT float64 to roots 0 and %d "
           "= gloo's, MIN bool and AVG exact; other ranks' tensors unchanged" % (W - 1), reduce)

    def gather_scatter():
        bad = []
        for root in sorted({0, W - 1}):
            for dt, n in ((i64, 7), (f32, 1001), (torch.bool, 3)):
                def v(r, k):
                    return _vals(r, n, dt) if dt == torch.bool else _vals(r, n, dt) + k
                outs = [torch.zeros(n, dtype=dt) for _ in range(W)] if R == root else None
                dist.gather(v(R, R), outs, root)
                if R == root and not all(_same(outs[r], v(r, r)) for r in range(W)):
                    bad.append("gather %s to %d" % (dt, root))
                out = torch.zeros(n, dtype=dt)
                dist.scatter(out, [v(root, 10 * r) for r in range(W)] if R == root else None,
                             root)
                if not _same(out, v(root, 10 * R)):
                    bad.append("scatter %s from %d" % (dt, root))
        return not bad, ", ".join(bad)
    ck.run("gather and scatter int64, float32, bool to/from roots 0 and %d exact"
           % (W - 1), gather_scatter)

    # rank s sends rank d (s + 2 d) % 3 rows of 3 (some parts empty)
    def rows(s, d):
        return (s + 2 * d) % 3

    def part(s, d, dt):
        return (torch.arange(rows(s, d) * 3).view(-1, 3) + 100 * s + 10 * d).to(dt)

    def a2a_list():
        outs = [torch.full((rows(p, R), 3), -1, dtype=i64) for p in range(W)]
        dist.all_to_all(outs, [part(R, d, i64) for d in range(W)])
        return all(_same(outs[p], part(p, R, i64)) for p in range(W)), [o.tolist() for o in outs]
    ck.run("all_to_all of lists, uneven parts (some empty) exact", a2a_list)

    def a2a_single():
        ins = [rows(R, d) for d in range(W)]
        outs_n = [rows(p, R) for p in range(W)]
        x = torch.cat([part(R, d, torch.float64) for d in range(W)])
        y, yg = (torch.zeros(sum(outs_n), 3, dtype=torch.float64) for _ in range(2))
        dist.all_to_all_single(y, x, outs_n, ins)
        dist.all_to_all_single(yg, x, outs_n, ins, group=gloo)
        yt = torch.zeros(3, sum(outs_n), dtype=torch.float64).t()      # not contiguous
        dist.all_to_all_single(yt, x.t().contiguous().t(), outs_n, ins)
        P = 1001
        big = torch.arange(W * P, dtype=f32) + R * 0.5
        out = torch.zeros_like(big)
        dist.all_to_all_single(out, big)
        want = torch.cat([torch.arange(R * P, (R + 1) * P, dtype=f32) + p * 0.5
                          for p in range(W)])
        ok1 = _same(y, torch.cat([part(p, R, torch.float64) for p in range(W)]))
        return ok1 and _same(y, yg) and _same(yt, y) and _same(out, want), (
            y[:2].tolist(), yg[:2].tolist(), yt[:2].tolist())
    ck.run("all_to_all_single: uneven splits (some empty) = gloo's, of non-contiguous "
           "tensors too, equal splits exact", a2a_single)

    def bad_split():
        return _expect_error(lambda: dist.all_to_all_single(
            torch.zeros(W), torch.zeros(W), [1] * W, [W] * W), "split sizes")
    ck.run("all_to_all_single with split sizes that do not add up: ValueError", bad_split)

    def objects():
        obj = {"rank": R, "data": list(range(R + 1))}
        got = [None] * W if R == 0 else None
        dist.gather_object(obj, got, dst=0)
        out = [None]
        dist.scatter_object_list(out, [("to", r, "x" * r) for r in range(W)] if R == W - 1
                                 else None, src=W - 1)
        ok = out[0] == ("to", R, "x" * R) and (R != 0 or got == [
            {"rank": r, "data": list(range(r + 1))} for r in range(W)])
        return ok, (got, out)
    ck.run("gather_object and scatter_object_list", objects)

    def anysource():
        if R == 0:
            got = []
            for _ in range(W - 1):
                t = torch.zeros(2, dtype=i64)
                src = dist.recv(t, tag=31)
                got.append((src, t.tolist()))
            return sorted(got) == [(r, [r, 7 * r]) for r in range(1, W)], got
        dist.send(torch.tensor([R, 7 * R]), 0, tag=31)
        return True
    ck.run("recv from any source returns each sender's rank and tensor", anysource)
    dist.barrier()


def errors(ck):
    import torch
    import torch.distributed as dist
    import dlcp.backend
    from dlcp.rendezvous import ConfigError
    R = dist.get_rank()
    ck.run("unknown option: ValueError naming it and the known ones", lambda: _expect_error(
        lambda: dist.new_group(pg_options={"budget": 50000}), "ValueError", "'budget'",
        "budget_ppm", "budget2_ppm"))
    ck.run("budget_ppm out of range: ValueError", lambda: _expect_error(
        lambda: dist.new_group(pg_options={"budget_ppm": 2000000}), "budget_ppm", "0..1000000"))
    ck.run("unknown algo: ValueError naming the choices", lambda: _expect_error(
        lambda: dist.new_group(pg_options={"algo": "tree"}), "algo", "direct", "ring"))
    ck.run("pg_options of another type: TypeError", lambda: _expect_error(
        lambda: dist.new_group(pg_options=42), "TypeError", "pg_options"))

    def bad_env():
        os.environ["DLCP_ALGO"] = "tree"
        try:
            return _expect_error(lambda: dist.new_group(), "DLCP_ALGO", "'tree'", "direct",
                                 kind=ConfigError)
        finally:
            del os.environ["DLCP_ALGO"]
    ck.run("DLCP_ALGO not an algorithm: ConfigError naming it", bad_env)
    ck.add("ConfigError is a ValueError", issubclass(ConfigError, ValueError))
    ck.add("DlcpError is torch's error of a failed collective (%s)" % _backend_error().__name__,
           issubclass(dlcp.backend.DlcpError, _backend_error()) and
           issubclass(dlcp.backend.DlcpError, RuntimeError))

    def bad_lossy():
        gloo = dist.new_group(backend="gloo")

        def enter(*a, **kw):
            with dlcp.backend.lossy(*a, **kw):
                pass
        r1 = _expect_error(lambda: enter(gloo, budget_ppm=1000), "not a dlcp process group",
                           kind=TypeError)
        r2 = _expect_error(lambda: enter(None, budget_ppm=-1), "budget_ppm", "0..1000000",
                           kind=ValueError)
        r3 = _expect_error(lambda: enter(None, 1000, budget2_ppm=1.5), "budget2_ppm",
                           kind=ValueError)
        return r1[0] and r2[0] and r3[0], "; ".join((r1[1], r2[1], r3[1]))
    ck.run("dlcp.backend.lossy() of a gloo group: TypeError; a budget out of range: "
           "ValueError naming it", bad_lossy)
    if hasattr(dist.ReduceOp, "AVG"):
        ck.run("AVG of an int64 tensor: ValueError", lambda: _expect_error(
            lambda: dist.all_reduce(torch.ones(3, dtype=torch.int64), op=dist.ReduceOp.AVG),
            "AVG", "floating"))

    def size_mismatch():
        if R == 0:
            dist.send(torch.ones(4), 1, tag=11)
            return True
        if R == 1:
            return _expect_error(lambda: dist.recv(torch.zeros(3), 0, tag=11), "16 bytes",
                                 "12", "from rank 0", kind=_backend_error())
        return True
    ck.run("recv into a tensor of another size: error naming the peer", size_mismatch)
    dist.barrier()


def timeouts(ck):
    import torch
    import torch.distributed as dist
    R, W = dist.get_rank(), dist.get_world_size()
    N1 = ("a group with a %g s timeout, the last rank never joins an all_reduce: "
          "the others fail with a timeout error (a %s) within it"
          % (TIMEOUT_S, _backend_error().__name__))
    N2 = ("... nor sends what a recv waits for: the recv fails with a timeout error naming "
          "the peer within it")
    N3 = "... a recv from any source that nothing matches fails with a timeout error within it"
    tg = dist.new_group(timeout=datetime.timedelta(seconds=TIMEOUT_S))
    late = W - 1
    if R != late:
        got = torch.zeros(3)
        t0 = time.monotonic()
        rw = dist.irecv(got, late, group=tg, tag=9)
        aw = dist.irecv(torch.zeros(3), group=tg, tag=10)          # from any source
        kind = _backend_error()
        ok1, msg1 = _expect_error(lambda: dist.all_reduce(torch.ones(1000), group=tg),
                                  "all_reduce", "timed out", kind=kind)
        t1 = time.monotonic() - t0
        ok2, msg2 = _expect_error(rw.wait, "recv", "from rank %d" % late, "timeout", kind=kind)
        t2 = time.monotonic() - t0
        ok3, msg3 = _expect_error(aw.wait, "timeout", "any", kind=kind)
        t3 = time.monotonic() - t0
        ck.add(N1, ok1 and TIMEOUT_S - 0.5 <= t1 <= TIMEOUT_S + SLACK_S,
               "after %.1f s: %s" % (t1, msg1), show=True)
        ck.add(N2, ok2 and TIMEOUT_S - 0.5 <= t2 <= TIMEOUT_S + SLACK_S,
               "after %.1f s: %s" % (t2, msg2), show=True)
        ck.add(N3, ok3 and TIMEOUT_S - 0.5 <= t3 <= TIMEOUT_S + SLACK_S,
               "after %.1f s: %s" % (t3, msg3), show=True)
    else:
        for name in (N1, N2, N3):
            ck.add(name, True, "the rank that stays away")
    dist.barrier()


def ddp(ck):
    import torch
    import torch.distributed as dist
    import torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel as DDP
    R, W = dist.get_rank(), dist.get_world_size()
    B, STEPS = 8, 6

    def make(seed):
        torch.manual_seed(seed)
        return nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 4))

    torch.manual_seed(7)
    X, Y = torch.randn(STEPS, W * B, 8), torch.randn(STEPS, W * B, 4)

    def train(model, full):
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        for s in range(STEPS):
            x, y = (X[s], Y[s]) if full else (X[s, R * B:(R + 1) * B], Y[s, R * B:(R + 1) * B])
            opt.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            opt.step()
        return torch.cat([p.detach().reshape(-1) for p in model.parameters()])

    # each rank starts from its own weights: DDP must broadcast rank 0's
    m = DDP(make(100 + R), bucket_cap_mb=0.001)     # several buckets
    p = train(m, False)
    ref = train(make(100), True)
    gloo = dist.new_group(backend="gloo")
    pg = train(DDP(make(100 + R), process_group=gloo, bucket_cap_mb=0.001), False)
    d_ref = float((p - ref).abs().max())
    d_gloo = float((p - pg).abs().max())
    ck.add("DDP over dlcp (no hook, %d steps): parameters = the single-process "
           "reference's (max diff %.2g)" % (STEPS, d_ref), d_ref <= 1e-5)
    ck.add("DDP over dlcp: parameters = DDP over gloo's (max diff %.2g%s)" % (
        d_gloo, ", bit for bit" if d_gloo == 0 else ""), d_gloo <= 1e-5)
    ck.add("DDP parameters", True, hashlib.sha256(p.numpy().tobytes()).hexdigest())


def vanish(ck):
    """The last rank dies in the middle of a large all_reduce (its process
    exits at once, sockets and all, with status 0 so that torchrun lets the
    others go on): every other rank's all_reduce fails with an error within
    the group's timeout, and a later one fails too.

    The dying rank exits 1 ms after it starts: its part of the others'
    result needs their 32 MiB sent to it, summed and sent back, which no
    host does in that time. Given longer, or a smaller tensor, a quiet host
    can finish that part before the rank exits, and another rank's
    all_reduce then rightly succeeds."""
    import torch
    import torch.distributed as dist
    dist.init_process_group("dlcp", timeout=datetime.timedelta(seconds=TIMEOUT_S))
    R, W = dist.get_rank(), dist.get_world_size()
    x = torch.ones(1 << 10)
    dist.all_reduce(x)
    warm = _same(x, torch.full((1 << 10,), float(W)))
    big = torch.ones(1 << 23)
    if R == W - 1:
        dist.all_reduce(big, async_op=True)
        time.sleep(0.001)
        os._exit(0)
    t0 = time.monotonic()
    ok1, msg1 = _expect_error(lambda: dist.all_reduce(big), "all_reduce", kind=_backend_error())
    t1 = time.monotonic() - t0
    ok2, msg2 = _expect_error(lambda: dist.all_reduce(torch.ones(8)), "all_reduce",
                              kind=_backend_error())
    t2 = time.monotonic() - t0
    ck.add("a rank dies in the middle of a 32 MiB all_reduce: the others' fails "
           "with an error within the group's %g s timeout" % TIMEOUT_S,
           warm and ok1 and t1 <= TIMEOUT_S + SLACK_S,
           "after %.1f s: %s" % (t1, msg1), show=True)
    ck.add("... and the next all_reduce fails with an error within it too",
           ok2 and t2 - t1 <= TIMEOUT_S + SLACK_S, "after %.1f s: %s" % (t2 - t1, msg2),
           show=True)
    if os.environ.get("DLCP_TRANSPORT") == "dlcp":
        # the dead rank's host answers for its closed port (NOPORT): the
        # rank that sends to it fails with ECONNREFUSED within a round
        # trip and aborts the others, long before the group's timeout
        ck.add("... over DLCP, the first error says the peer's port closed "
               "(ECONNREFUSED), before the group's timeout",
               ok1 and "refused" in msg1.lower() and t1 < TIMEOUT_S,
               "after %.2f s: %s" % (t1, msg1), show=True)


def worker(argv):
    import torch  # noqa: F401
    import torch.distributed as dist
    import dlcp.backend  # noqa: F401  (registers "dlcp")
    mode, out = argv[0], argv[1]
    loss = "--loss" in argv
    ck = Checks()
    rank = int(os.environ["RANK"])
    if mode == "nojoin":
        if rank == 1:       # never joins
            return 0
        t0 = time.monotonic()
        ok, msg = _expect_error(lambda: dist.init_process_group(
            "dlcp", timeout=datetime.timedelta(seconds=TIMEOUT_S)), "timed out",
            kind=_backend_error())
        dt = time.monotonic() - t0
        # the backend's rendezvous says how long it waited; torch's env://
        # rendezvous before it waits for the missing worker too (1.13: once
        # more the timeout, then goes on)
        m = re.search(r"rendezvous of rank 0 of 2 timed out after ([0-9.]+) s", msg)
        waited = float(m.group(1)) if m else -1
        ck.add("a rank never calls init_process_group: the other's fails with a timeout "
               "error, its rendezvous within the %g s timeout" % TIMEOUT_S,
               ok and TIMEOUT_S - 0.5 <= waited <= TIMEOUT_S + SLACK_S and
               dt <= 2 * TIMEOUT_S + 2 * SLACK_S,
               "%.1f s in the backend's rendezvous, %.1f s in init_process_group: %s"
               % (waited, dt, msg), show=True)
    elif mode == "vanish":
        vanish(ck)
    elif mode == "v6":
        init_warned(ck)
        addrs = [dist.group.WORLD._group.addr(r) for r in range(dist.get_world_size())]
        ck.add("init_process_group(\"dlcp\") with DLCP_ADDR=::1: every rank at [::1] (%s)"
               % ", ".join(addrs), all(a.startswith("[::1]:") for a in addrs))
        collectives(ck, loss)
        dist.barrier()
    else:
        init_warned(ck)
        ck.add("init_process_group(\"dlcp\"): %s" % type(dist.group.WORLD).__name__,
               dist.get_backend() == "dlcp" and
               type(dist.group.WORLD).__name__ == "ProcessGroupDlcp")
        for part in (collectives, matrix, moves, errors, timeouts, ddp):
            if part is collectives:
                part(ck, loss)
            else:
                part(ck)
        dist.barrier()
    with open(os.path.join(out, "rank%d.json" % rank), "w") as f:
        json.dump({"rank": rank, "world": int(os.environ["WORLD_SIZE"]), "checks": ck.rows}, f)
    return 0


# ---------------------------------------------------------------------------
# The driver

results = []


def check(name, ok, detail=None):
    results.append(bool(ok))
    print("%sok %d - %s" % ("" if ok else "not ", len(results), name), flush=True)
    if not ok and detail:
        for line in str(detail).splitlines()[:12]:
            print("# " + line)


def job(nproc, mode, transport, loss, addr="127.0.0.1"):
    """Run a torchrun job of @nproc workers; (rc, reports by rank, stderr tail)."""
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, PYTHONPATH=HERE, DLCP_ADDR=addr,
                   DLCP_TRANSPORT=transport, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1",
                   PYTHONDONTWRITEBYTECODE="1")
        env.pop("DLCP_ALGO", None)
        env.update(ENV_BUDGETS)
        cmd = [sys.executable, "-m", "dlcp.run", "--nproc_per_node=%d" % nproc,
               "--monitor_interval=0.5", "--rdzv_backend=c10d", "--rdzv_endpoint=127.0.0.1:0",
               os.path.abspath(__file__), "worker", mode, d] + (["--loss"] if loss else [])
        try:
            p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
            rc, err = p.returncode, p.stderr
        except subprocess.TimeoutExpired as e:
            rc, err = "timeout", (e.stderr or b"").decode(errors="replace") \
                if isinstance(e.stderr, bytes) else (e.stderr or "")
        reps = {}
        for f in glob.glob(os.path.join(d, "rank*.json")):
            with open(f) as fh:
                r = json.load(fh)
            reps[r["rank"]] = r
    return rc, reps, failure_lines(err)


def failure_lines(err, n=12):
    """The lines of a failed job's stderr that say why: the workers' own
    errors first (torchrun's traceback of ChildFailedError names none),
    then the last lines."""
    lines = [line for line in err.splitlines() if "Warning" not in line]
    why = [line for line in lines
           if re.search(r"\w(Error|Exception)\b|Timeout|Errno", line)
           and "ChildFailedError" not in line and not line.lstrip().startswith("File ")]
    why = list(dict.fromkeys(why))[:n // 2]
    return "\n".join(why + [line for line in lines[-n:] if line not in why][-(n - len(why)):])


def report(label, nproc, rc, reps, err, expect_ranks):
    check("%s: torchrun ran %d workers, exit status %s, %d reported" % (
        label, nproc, rc, len(reps)), rc == 0 and sorted(reps) == expect_ranks, err)
    if not reps:
        return
    names = [c[0] for c in reps[min(reps)]["checks"]]
    for i, name in enumerate(names):
        rows = [(r, reps[r]["checks"][i]) for r in sorted(reps)
                if i < len(reps[r]["checks"]) and reps[r]["checks"][i][0] == name]
        if name == "DDP parameters":
            hs = {row[2] for _, row in rows}
            check("%s: DDP parameters identical on the %d ranks (bit for bit)" % (
                label, len(rows)), len(rows) == len(reps) and len(hs) == 1, hs)
            continue
        if name == "barrier":
            ts = [json.loads(row[2]) for _, row in rows if row[1]]
            ok = len(ts) == len(reps) and min(t[1] for t in ts) >= max(t[0] for t in ts)
            check("%s: barrier: no rank left before the last one entered" % label, ok, ts)
            continue
        ok = len(rows) == len(reps) and all(row[1] for _, row in rows)
        detail = "\n".join("rank %d: %s" % (r, row[2]) for r, row in rows if not row[1])
        check("%s: %s" % (label, name), ok, detail)
        shown = [(r, row[2]) for r, row in rows if row[3] and row[1]][:1]
        for r, text in shown:
            print("# rank %d: %s" % (r, text))


def have_ipv6():
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


def main(argv):
    if argv[:1] == ["worker"]:
        return worker(argv[1:])
    transport = "dlcp" if "dlcp" in argv else "tcp"
    loss = "--loss" in argv
    print("TAP version 13")
    try:
        import torch  # noqa: F401
        import torch.distributed as dist
        ok = dist.is_available()
    except ImportError:
        ok = False
    if not ok:
        print("1..0 # SKIP torch.distributed is not importable here")
        return 0
    t0 = time.monotonic()
    # on a lossy link the 3-rank job alone: the error paths and the 2-rank
    # job's checks are those of a clean one, where they run; where the
    # host has IPv6, 2 ranks run the collectives over ::1 (job 4) and
    # every check of job 1 runs with 3, as each job costs minutes in the VM
    v6 = not loss and have_ipv6()
    for nproc in (3,) if loss or v6 else (2, 3):
        label = "%d ranks over %s" % (nproc, transport)
        rc, reps, err = job(nproc, "main", transport, loss)
        report(label, nproc, rc, reps, err, list(range(nproc)))
    if not loss:
        rc, reps, err = job(2, "nojoin", transport, loss)
        report("2 ranks, one never joins", 2, rc, reps, err, [0])
        rc, reps, err = job(3, "vanish", transport, loss)
        report("3 ranks, one dies", 3, rc, reps, err, [0, 1])
    if v6:
        rc, reps, err = job(2, "v6", transport, loss, addr="::1")
        report("2 ranks over %s on ::1" % transport, 2, rc, reps, err, [0, 1])
    print("1..%d" % len(results))
    print("# %d passed, %d failed (%.0f s)" % (sum(results), len(results) - sum(results),
                                              time.monotonic() - t0))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
