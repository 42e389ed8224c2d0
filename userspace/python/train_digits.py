#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Data-parallel MLP on sklearn's digits, gloo allreduce vs the DLCP hook.

One process per rank (env RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT as
torchrun sets them; the gloo group is also the rendezvous). The process runs
several phases one after the other (torch is imported once), each from the
same seed:

    --phases gloo:lossy,dlcp:lossy,gloo:clean

"gloo" is plain DDP (gloo allreduce over TCP); "dlcp" registers
dlcp_ddp.dlcp_hook (ring all-reduce over DLCP, --budget ppm); "local" trains
without any gradient exchange (each rank on its own shard: the compute time
alone, for reference). "dlcp" takes '+' modifiers: q8 / q4 (homomorphic
compression, 8 or 4 bits), h (Hadamard rotation), fit (THC: levels / world,
the sums fit the bits), dear (dlcp_dear: reduce-scatter in backward,
all-gather overlapped with the next forward), ring / direct / ps (the
all-reduce algorithm; default --algo), e.g. dlcp+q8+dear:lossy. The part after ':' is passed to $DLCP_LINK_CMD by
rank 0 before the phase (between two barriers) to reshape the links; without
it, it is only a label.
Rank 0 prints one JSON line per phase: iteration times (ms; forward and
backward apart, the exchange happens in backward), test accuracy, and for
DLCP the hook's statistics and the module's counters over the phase, summed
over the ranks.

DDP's buckets are its default size (--bucket-mb 25): the model (85k
parameters at --hidden 256) is one bucket, one all-reduce per iteration, as
a user of DDP would get it; smaller buckets mean more, smaller collectives.
"""
import argparse
import datetime
import json
import os
import shlex
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402


def log(*a):
    print("[rank %s %.1fs]" % (os.environ.get("RANK"), time.time() - T0), *a,
          file=sys.stderr, flush=True)


T0 = time.time()


def data(seed):
    X, y = load_digits(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=seed,
                                          stratify=y)
    mu, sd = Xtr.mean(0), Xtr.std(0) + 1e-6
    f = lambda a: torch.tensor((a - mu) / sd, dtype=torch.float32)  # noqa: E731
    return f(Xtr), torch.tensor(ytr), f(Xte), torch.tensor(yte)


def model(hidden, seed):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(64, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                         nn.ReLU(), nn.Linear(hidden, 10))


SNMP_KEYS = ("DlcpOutDataPkts", "DlcpRetransPkts", "DlcpRetransReported",
             "DlcpRetransTimeout", "DlcpRetransAvoided", "DlcpProbesSent",
             "DlcpInDupPkts", "DlcpDropUnknownMsg", "DlcpOutMsgs", "DlcpInMsgsLossy",
             "DlcpInBytesLost")


def snmp():
    """This namespace's DLCP counters (zeros without the module)."""
    vals = dict.fromkeys(SNMP_KEYS, 0)
    try:
        with open("/proc/net/dlcp/snmp") as f:
            for line in f:
                k, _, v = line.partition(" ")
                if k in vals:
                    vals[k] = int(v)
    except (OSError, ValueError):
        pass
    return vals


def snmp_delta_sum(before):
    """Counters since @before, summed over the ranks."""
    now = snmp()
    t = torch.tensor([now[k] - before[k] for k in SNMP_KEYS], dtype=torch.float64)
    dist.all_reduce(t)
    return {k: int(v) for k, v in zip(SNMP_KEYS, t.tolist())}


def pct(a, p):
    return float(np.percentile(np.array(a), p)) if a else float("nan")


def set_link(cond, rank):
    """Rank 0 reshapes the links for @cond (between two barriers)."""
    if cond and os.environ.get("DLCP_LINK_CMD"):
        dist.barrier()
        if rank == 0:
            subprocess.run(shlex.split(os.environ["DLCP_LINK_CMD"]) + [cond], check=True)
        dist.barrier()


