#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Print the demo's phases side by side and check the target:
DLCP mean iteration time >= 1.5x faster than gloo on the lossy link, and
DLCP test accuracy within 0.5 points of the lossless run."""
import json
import sys


def main(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    if not rows:
        print("no results in", path)
        return 1
    print("%-12s %6s %9s %9s %9s %8s %9s %11s" % (
        "phase", "iters", "mean ms", "p50 ms", "p99 ms", "acc %", "total s", "bytes lost"))
    for r in rows:
        print("%-12s %6d %9.1f %9.1f %9.1f %8.2f %9.1f %11s" % (
            r["phase"], r["iters"], r["mean_ms"], r["p50_ms"], r["p99_ms"],
            r["test_acc"], r["total_s"], r.get("dlcp", {}).get("bytes_lost", "-")))
    for r in rows:
        d = r.get("dlcp")
        if d:
            print("%s: collective p50 %.1f ms, p99 %.1f ms, %.0f%% of the iteration; "
                  "elements lost %d, fell back %d" % (
                      r["phase"], d["bucket_p50_ms"], d["bucket_p99_ms"],
                      100.0 * d["comm_s"] / max(1e-9, r["total_s"]),
                      d["elems_lost"], d["elems_fallback"]))
        if r.get("snmp"):
            print("%s: module counters (all ranks): %s" % (r["phase"], ", ".join(
                "%s %d" % (k[4:], v) for k, v in r["snmp"].items())))
    by = {r["phase"]: r for r in rows}
    g = by.get("gloo:lossy")
    ref = by.get("gloo:clean") or g
    for name, d in by.items():
        if not (g and ref and name.startswith("dlcp") and name.endswith(":lossy")):
            continue
        speed = g["mean_ms"] / d["mean_ms"]
        dacc = d["test_acc"] - ref["test_acc"]
        print("%s (%s): speedup (gloo/dlcp mean iteration time on the lossy link): "
              "%.2fx (target >= 1.5x: %s); p50 %.2fx, p99 %.2fx" % (
                  name, d.get("algo", "ring"), speed,
                  "met" if speed >= 1.5 else "NOT met",
                  g["p50_ms"] / d["p50_ms"], g["p99_ms"] / d["p99_ms"]))
        print("%s: accuracy dlcp - lossless (%s): %+.2f points (target within 0.5: %s)" % (
            name, ref["phase"], dacc, "met" if abs(dacc) <= 0.5 else "NOT met"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "results/demo-train.jsonl"))
