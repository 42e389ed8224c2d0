# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""What the workers of test_backend.py share: the table of checks and the
helpers that compute and compare their values, and the checks that loss
budgets apply where a program asks for them and nowhere else. Imported by
test_backend.py; not a test of its own.

Every job test_backend.py starts has ENV_BUDGETS in its environment: a
user who still sets DLCP_BUDGET_PPM expecting a lossy default group gets
one warning, and exact groups.
"""
import datetime
import traceback
import warnings

# what every job has in its environment: budgets that no group may take
ENV_BUDGETS = {"DLCP_BUDGET_PPM": "50000", "DLCP_BUDGET2_PPM": "50000"}


class Checks:
    def __init__(self):
        self.rows = []

    def add(self, name, ok, detail="", show=False):
        """@show: print @detail (rank 0's) under the result even when it passes."""
        self.rows.append([name, bool(ok), str(detail)[:500], show])

    def run(self, name, fn, show=False):
        """fn() -> (ok, detail) or ok; an exception fails the check."""
        try:
            r = fn()
            ok, detail = r if isinstance(r, tuple) else (r, "")
        except Exception as e:  # noqa: BLE001
            ok, detail = False, "%s: %s | %s" % (
                type(e).__name__, e, traceback.format_exc().splitlines()[-3:])
        self.add(name, ok, detail, show)


def _vals(r, n, dtype):
    import torch
    return ((torch.arange(n, dtype=torch.int64) * 7 + r * 13) % 101 - 50).to(dtype)


def _same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and bool((a == b).all())


def _expect_error(fn, *words, kind=Exception):
    """(ok, detail): fn() raised an error of class @kind whose text has every
    word."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        msg = "%s: %s" % (type(e).__name__, e)
        ok = isinstance(e, kind) and all(w.lower() in msg.lower() for w in words)
        return ok, msg if isinstance(e, kind) else "%s, not a %s" % (msg, kind.__name__)
    return False, "no error"


def _backend_error():
    """The class of torch's collective errors: DistBackendError on torch
    2.x, RuntimeError on 1.13."""
    import torch.distributed as dist
    return getattr(dist, "DistBackendError", RuntimeError)


def init_warned(ck):
    """init_process_group("dlcp") with ENV_BUDGETS in the environment: one
    warning says that no group takes them."""
    import torch.distributed as dist
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        dist.init_process_group("dlcp", timeout=datetime.timedelta(seconds=120))
    ours = [str(w.message) for w in warned if "DLCP_BUDGET" in str(w.message)]
    ck.add("DLCP_BUDGET_PPM, DLCP_BUDGET2_PPM set: init_process_group(\"dlcp\") warns once "
           "that they are no group's budget", len(ours) == 1 and all(
               w in ours[0] for w in ("DLCP_BUDGET_PPM=50000", "DLCP_BUDGET2_PPM=50000",
                                      "exact", "pg_options")), ours)


def budgets(ck, loss):
    """Loss budgets apply where the program asks for them, and nowhere else
    (the job's environment has ENV_BUDGETS)."""
    import dlcp.backend
    import torch
    import torch.distributed as dist
    R, W = dist.get_rank(), dist.get_world_size()
    ranks = range(W)
    S, f32, i32 = dist.ReduceOp, torch.float32, torch.int32
    tsum = lambda xs: torch.stack(xs).sum(0, dtype=xs[0].dtype)  # noqa: E731
    wg = dist.group.WORLD

    def lost_everywhere(st0, g):
        """Bytes the ranks lost in @g's calls since @st0 (an exact sum)."""
        t = torch.tensor([g.stats["bytes_lost"] - st0.get("bytes_lost", 0)], dtype=torch.int64)
        dist.all_reduce(t)
        return int(t)

    def default_exact():
        # budgets the environment has are no group's: a 256 KiB float
        # all_reduce of different contributions and an int one exact, no
        # library call with a budget, nothing lost, on the default group
        # and on a new group without options
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            g = dist.new_group(backend="dlcp")
        bad, n = [], 1 << 16
        for pg in (wg, g):
            st0 = dict(pg.stats)
            x, xi = _vals(R, n, f32), _vals(R, 333, i32)
            dist.all_reduce(x, group=pg)
            dist.all_reduce(xi, group=pg)
            if not _same(x, tsum([_vals(r, n, f32) for r in ranks])):
                bad.append("float32 not exact")
            if not _same(xi, tsum([_vals(r, 333, i32) for r in ranks])):
                bad.append("int32 not exact")
            o = pg.options
            if (o.budget_ppm, o.budget2_ppm) != (0, 0):
                bad.append("options %s" % o)
            if pg.stats["lossy_calls"] != st0.get("lossy_calls", 0):
                bad.append("%d calls with a budget" % (pg.stats["lossy_calls"] -
                                                       st0.get("lossy_calls", 0)))
            if lost_everywhere(st0, pg):
                bad.append("bytes lost")
        if any("DLCP_BUDGET" in str(w.message) for w in warned):
            bad.append("warned again: %s" % warned[0].message)
        return not bad, "; ".join(bad) or (wg.options, g.options)
    ck.run("DLCP_BUDGET_PPM and DLCP_BUDGET2_PPM set: the default group and a new group "
           "without options are exact (float32 and int32 all_reduce, no call with a budget)",
           default_exact)

    n = 1 << 18

    def group_budget():
        g = dist.new_group(backend="dlcp", pg_options={"budget_ppm": 50000, "budget2_ppm": 0})
        o, st0 = g.options, dict(g.stats)
        ok = o.budget_ppm == 50000 and o.budget2_ppm == 0
        for _ in range(3):
            v = torch.full((n,), 3.0)
            dist.all_reduce(v, group=g)         # SUM: scaled by N / arrived
            ok = ok and _same(v, torch.full((n,), 3.0 * W))
        if hasattr(S, "AVG"):
            m = torch.full((n,), 5.0)
            dist.all_reduce(m, group=g, op=S.AVG)
            ok = ok and _same(m, torch.full((n,), 5.0))
        x = _vals(R, 1000, f32)
        dist.all_reduce(x, group=g)
        ok = ok and (loss or _same(x, tsum([_vals(r, 1000, f32) for r in ranks])))
        calls = g.stats["lossy_calls"] - st0.get("lossy_calls", 0)
        want = 4 + hasattr(S, "AVG")
        lost = lost_everywhere(st0, g)
        return ok and calls == want and (lost > 0 or not loss), (
            "%s; %d of %d calls with a budget; elements lost %d, bytes lost %d (all ranks %d)"
            % (o, calls, want, g.stats["elems_lost"], g.stats["bytes_lost"], lost))
    ck.run("group with a loss budget (pg_options): every float all_reduce carries it; sums "
           "and means of equal contributions exact%s" % (
               ", and loss happened" if loss else ", any contributions exact over TCP"),
           group_budget, show=True)

    def only_where_asked():
        # on a group with both budgets, only float all_reduce, reduce_scatter
        # and reduce with SUM or AVG carry them
        g = dist.new_group(backend="dlcp",
                           pg_options={"budget_ppm": 50000, "budget2_ppm": 50000})
        gloo = dist.new_group(backend="gloo")
        bad = []

        def calls(what, fn, want):
            c0 = g.stats["lossy_calls"]
            ok = fn()
            got = g.stats["lossy_calls"] - c0
            if got != want or ok is False:
                bad.append("%s: %d calls with a budget%s" % (what, got,
                                                             "" if ok is not False else
                                                             ", wrong result"))
        xi = _vals(R, 100, i32)
        calls("int32 SUM", lambda: (dist.all_reduce(xi, group=g), _same(
            xi, tsum([_vals(r, 100, i32) for r in ranks])))[1], 0)
        xm = _vals(R, 100, f32)
        calls("float32 MAX", lambda: (dist.all_reduce(xm, op=S.MAX, group=g), _same(
            xm, torch.stack([_vals(r, 100, f32) for r in ranks]).amax(0)))[1], 0)
        x64 = _vals(R, 100, torch.float64)
        calls("float64 SUM", lambda: (dist.all_reduce(x64, group=g), _same(
            x64, tsum([_vals(r, 100, torch.float64) for r in ranks])))[1], 0)
        b = _vals(R, 100, f32) + R
        calls("broadcast", lambda: (dist.broadcast(b, 0, group=g),
                                    _same(b, _vals(0, 100, f32)))[1], 0)
        outs = [torch.zeros(50) for _ in ranks]
        calls("all_gather", lambda: (dist.all_gather(outs, _vals(R, 50, f32) + R, group=g),
                                     all(_same(outs[r], _vals(r, 50, f32) + r)
                                         for r in ranks))[1], 0)
        go = [torch.zeros(50) for _ in ranks] if R == 0 else None
        calls("gather", lambda: (dist.gather(_vals(R, 50, f32) * 2, go, 0, group=g),
                                 R != 0 or all(_same(go[r], _vals(r, 50, f32) * 2)
                                               for r in ranks))[1], 0)
        so = torch.zeros(50)
        calls("scatter", lambda: (dist.scatter(so, [_vals(r, 50, f32) - 1 for r in ranks]
                                               if R == W - 1 else None, W - 1, group=g),
                                  _same(so, _vals(R, 50, f32) - 1))[1], 0)
        ao = [torch.zeros(20) for _ in ranks]
        calls("all_to_all", lambda: (dist.all_to_all(
            ao, [_vals(R, 20, f32) + 100 * d for d in ranks], group=g),
            all(_same(ao[p], _vals(p, 20, f32) + 100 * R) for p in ranks))[1], 0)
        a1, a2 = torch.arange(W * 30, dtype=f32) + R, torch.zeros(W * 30)
        a2g = torch.zeros(W * 30)
        calls("all_to_all_single", lambda: (dist.all_to_all_single(a2, a1, group=g),
                                            dist.all_to_all_single(a2g, a1, group=gloo),
                                            _same(a2, a2g))[2], 0)
        calls("barrier", lambda: dist.barrier(group=g), 0)

        def objects():
            got = [None] * W
            dist.all_gather_object(got, ("r", R), group=g)
            lst = [("b", R)]
            dist.broadcast_object_list(lst, src=0, group=g)
            return got == [("r", r) for r in ranks] and lst == [("b", 0)]
        calls("object collectives", objects, 0)
        f = torch.full((n,), 2.0)
        calls("float32 SUM", lambda: (dist.all_reduce(f, group=g),
                                      _same(f, torch.full((n,), 2.0 * W)))[1], 1)
        rs = torch.zeros(n // W)
        calls("reduce_scatter float32", lambda: (dist.reduce_scatter(
            rs, [torch.full((n // W,), 1.0) for _ in ranks], group=g),
            _same(rs, torch.full((n // W,), 1.0 * W)))[1], 1)
        rd = torch.full((n,), 4.0)
        calls("reduce float32", lambda: (dist.reduce(rd, 0, group=g), _same(
            rd, torch.full((n,), 4.0 * W if R == 0 else 4.0)))[1], 1 if W > 1 else 0)
        return not bad, "; ".join(bad)
    ck.run("group with budgets: only its float32 all_reduce, reduce_scatter and reduce "
           "(SUM) carry them; int32 SUM, float32 MAX, float64 SUM, broadcast, all_gather, "
           "gather, scatter, all_to_all(_single), barrier, object collectives exact",
           only_where_asked)

    def per_call():
        # dlcp.backend.lossy(): the calls of its block on its group only
        g = dist.new_group(backend="dlcp", pg_options={"budget_ppm": 50000})
        bad = []
        c0, g0 = wg.stats["lossy_calls"], g.stats["lossy_calls"]
        x = torch.full((n,), 1.5)
        b = _vals(R, 10, f32) + R
        with dlcp.backend.lossy(None, budget_ppm=30000, budget2_ppm=0):
            dist.all_reduce(x)                   # the default group: lossy
            dist.broadcast(b, 0)                 # never
            dist.all_reduce(torch.ones(5, dtype=i32))
            dist.all_reduce(torch.ones(5), group=g)     # g's own budget
        with dlcp.backend.lossy(g, budget_ppm=0):
            dist.all_reduce(torch.ones(5), group=g)     # exact here
        y = _vals(R, 1000, f32)
        dist.all_reduce(y)                       # after the block: exact
        got = (wg.stats["lossy_calls"] - c0, g.stats["lossy_calls"] - g0)
        if got != (1, 1):
            bad.append("calls with a budget (default group, g) %s, want (1, 1)" % (got,))
        if not _same(x, torch.full((n,), 1.5 * W)) or not _same(b, _vals(0, 10, f32)):
            bad.append("results in the block")
        if not _same(y, tsum([_vals(r, 1000, f32) for r in ranks])):
            bad.append("all_reduce after the block not exact")
        return not bad, "; ".join(bad)
    ck.run("dlcp.backend.lossy(group, budget_ppm=...): the block's float all_reduce on its "
           "group carries the budget (0: exact on a lossy group); broadcast, int32, other "
           "groups and the calls after it do not", per_call)