def run_phase(args, phase, index, rank, world, Xtr, ytr, Xte, yte):
    """A generator: yields None after each epoch, then the phase's results."""
    kind = phase.partition(":")[0]
    kind, *mods = kind.split("+")
    compress, hadamard, dear = args.compress, args.hadamard, args.dear
    fit, algo = False, args.algo
    for m in mods:
        if m in ("ring", "direct", "ps"):
            algo = m
        elif m in ("q8", "q4", "q0"):
            compress = int(m[1:])
        elif m == "h":
            hadamard = True
        elif m == "dear":
            dear = True
        elif m == "fit":
            fit = True
        else:
            raise SystemExit("unknown phase modifier %s" % m)
    dear = dear and kind == "dlcp"
    net = model(args.hidden, args.seed)
    # 1.13 sizes the first bucket apart: use one size for every bucket
    dist._DEFAULT_FIRST_BUCKET_BYTES = int(args.bucket_mb * 1024 * 1024)
    ddp = DDP(net, bucket_cap_mb=args.bucket_mb) if kind != "local" else net
    state = None
    if kind == "dlcp":
        import dlcp
        import dlcp_ddp
        if not hasattr(run_phase, "group"):
            run_phase.group = dlcp.Group.from_env(transport=-1,
                                                  timeout_ms=args.timeout_ms)
        qkw = dict(budget_ppm=args.budget, budget2_ppm=args.budget2,
                   timeout_ms=args.timeout_ms, compress=compress, hadamard=hadamard,
                   seed=args.seed, fit=fit)
        if dear:
            import dlcp_dear
            state = dlcp_dear.DearState(
                run_phase.group, net,
                lambda ps: torch.optim.SGD(ps, lr=args.lr, momentum=0.9), **qkw)
        else:
            state = dlcp_ddp.DlcpHookState(run_phase.group, algo=algo, **qkw)
        # iterations of different phases must not share message keys
        state.iteration = 1000000 * index
        ddp.register_comm_hook(state, dlcp_dear.dear_hook if dear else dlcp_ddp.dlcp_hook)
    elif kind not in ("gloo", "local"):
        raise SystemExit("unknown phase kind %s" % kind)
    opt = torch.optim.SGD(ddp.parameters(), lr=args.lr, momentum=0.9)
    lossf = nn.CrossEntropyLoss()
    Xs, ys = Xtr[rank::world], ytr[rank::world]
    per = min(len(Xtr[r::world]) for r in range(world)) // args.batch
    times, fwd, bwd = [], [], []
    g = torch.Generator().manual_seed(args.seed + rank)
    dist.barrier()
    counters = snmp()
    total = 0.0
    for ep in range(args.epochs):
        t_ep = time.perf_counter()
        perm = torch.randperm(len(Xs), generator=g)
        for i in range(per):
            idx = perm[i * args.batch:(i + 1) * args.batch]
            t0 = time.perf_counter()
            if not dear:    # DeAR steps each layer itself
                opt.zero_grad()
            loss = lossf(ddp(Xs[idx]), ys[idx])
            t1 = time.perf_counter()
            loss.backward()
            t2 = time.perf_counter()
            if not dear:
                opt.step()
            times.append((time.perf_counter() - t0) * 1000)
            fwd.append((t1 - t0) * 1000)
            bwd.append((t2 - t1) * 1000)
        total += time.perf_counter() - t_ep
        if rank == 0:
            w = times[-per:]
            log("%s epoch %d: %d iters, mean %.1f ms, max %.1f ms" % (
                phase, ep, len(w), sum(w) / len(w), max(w)))
        yield None
    if dear:
        state.flush()
    dist.barrier()
    counters = snmp_delta_sum(counters)
    with torch.no_grad():
        acc = (net(Xte).argmax(1) == yte).float().mean().item() * 100
        tr_loss = lossf(net(Xtr), ytr).item()
    # parameters may drift apart slightly with loss: report the spread
    flat = torch.cat([p.detach().flatten() for p in net.parameters()])
    spread = flat.clone()
    dist.all_reduce(spread, op=dist.ReduceOp.MAX)
    mn = flat.clone()
    dist.all_reduce(mn, op=dist.ReduceOp.MIN)
    w = times[args.warmup:] or times
    res = {"phase": phase, "rank": rank, "world": world, "iters": len(times),
           "mean_ms": sum(w) / len(w), "p50_ms": pct(w, 50), "p99_ms": pct(w, 99),
           "total_s": total, "fwd_ms": sum(fwd) / len(fwd),
           "bwd_ms": sum(bwd) / len(bwd), "test_acc": acc, "train_loss": tr_loss,
           "param_spread": (spread - mn).abs().max().item(),
           "budget_ppm": args.budget if kind == "dlcp" else 0,
           "algo": algo if kind == "dlcp" else kind,
           "compress": compress if kind == "dlcp" else 0,
           "hadamard": hadamard and kind == "dlcp", "dear": dear,
           "fit": fit and kind == "dlcp"}
    if kind == "dlcp":
        res["snmp"] = counters
    if state is not None:
        state.close()
        bms = getattr(state, "bucket_ms", [])
        res["dlcp"] = dict(state.stats, bucket_p50_ms=pct(bms, 50),
                           bucket_p99_ms=pct(bms, 99),
                           bucket_max_ms=max(bms, default=0))
    yield res


