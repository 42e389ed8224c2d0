#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Host test of the result plots: bench/report.py on raw records made here
in the format bench/vm-bench.sh writes (one JSON object per case, with the
`dlcp-perf client --json --samples` outputs of its clients), and
userspace/python/demo_summary.py on rows in the format train_ddp.py writes.

Checks that every PNG is written, non-empty and a PNG; that results.md names
each; that completion-time CDFs are drawn where completion times are
measured and not for the bulk scenarios; that scenario 8 gets its goodput
per CPU-second chart; that the demo leaves its table and plot beside its
results. TAP on stdout; exit status 1 if anything failed.

    /usr/bin/python3 bench/tests/test_report.py
"""
import json
import os
import random
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "userspace", "python"))

import demo_summary  # noqa: E402

results = []


def check(ok, what):
    results.append((bool(ok), what))


def client(proto, cid, size, samples, t0_ns, span_s, lost=0):
    """One dlcp-perf client's --json --samples output."""
    n = len(samples)
    nbytes = size * n
    pcts = {"n": n, "mean": sum(samples) / n, "p50": sorted(samples)[n // 2],
            "p90": max(samples), "p99": max(samples), "p999": max(samples),
            "max": max(samples), "min": min(samples)}
    c = {"role": "client", "proto": proto, "id": cid, "ct_mode": "echo",
         "sizes": [size], "concurrency": 1, "prio": -1,
         "budget_ppm": 0, "messages": n, "bytes": nbytes, "bytes_lost": lost,
         "lossy_msgs": 1 if lost else 0, "elapsed_s": span_s,
         "goodput_mbps": (nbytes - lost) * 8 / span_s / 1e6, "retrans": 3,
         "out_data_pkts": nbytes // 1428, "failed_msgs": 0,
         "t_first_ns": t0_ns, "t_last_ns": t0_ns + int(span_s * 1e9),
         "cpu": {"client_user_s": 0.1, "client_sys_s": 0.4, "machine_busy_s": 1.0},
         "ct_ms": pcts, "counters": {}, "samples_ms": samples}
    if proto == "dlcp":
        c["sender_ct_ms"] = pcts
    return c


def record(scen, case, proto, params, clients, rate=30, ticks=200):
    """One line of bench/vm-bench.sh's run_case()."""
    snap = {"dlcp": {"DlcpRetransPkts": 0, "DlcpOutDataPkts": 0},
            "tcp": {"RetransSegs": 0, "OutSegs": 0}}
    after = {"dlcp": {"DlcpRetransPkts": 5, "DlcpOutDataPkts": 9000},
             "tcp": {"RetransSegs": 7, "OutSegs": 9000}}
    return {"scenario": scen, "case": case, "proto": proto,
            "senders": len(clients), "rate_mbit": rate, "base_rtt_ms": 1.0 if rate else 0,
            "netem": "fwd delay 0.5ms; rev delay 0.5ms", "offload": "off",
            "params": params, "args": "--size 1m", "rc": 0, "error": "",
            "wall_s": 3.0, "qdisc_drops": 4, "cpu_ticks": ticks, "hz": 100,
            "snd_before": snap, "snd_after": after, "rcv_before": snap,
            "rcv_after": after, "clients": clients}


def bench_fixture(outdir):
    rnd = random.Random(1)
    raw = os.path.join(outdir, "raw")
    os.makedirs(raw)
    mib = 1 << 20

    def ct(n, lo, hi):
        return [round(rnd.uniform(lo, hi), 3) for _ in range(n)]

    lines = {
        "base": [record("s1", "lossless", p, {"size": mib, "concurrency": 4, "duration": 4},
                        [client(p, 1, mib, ct(20, 300, 400), 10**9, 4.0)])
                 for p in ("dlcp", "tcp")],
        "loss": [record("s2", "loss1_1m", "dlcp",
                        {"loss_pct": 1, "size": mib, "budget_ppm": b, "count": 15},
                        [client("dlcp", 1, mib, ct(15, 290, 330 + b / 100), 10**9, 5.0)])
                 for b in (0, 10000)] +
                [record("s2", "loss1_1m", "tcp", {"loss_pct": 1, "size": mib, "count": 15},
                        [client("tcp", 1, mib, ct(15, 300, 2000), 10**9, 9.0)])],
        "incast": [record("s5", "incast8_256k", p,
                          {"size": 262144, "count": 6, "buffer": "deep"},
                          [client(p, i, 262144, ct(6, 500, 900 if p == "dlcp" else 3000),
                                  10**9, 6.0) for i in range(1, 9)])
                   for p in ("dlcp", "tcp")],
        "cpu": [record("s8", case, p, {"size": mib, "concurrency": 4, "duration": 3},
                       [client(p, 1, mib, ct(400, 1, 9), 10**9, 3.0)], rate=0, ticks=t)
                for case, p, t in (("unshaped_1m", "dlcp", 300), ("unshaped_1m_nogso", "dlcp", 450),
                                   ("unshaped_1m", "tcp", 380))],
    }
    lines["incast"].append({"scenario": "s6", "case": "priority_race",
                            "skipped": "not implemented here"})
    for group, recs in lines.items():
        with open(os.path.join(raw, group + ".jsonl"), "w") as f:
            for r in recs:
                f.write(json.dumps(r) + "\n")
    with open(os.path.join(raw, "base.jsonl"), "a") as f:
        f.write('{"scenario": "s1", "cut off\n')
    with open(os.path.join(outdir, "meta.json"), "w") as f:
        json.dump({"timestamp": "fixture", "quick": False, "git": "0000000"}, f)


def png_ok(path):
    try:
        with open(path, "rb") as f:
            return f.read(8) == b"\x89PNG\r\n\x1a\n" and os.path.getsize(path) > 1000
    except OSError:
        return False


def test_bench(tmp):
    out = os.path.join(tmp, "bench")
    bench_fixture(out)
    p = subprocess.run([sys.executable, os.path.join(TOP, "bench", "report.py"), out],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    check(p.returncode == 0, "report.py exits 0 on the fixture")
    if p.returncode:
        print("# " + p.stdout[-2000:].replace("\n", "\n# "))
        return
    with open(os.path.join(out, "results.md")) as f:
        md = f.read()
    with open(os.path.join(out, "results.json")) as f:
        res = json.load(f)
    want = {"s1": ["s1.png"], "s2": ["s2.png", "s2-cdf.png"],
            "s5": ["s5.png", "s5-cdf.png"], "s8": ["s8.png", "s8-cpu.png"]}
    check(res["plots"] == want, "results.json lists the plots of each scenario: %s"
          % res["plots"])
    for files in want.values():
        for fn in files:
            check(png_ok(os.path.join(out, fn)), "%s is written and is a non-empty PNG" % fn)
            check("(%s)" % fn in md, "results.md names %s" % fn)
    check(not [f for f in os.listdir(out) if f in ("s1-cdf.png", "s8-cdf.png")],
          "no completion-time CDF of the bulk scenarios 1 and 8")
    check(all("_samples_ms" not in c for c in res["cases"]) and
          res["unparsable_lines"] == 1 and len(res["skipped"]) == 1,
          "results.json keeps the samples out, counts the cut-off line and the skip")


def epochs(n, ms, acc0):
    return [{"mean_ms": ms * (1 + 0.05 * (i % 2)), "max_ms": ms * 3,
             "test_acc": min(97.5, acc0 + 8 * i)} for i in range(n)]


def test_demo(tmp):
    rows = [{"phase": ph, "backend": ph.split(":")[0], "world": 4, "iters": 110,
             "mean_ms": ms, "p50_ms": ms, "p99_ms": 3 * ms, "total_s": ms * 0.11,
             "test_acc": 97.2, "train_loss": 0.1, "param_spread": 0.0,
             "budget_ppm": 0, "algo": "gloo", "epochs": epochs(10, ms, 60)}
            for ph, ms in (("gloo:lossy", 600.0), ("dlcp:lossy", 150.0),
                           ("gloo:clean", 140.0))]
    png = os.path.join(tmp, "plot.png")
    check(demo_summary.plot(rows, png) and png_ok(png),
          "demo_summary.plot() draws the three phases to a non-empty PNG")
    old = [{k: v for k, v in r.items() if k != "epochs"} for r in rows]
    none = os.path.join(tmp, "none.png")
    check(not demo_summary.plot(old, none) and not os.path.exists(none),
          "demo_summary.plot() writes nothing for rows without epochs")
    jl = os.path.join(tmp, "demo-train.jsonl")
    with open(jl, "w") as f:
        f.write("".join(json.dumps(r) + "\n" for r in rows))
    p = subprocess.run([sys.executable, os.path.join(TOP, "userspace", "python",
                                                     "demo_summary.py"), jl],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    txt = os.path.join(tmp, "demo-train.txt")
    ok = (p.returncode == 0 and png_ok(os.path.join(tmp, "demo-train.png")) and
          os.path.exists(txt) and "speedup" in open(txt).read())
    check(ok, "demo_summary.py leaves demo-train.txt and demo-train.png beside its results")
    if not ok:
        print("# " + p.stdout[-2000:].replace("\n", "\n# "))


def main():
    print("TAP version 13")
    with tempfile.TemporaryDirectory(prefix="test_report.") as tmp:
        for t in (test_bench, test_demo):
            try:
                t(tmp)
            except Exception as e:  # a crash is a failure of that part
                check(False, "%s: %s: %s" % (t.__name__, type(e).__name__, e))
    for i, (ok, what) in enumerate(results, 1):
        print("%sok %d - plots: %s" % ("" if ok else "not ", i, what))
    print("1..%d" % len(results))
    return 0 if all(ok for ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
