#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""A data-parallel training job written against plain torch.distributed.

    python3 -m dlcp.run --nnodes=4 --nproc_per_node=1 --node_rank=N \\
        --master_addr=HOST0 --master_port=29500 train_ddp.py --backend dlcp \\
        --budget 50000

The job is what a user writes: init_process_group() with the backend named
on the command line, DistributedDataParallel with its default bucket size,
SGD; no communication hook and nothing of DLCP but the backend's name (the
import registers it) and, given a loss budget (--budget, --budget2), a
group of the gradients' own that has it, as docs/torch-backend.md shows:

    lossy = dist.new_group(backend="dlcp", pg_options={"budget_ppm": 50000})
    ddp = DDP(net, process_group=lossy)

The default group, which checks that the replicas agree at the end, stays
exact. Over another backend (gloo) the budgets do not apply: the same
command line runs there. The backend's algorithm comes from DLCP_ALGO.

The model is the MLP of train_digits.py on sklearn's digits, from a fixed
seed. Rank 0 prints a line per epoch and, at the end, one JSON line with the
iteration times (ms), the test accuracy, the mean iteration time and test
accuracy of each epoch ("epochs") and, when the DLCP module is loaded, its
counters over the run summed over the ranks.
"""
import argparse
import datetime
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

from train_digits import data, model, pct, snmp, snmp_delta_sum  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", default="gloo", help="torch.distributed backend")
    ap.add_argument("--label", default=None, help="name of the run in the results")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bucket-mb", type=float, default=25)
    ap.add_argument("--warmup", type=int, default=3, help="iterations left out of the means")
    ap.add_argument("--timeout-s", type=int, default=600)
    ap.add_argument("--budget", type=int, default=0,
                    help="loss budget of the gradients' reduce-scatter, ppm (dlcp backend)")
    ap.add_argument("--budget2", type=int, default=0,
                    help="loss budget of the gradients' all-gather, ppm (dlcp backend)")
    ap.add_argument("--out", default=None, help="rank 0 appends its JSON line here")
    args = ap.parse_args()
    for name in ("budget", "budget2"):
        if not 0 <= getattr(args, name) <= 1000000:
            ap.error("--%s %d: a loss budget is 0..1000000 ppm" % (name, getattr(args, name)))

    if args.backend == "dlcp":
        import dlcp.backend  # noqa: F401  registers the "dlcp" backend
    torch.set_num_threads(1)
    dist.init_process_group(args.backend,
                            timeout=datetime.timedelta(seconds=args.timeout_s))
    rank, world = dist.get_rank(), dist.get_world_size()
    label = args.label or args.backend

    def say(msg):
        if rank == 0:
            print("[%s] %s" % (label, msg), flush=True)

    say("%d ranks joined over %s" % (world, args.backend))
    Xtr, ytr, Xte, yte = data(args.seed)
    net = model(args.hidden, args.seed)
    # 1.13 sizes the first bucket apart: one size for every bucket
    dist._DEFAULT_FIRST_BUCKET_BYTES = int(args.bucket_mb * 1024 * 1024)
    lossy = args.backend == "dlcp" and (args.budget or args.budget2)
    pg = dist.new_group(backend="dlcp", pg_options={
        "budget_ppm": args.budget, "budget2_ppm": args.budget2}) if lossy else None
    ddp = DDP(net, bucket_cap_mb=args.bucket_mb, process_group=pg)
    opt = torch.optim.SGD(ddp.parameters(), lr=args.lr, momentum=0.9)
    lossf = nn.CrossEntropyLoss()
    Xs, ys = Xtr[rank::world], ytr[rank::world]
    per = min(len(Xtr[r::world]) for r in range(world)) // args.batch
    gen = torch.Generator().manual_seed(args.seed + rank)
    times, epochs = [], []
    dist.barrier()
    counters = snmp()
    t_start = time.perf_counter()
    for ep in range(args.epochs):
        perm = torch.randperm(len(Xs), generator=gen)
        for i in range(per):
            idx = perm[i * args.batch:(i + 1) * args.batch]
            t0 = time.perf_counter()
            opt.zero_grad()
            lossf(ddp(Xs[idx]), ys[idx]).backward()
            opt.step()
            times.append((time.perf_counter() - t0) * 1000)
        w = times[-per:]
        # every rank evaluates its replica (cheap: the test set is small),
        # so that none waits for rank 0 at the next all-reduce
        with torch.no_grad():
            ep_acc = (net(Xte).argmax(1) == yte).float().mean().item() * 100
        epochs.append({"mean_ms": sum(w) / len(w), "max_ms": max(w),
                       "test_acc": ep_acc})
        say("epoch %d/%d: %d iterations, mean %.1f ms, max %.1f ms, test accuracy %.2f%%" % (
            ep + 1, args.epochs, len(w), sum(w) / len(w), max(w), ep_acc))
    dist.barrier()
    total = time.perf_counter() - t_start
    counters = snmp_delta_sum(counters)
    with torch.no_grad():
        acc = (net(Xte).argmax(1) == yte).float().mean().item() * 100
        tr_loss = lossf(net(Xtr), ytr).item()
    # the replicas must agree: the all-gather half is exact by default
    flat = torch.cat([p.detach().flatten() for p in net.parameters()])
    hi, lo = flat.clone(), flat.clone()
    dist.all_reduce(hi, op=dist.ReduceOp.MAX)
    dist.all_reduce(lo, op=dist.ReduceOp.MIN)
    w = times[args.warmup:] or times
    res = {"phase": label, "backend": args.backend, "world": world, "iters": len(times),
           "mean_ms": sum(w) / len(w), "p50_ms": pct(w, 50), "p99_ms": pct(w, 99),
           "total_s": total, "test_acc": acc, "train_loss": tr_loss,
           "param_spread": (hi - lo).abs().max().item(),
           "budget_ppm": args.budget if lossy else 0,
           "budget2_ppm": args.budget2 if lossy else 0,
           "algo": os.environ.get("DLCP_ALGO", "ring") if args.backend == "dlcp"
           else args.backend, "epochs": epochs}
    if pg is not None:      # rank 0's gradient all-reduces that carried the budget
        res["lossy_calls"] = pg.stats["lossy_calls"]
    if any(counters.values()):
        res["snmp"] = counters
    if rank == 0:
        line = json.dumps(res)
        print(line, flush=True)
        if args.out:
            with open(args.out, "a") as f:
                f.write(line + "\n")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