def schedule(phases, interleave):
    """Groups of (index, phase) run together, in order; with @interleave the
    phases of one link condition alternate epoch by epoch (so that both see
    the same load of a shared host), else each phase runs alone."""
    groups = []
    for i, ph in enumerate(phases):
        cond = ph.partition(":")[2]
        if interleave:
            for grp in groups:
                if grp[0] == cond:
                    grp[1].append((i, ph))
                    break
            else:
                groups.append((cond, [(i, ph)]))
        else:
            groups.append((cond, [(i, ph)]))
    return groups


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--phases", default="gloo,dlcp")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--budget", type=int, default=50000, help="ppm, reduce-scatter")
    ap.add_argument("--budget2", type=int, default=None, help="ppm, all-gather")
    ap.add_argument("--algo", default="ring", choices=["ring", "direct", "ps"])
    ap.add_argument("--compress", type=int, default=0, choices=[0, 4, 8],
                    help="dlcp phases: homomorphic compression bits (0: fp32)")
    ap.add_argument("--hadamard", action="store_true", help="dlcp phases: rotate first")
    ap.add_argument("--dear", action="store_true", help="dlcp phases: DeAR overlap")
    ap.add_argument("--bucket-mb", type=float, default=25)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--timeout-ms", type=int, default=60000)
    ap.add_argument("--out", default=None, help="append JSON lines here (rank 0)")
    ap.add_argument("--interleave", action="store_true",
                    help="alternate the phases of one link condition epoch by epoch")
    args = ap.parse_args()

    torch.set_num_threads(1)
    log("torch imported")
    dist.init_process_group("gloo", init_method="env://",
                            timeout=datetime.timedelta(minutes=10))
    rank, world = dist.get_rank(), dist.get_world_size()
    log("joined, world", world)
    Xtr, ytr, Xte, yte = data(args.seed)
    for cond, grp in schedule(args.phases.split(","), args.interleave):
        set_link(cond, rank)
        # start each phase: its set-up and first epoch
        runs = []
        for i, ph in grp:
            runs.append(run_phase(args, ph, i, rank, world, Xtr, ytr, Xte, yte))
            next(runs[-1])                  # its first epoch
        results = {}
        while len(results) < len(runs):
            for i, r in enumerate(runs):
                if i not in results:
                    res = next(r)
                    if res is not None:
                        results[i] = res
        for i in range(len(runs)):
            res = results[i]
            log("phase done", json.dumps(res))
            if rank == 0:
                line = json.dumps(res)
                print(line, flush=True)
                if args.out:
                    with open(args.out, "a") as f:
                        f.write(line + "\n")
    dist.barrier()
    if hasattr(run_phase, "group"):
        run_phase.group.close(linger_ms=2000)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
