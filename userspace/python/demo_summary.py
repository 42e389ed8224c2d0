#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Print the demo's phases side by side and check the target:
DLCP mean iteration time >= 1.5x faster than gloo on the lossy link, and
DLCP test accuracy within 0.5 points of the lossless run.

    demo_summary.py [RESULTS.jsonl]

The table also goes to RESULTS.txt and, where the phases recorded their
epochs (train_ddp.py), a plot of iteration time and test accuracy per
epoch to RESULTS.png, both beside RESULTS.jsonl."""
import json
import os
import sys

# how the plot names the phases of make demo; others keep their own name
PHASE_NAMES = {
    "gloo:clean": "gloo, lossless links (reference)",
    "gloo:lossy": "gloo, lossy links",
    "dlcp:lossy": "DLCP, lossy links",
}


def plot(rows, path):
    """Draw the mean iteration time and the test accuracy of each epoch, one
    line per phase, to the PNG @path. Returns False (and writes nothing)
    when no row has per-epoch results."""
    rows = [r for r in rows if r.get("epochs")]
    if not rows:
        return False
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_t, ax_a) = plt.subplots(1, 2, figsize=(11, 4))
    for r in rows:
        eps = r["epochs"]
        x = list(range(1, len(eps) + 1))
        name = PHASE_NAMES.get(r["phase"], r["phase"])
        style = "--" if r["phase"].endswith(":clean") else "-o"
        ax_t.plot(x, [e["mean_ms"] for e in eps], style, label=name)
        ax_a.plot(x, [e["test_acc"] for e in eps], style, label=name)
    ax_t.set_xlabel("epoch")
    ax_t.set_ylabel("mean iteration time (ms)")
    ax_t.set_ylim(bottom=0)
    ax_t.set_title("iteration time")
    ax_a.set_xlabel("epoch")
    ax_a.set_ylabel("test accuracy (%)")
    ax_a.set_title("test accuracy")
    for ax in (ax_t, ax_a):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    world = rows[0].get("world")
    fig.suptitle("DDP training, %s ranks: gloo against DLCP" % (world or "?"))
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def summary(rows):
    """The table and the target checks, as lines of text."""
    L = ["%-12s %6s %9s %9s %9s %8s %9s %11s" % (
        "phase", "iters", "mean ms", "p50 ms", "p99 ms", "acc %", "total s", "bytes lost")]
    for r in rows:
        L.append("%-12s %6d %9.1f %9.1f %9.1f %8.2f %9.1f %11s" % (
            r["phase"], r["iters"], r["mean_ms"], r["p50_ms"], r["p99_ms"],
            r["test_acc"], r["total_s"], r.get("dlcp", {}).get("bytes_lost", "-")))
    for r in rows:
        d = r.get("dlcp")
        if d:
            L.append("%s: collective p50 %.1f ms, p99 %.1f ms, %.0f%% of the iteration; "
                     "elements lost %d, fell back %d" % (
                         r["phase"], d["bucket_p50_ms"], d["bucket_p99_ms"],
                         100.0 * d["comm_s"] / max(1e-9, r["total_s"]),
                         d["elems_lost"], d["elems_fallback"]))
        if r.get("snmp"):
            L.append("%s: module counters (all ranks): %s" % (r["phase"], ", ".join(
                "%s %d" % (k[4:], v) for k, v in r["snmp"].items())))
    by = {r["phase"]: r for r in rows}
    g = by.get("gloo:lossy")
    ref = by.get("gloo:clean") or g
    for name, d in by.items():
        if not (g and ref and name.startswith("dlcp") and name.endswith(":lossy")):
            continue
        speed = g["mean_ms"] / d["mean_ms"]
        dacc = d["test_acc"] - ref["test_acc"]
        L.append("%s (%s): speedup (gloo/dlcp mean iteration time on the lossy link): "
                 "%.2fx (target >= 1.5x: %s); p50 %.2fx, p99 %.2fx" % (
                     name, d.get("algo", "ring"), speed,
                     "met" if speed >= 1.5 else "NOT met",
                     g["p50_ms"] / d["p50_ms"], g["p99_ms"] / d["p99_ms"]))
        L.append("%s: accuracy dlcp - lossless (%s): %+.2f points (target within 0.5: %s)" % (
            name, ref["phase"], dacc, "met" if abs(dacc) <= 0.5 else "NOT met"))
    return L


def main(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    if not rows:
        print("no results in", path)
        return 1
    lines = summary(rows)
    print("\n".join(lines))
    stem = os.path.splitext(path)[0]
    with open(stem + ".txt", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("table: %s.txt" % stem)
    if plot(rows, stem + ".png"):
        print("plot: %s.png" % stem)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "results/demo-train.jsonl"))
