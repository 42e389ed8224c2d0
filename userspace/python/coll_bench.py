#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Time libdlcp's all-reduce alone, without a model (one rank per process).

Run by demo_train.sh with WORKLOAD=coll under torchrun, in each worker's
network namespace: the ranks meet through the job's store
(dlcp.Group.from_env: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT).
Every rank runs the same case; rank 0 prints one JSON line with the
iteration times (ms) of the all-reduce.

    coll_bench.py --transport dlcp --algo direct --elems 85258 --iters 30
"""
import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dlcp  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--transport", choices=["dlcp", "tcp"], default="dlcp")
    ap.add_argument("--algo", choices=["ring", "direct"], default="ring")
    ap.add_argument("--elems", type=int, default=85258,
                    help="fp32 elements (default: the demo model's gradient)")
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--budget", type=int, default=50000, help="reduce-scatter, ppm")
    ap.add_argument("--budget2", type=int, default=0, help="all-gather, ppm")
    ap.add_argument("--label", default="")
    args = ap.parse_args()

    tr = dlcp.TRANSPORT_DLCP if args.transport == "dlcp" else dlcp.TRANSPORT_TCP
    algo = dlcp.ALGO_DIRECT if args.algo == "direct" else dlcp.ALGO_RING
    g = dlcp.Group.from_env(transport=tr, timeout_ms=60000)
    rank, world = g.rank, g.world
    t = np.zeros(args.elems, dtype=np.float32)
    times, lost = [], 0
    g.barrier(iteration=1)
    for it in range(args.iters):
        t[:] = rank + 1
        t0 = time.perf_counter()
        st = g.allreduce(t, tag=1, iteration=it + 10, budget_ppm=args.budget,
                         budget2_ppm=args.budget2, timeout_ms=60000, algo=algo)
        times.append((time.perf_counter() - t0) * 1000)
        lost += st["bytes_lost"]
        # the mean of 1..world; with a budget, where a contribution was
        # lost (on this rank's messages or another's), the mean of those
        # that arrived, so within [1, world]
        if args.budget or args.budget2:
            bad = np.nonzero((t < 1) | (t > world))[0]
        else:
            bad = np.nonzero(t != (world + 1) / 2)[0]
        if len(bad):
            raise SystemExit("rank %d: wrong result in iteration %d: %d elements, "
                             "first %d = %g, stats %s" % (rank, it, len(bad), bad[0],
                                                          t[bad[0]], st))
    g.barrier(iteration=2)
    g.close()
    if rank == 0:
        a = np.array(times)
        print(json.dumps({"case": args.label or "%s-%s" % (args.transport, args.algo),
                          "transport": args.transport, "algo": args.algo,
                          "world": world, "elems": args.elems, "iters": args.iters,
                          "mean_ms": round(float(a.mean()), 1),
                          "p50_ms": round(float(np.percentile(a, 50)), 1),
                          "p90_ms": round(float(np.percentile(a, 90)), 1),
                          "max_ms": round(float(a.max()), 1),
                          "bytes_lost_rank0": lost}), flush=True)


if __name__ == "__main__":
    main()
