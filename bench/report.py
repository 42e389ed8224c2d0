#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Turn bench/vm-bench.sh raw output into results.json, results.md and plots.

    /usr/bin/python3 bench/report.py RESULTS_DIR

Reads RESULTS_DIR/raw/*.jsonl (one JSON object per measured case, with the
dlcp-perf client outputs and counter snapshots), RESULTS_DIR/meta.json and
RESULTS_DIR/groups.tsv.
"""
import glob
import json
import math
import os
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SCEN_TITLE = {
    "s1": "1. Lossless, one flow (goodput)",
    "s2": "2. Random loss: completion time",
    "s3": "3. Burst loss (netem gemodel)",
    "s4": "4. Reordering: netem reorder; multipath spraying",
    "s5": "5. Incast, 8 senders -> 1 receiver",
    "s6": "6. Priority race (256 KiB vs 4 MiB bulk)",
    "s7": "7. Scaling: message size and senders",
    "s8": "8. CPU efficiency, unshaped veth",
    "s9": "9. ECN: RED marking bottleneck, 4 senders",
    "s10": "10. Long RTT (30 ms), 1% loss",
}


def pctl(vals, p):
    """Nearest-rank percentile (same rule as dlcp-perf)."""
    if not vals:
        return None
    v = sorted(vals)
    k = max(1, min(len(v), math.ceil(p / 100.0 * len(v) - 1e-9)))
    return v[k - 1]


def delta(before, after, sect, name):
    try:
        return after[sect][name] - before[sect][name]
    except (KeyError, TypeError):
        return None


def summarize(rec):
    cl = rec.get("clients", [])
    proto = rec["proto"]
    params = rec.get("params", {})
    out = {
        "scenario": rec["scenario"], "case": rec["case"], "proto": proto,
        "senders": rec["senders"], "rate_mbit": rec["rate_mbit"],
        "base_rtt_ms": rec["base_rtt_ms"], "netem": rec["netem"],
        "params": params, "args": rec.get("args", ""), "rc": rec["rc"],
        "offload": rec.get("offload", "on"),
        "error": rec.get("error", "").strip(),
        "clients_ok": len(cl),
    }
    budget = params.get("budget_ppm")
    out["label"] = proto + ("" if proto == "tcp" or budget is None
                            else " b=%g%%" % (budget / 1e4))
    if proto == "tcp" and params.get("cc"):
        out["label"] = "tcp " + params["cc"]
    if proto == "dlcp" and params.get("encap"):
        out["label"] = out["label"].replace("dlcp", "dlcp-udp", 1)
    if "path_tx_pkts" in rec:
        out["path_tx_pkts"] = rec["path_tx_pkts"]
    race = bool(params.get("race"))
    if race:
        # scenario 6: CT of the small (client 2) messages; bulk goodput apart
        small = [c for c in cl if c.get("id") == 2]
        bulk = [c for c in cl if c.get("id") == 1]
        samples = [s for c in small for s in c.get("samples_ms", [])]
        out["bulk_goodput_mbps"] = bulk[0]["goodput_mbps"] if bulk else None
        out["label"] += {1: " class 1 vs 7", -1: " same class"}.get(
            params.get("prio"), "")
    else:
        samples = [s for c in cl for s in c.get("samples_ms", [])]
    out["messages"] = len(samples)
    # kept for the CDF plots, left out of results.json (raw/ has them)
    out["_samples_ms"] = samples
    for p, k in ((50, "p50"), (90, "p90"), (99, "p99"), (99.9, "p999"),
                 (100, "max")):
        out["ct_" + k + "_ms"] = pctl(samples, p)
    out["ct_mean_ms"] = sum(samples) / len(samples) if samples else None
    if proto == "dlcp" and cl:
        s = [c["sender_ct_ms"] for c in cl if "sender_ct_ms" in c]
        out["sender_ct_p99_ms"] = max((x["p99"] for x in s), default=None)
    out["ct_mode"] = ",".join(sorted({c.get("ct_mode", "?") for c in cl}))
    nbytes = sum(c["bytes"] for c in cl)
    lost = sum(c["bytes_lost"] for c in cl)
    out["bytes"] = nbytes
    out["bytes_lost"] = lost
    out["lossy_msgs"] = sum(c["lossy_msgs"] for c in cl)
    out["failed_msgs"] = sum(c.get("failed_msgs", 0) for c in cl)
    if cl:
        span = (max(c["t_last_ns"] for c in cl) -
                min(c["t_first_ns"] for c in cl)) / 1e9
        out["goodput_mbps"] = (nbytes - lost) * 8 / span / 1e6 if span > 0 else None
    else:
        out["goodput_mbps"] = None
    sb, sa = rec.get("snd_before", {}), rec.get("snd_after", {})
    rb, ra = rec.get("rcv_before", {}), rec.get("rcv_after", {})
    if proto == "dlcp":
        out["retrans_pkts"] = delta(sb, sa, "dlcp", "DlcpRetransPkts")
        out["data_pkts"] = delta(sb, sa, "dlcp", "DlcpOutDataPkts")
        out["retrans_timeout"] = delta(sb, sa, "dlcp", "DlcpRetransTimeout")
        out["retrans_reported"] = delta(sb, sa, "dlcp", "DlcpRetransReported")
        out["rcv_dup_pkts"] = delta(rb, ra, "dlcp", "DlcpInDupPkts")
        out["rcv_bytes_lost"] = delta(rb, ra, "dlcp", "DlcpInBytesLost")
        out["out_msgs_failed"] = delta(sb, sa, "dlcp", "DlcpOutMsgsFailed")
        out["rcv_msgs_timeout"] = delta(rb, ra, "dlcp", "DlcpInMsgsTimeout")
    else:
        out["retrans_pkts"] = delta(sb, sa, "tcp", "RetransSegs")
        out["data_pkts"] = delta(sb, sa, "tcp", "OutSegs")
    out["path_drops"] = rec.get("qdisc_drops")
    out["cpu_busy_s"] = rec["cpu_ticks"] / rec["hz"]
    out["wall_s"] = rec["wall_s"]
    if out["cpu_busy_s"] > 0 and nbytes:
        out["mbit_per_cpu_s"] = (nbytes - lost) * 8 / 1e6 / out["cpu_busy_s"]
    # physical bound of a lone message: size / link rate + base RTT; with k
    # senders sharing the link, k * size / rate + RTT
    size = params.get("size")
    conc = params.get("concurrency", 1)
    if size and rec["rate_mbit"] and conc == 1:
        out["bound_ms"] = ((1 if race else rec["senders"]) * size * 8 / (rec["rate_mbit"] * 1e6)
                           * 1e3 + rec["base_rtt_ms"])
        if out["ct_p99_ms"] is not None:
            out["p99_over_bound"] = out["ct_p99_ms"] / out["bound_ms"]
            out["p50_over_bound"] = out["ct_p50_ms"] / out["bound_ms"]
    return out


def find(cases, scen, case=None, proto=None, budget="any"):
    r = []
    for c in cases:
        if c["scenario"] != scen or (case and c["case"] != case):
            continue
        if proto and c["proto"] != proto:
            continue
        if budget != "any" and c["params"].get("budget_ppm") != budget:
            continue
        r.append(c)
    return r


def fmt(v, nd=1):
    if v is None:
        return "-"
    if isinstance(v, float):
        if abs(v) >= 1000:
            return "%.0f" % v
        return ("%." + str(nd) + "f") % v
    return str(v)


def targets(cases):
    t = []

    def add(name, goal, value, met, note=""):
        t.append({"target": name, "goal": goal, "value": value,
                  "met": met, "note": note})

    d = find(cases, "s1", proto="dlcp")
    tc = find(cases, "s1", proto="tcp")
    if d and tc and d[0]["goodput_mbps"] and tc[0]["goodput_mbps"]:
        g, gt, rate = d[0]["goodput_mbps"], tc[0]["goodput_mbps"], d[0]["rate_mbit"]
        add("lossless goodput", ">= 95% of link rate and >= TCP",
            "DLCP %.1f Mbit/s = %.0f%% of %d Mbit/s; TCP %.1f (%.2fx)" %
            (g, 100 * g / rate, rate, gt, g / gt),
            g >= 0.95 * rate and g >= gt,
            "payload ceiling with 1428-byte segments in 1514-byte frames is 94.3%")
    else:
        add("lossless goodput", ">= 95% of link rate and >= TCP", "-", None,
            "not measured")

    for size in (1 << 20, 4 << 20):
        lab = "1%% loss, %d MiB, budget 1%%: p99" % (size >> 20)
        d = [c for c in find(cases, "s2", proto="dlcp", budget=10000)
             if c["params"].get("size") == size and c["params"].get("loss_pct") == 1]
        tc = [c for c in find(cases, "s2", proto="tcp")
              if c["params"].get("size") == size and c["params"].get("loss_pct") == 1]
        if d and tc and d[0]["ct_p99_ms"] and tc[0]["ct_p99_ms"]:
            r1 = d[0]["p99_over_bound"]
            r2 = tc[0]["ct_p99_ms"] / d[0]["ct_p99_ms"]
            add(lab, "<= 1.3x bound and >= 5x below TCP p99",
                "DLCP p99 %.0f ms = %.2fx bound (%.0f ms); TCP p99 %.0f ms = %.2fx DLCP"
                % (d[0]["ct_p99_ms"], r1, d[0]["bound_ms"], tc[0]["ct_p99_ms"], r2),
                r1 <= 1.3 and r2 >= 5,
                "n=%d messages per protocol; no transport can beat TCP by more "
                "than TCP p99 / bound = %.2fx here" %
                (d[0]["messages"], tc[0]["ct_p99_ms"] / d[0]["bound_ms"]))
        elif size == 1 << 20:
            add(lab, "<= 1.3x bound and >= 5x below TCP p99", "-", None,
                "not measured")

    a = find(cases, "s4", "inorder_2ms", "dlcp")
    b = find(cases, "s4", "reorder_2ms", "dlcp")
    if a and b and a[0]["ct_p50_ms"] and b[0]["ct_p50_ms"]:
        r50 = b[0]["ct_p50_ms"] / a[0]["ct_p50_ms"]
        r99 = b[0]["ct_p99_ms"] / a[0]["ct_p99_ms"]
        add("reordering", "within 5% of in-order (completion p50 and p99)",
            "DLCP p50 %.2fx, p99 %.2fx of in-order" % (r50, r99),
            r50 <= 1.05 and r99 <= 1.05)
    else:
        add("reordering", "within 5% of in-order", "-", None, "not measured")

    # scenario 4, multipath: sprayed / in-order, per protocol and size
    def ratio(num, den):
        if not (num and den and num[0]["ct_p50_ms"] and den[0]["ct_p50_ms"]):
            return None
        return (num[0]["ct_p50_ms"] / den[0]["ct_p50_ms"],
                num[0]["ct_p99_ms"] / den[0]["ct_p99_ms"])

    for sz in ("1m", "4m"):
        io = "mp_inorder_" + sz
        dr = ratio(find(cases, "s4", "mp_spray_" + sz, "dlcp"),
                   find(cases, "s4", io, "dlcp"))
        tr = ratio(find(cases, "s4", "mp_spray_" + sz, "tcp"),
                   find(cases, "s4", io, "tcp"))
        lab = "multipath spraying, %s messages" % sz.replace("m", " MiB")
        goal = ("DLCP within 5% of in-order (completion p50 and p99, "
                "random per-packet spraying over 0.5/2 ms paths vs one path)")
        if dr:
            n = find(cases, "s4", "mp_spray_" + sz, "dlcp")[0]["messages"]
            add(lab, goal,
                "DLCP sprayed/in-order p50 %.2fx, p99 %.2fx; TCP p50 %s, p99 %s" %
                (dr[0], dr[1], "%.2fx" % tr[0] if tr else "-",
                 "%.2fx" % tr[1] if tr else "-"),
                dr[0] <= 1.05 and dr[1] <= 1.05, "n=%d per case" % n)
        else:
            add(lab, goal, "-", None, "not measured")
        er = ratio(find(cases, "s4", "mp_ecmp_" + sz, "dlcp"),
                   find(cases, "s4", "mp_inorder_udp_" + sz, "dlcp"))
        if er:
            tr = ratio(find(cases, "s4", "mp_ecmp_" + sz, "tcp"),
                       find(cases, "s4", io, "tcp"))
            add("ECMP + DLCP UDP mode, %s messages" % sz.replace("m", " MiB"),
                "DLCP within 5% of in-order (UDP mode both)",
                "DLCP-UDP ECMP/in-order p50 %.2fx, p99 %.2fx; TCP (one hashed "
                "path of half the rate) p50 %s, p99 %s" %
                (er[0], er[1], "%.2fx" % tr[0] if tr else "-",
                 "%.2fx" % tr[1] if tr else "-"),
                er[0] <= 1.05 and er[1] <= 1.05)

    # scenario 10: 30 ms RTT, 1% loss
    for sz in (4 << 20, 1 << 20):
        def one(case, proto, budget="any"):
            r = [c for c in find(cases, "s10", case, proto, budget)
                 if c["params"].get("size") == sz and c["ct_p50_ms"]]
            return r[0] if r else None
        tag = "%dm" % (sz >> 20)
        ref = one("lossrtt_%s_lossless" % tag, "dlcp")
        b1 = one("lossrtt_%s_loss1" % tag, "dlcp", 10000)
        b0 = one("lossrtt_%s_loss1" % tag, "dlcp", 0)
        tcp = one("lossrtt_%s_loss1" % tag, "tcp")
        lab = "long RTT (30 ms) + 1%% loss, %d MiB, budget 1%%: p99" % (sz >> 20)
        goal = "<= 1.3x lossless DLCP p50 and far below TCP p99 (counted: >= 2x)"
        if ref and b1 and tcp:
            r1 = b1["ct_p99_ms"] / ref["ct_p50_ms"]
            r2 = tcp["ct_p99_ms"] / b1["ct_p99_ms"]
            add(lab, goal,
                "DLCP b=1%% p50/p99 %.0f/%.0f ms = p99 %.2fx lossless p50 (%.0f ms); "
                "b=0 p50/p99 %s/%s; TCP p50/p99 %.0f/%.0f ms = p99 %.2fx DLCP b=1%%"
                % (b1["ct_p50_ms"], b1["ct_p99_ms"], r1, ref["ct_p50_ms"],
                   fmt(b0["ct_p50_ms"], 0) if b0 else "-",
                   fmt(b0["ct_p99_ms"], 0) if b0 else "-",
                   tcp["ct_p50_ms"], tcp["ct_p99_ms"], r2),
                r1 <= 1.3 and r2 >= 2,
                "n=%d lossless, %d b=1%%, %s b=0, %d TCP; bound %.0f ms" %
                (ref["messages"], b1["messages"],
                 b0["messages"] if b0 else "-", tcp["messages"], ref["bound_ms"]))
        else:
            add(lab, goal, "-", None, "not measured")

    hi = find(cases, "s6", "race_prio")
    same = find(cases, "s6", "race_sameclass")
    tr = find(cases, "s6", "race_tcp")
    if hi and same and tr and hi[0]["ct_p99_ms"] and same[0]["ct_p99_ms"] and tr[0]["ct_p99_ms"]:
        add("priority race (no target in the issue)",
            "256 KiB class-1 messages racing 4 MiB class-7 bulk",
            "high class p50/p99 %.0f/%.0f ms (bound %.0f); same class %.0f/%.0f; "
            "TCP %.0f/%.0f; bulk goodput %.1f / %.1f / %.1f Mbit/s" %
            (hi[0]["ct_p50_ms"], hi[0]["ct_p99_ms"], hi[0]["bound_ms"],
             same[0]["ct_p50_ms"], same[0]["ct_p99_ms"],
             tr[0]["ct_p50_ms"], tr[0]["ct_p99_ms"],
             hi[0]["bulk_goodput_mbps"] or 0, same[0]["bulk_goodput_mbps"] or 0,
             tr[0]["bulk_goodput_mbps"] or 0), "info")

    buf = {"deep": "deep buffer, tbf limit 128k = ~34 ms, ~35 BDPs",
           "shallow": "shallow buffer, tbf limit 16k = ~4.4 ms, ~4 BDPs"}
    s5 = []
    for c in find(cases, "s5", proto="dlcp"):
        if c["case"] not in s5:
            s5.append(c["case"])
    for case in s5 or ["incast8_256k"]:
        d = find(cases, "s5", case, "dlcp")
        tc = find(cases, "s5", case, "tcp")
        sz = d[0]["params"].get("size", 0) if d else 0
        what = "incast p99, 8 x %d KiB, %s" % (
            sz >> 10, buf.get(d[0]["params"].get("buffer", "deep"), "?") if d else "?")
        if d and tc and d[0]["ct_p99_ms"] and tc[0]["ct_p99_ms"]:
            r = tc[0]["ct_p99_ms"] / d[0]["ct_p99_ms"]
            add(what, ">= 3x below TCP",
                "DLCP p50/p99 %.0f/%.0f ms, TCP p50/p99 %.0f/%.0f ms (p99 TCP/DLCP %.2fx)" %
                (d[0]["ct_p50_ms"], d[0]["ct_p99_ms"], tc[0]["ct_p50_ms"],
                 tc[0]["ct_p99_ms"], r), r >= 3,
                "n=%d messages; bound %.0f ms: no transport can beat TCP by more "
                "than TCP p99 / bound = %.2fx here" %
                (d[0]["messages"], d[0]["bound_ms"],
                 tc[0]["ct_p99_ms"] / d[0]["bound_ms"]))
        else:
            add("incast p99", ">= 3x below TCP", "-", None, "not measured")

    s8 = (("unshaped_1m", "unshaped_1m", "native, super-packets, 1 socket, MTU 1500"),
          ("unshaped_1m_nogso", "unshaped_1m", "native, packet by packet, 1 socket, MTU 1500"),
          ("unshaped_1m_udp_gso", "unshaped_1m", "UDP mode, super-packets, 1 socket, MTU 1500"),
          ("unshaped_1m_udp", "unshaped_1m", "UDP mode, packet by packet, 1 socket, MTU 1500"),
          ("unshaped_1m_4sock", "unshaped_1m_4sock", "native, super-packets, 4 sockets, MTU 1500"),
          ("unshaped_1m_udp_gso_4sock", "unshaped_1m_4sock",
           "UDP mode, super-packets, 4 sockets, MTU 1500"),
          ("unshaped_64k", "unshaped_64k", "native, super-packets, 64 KiB x 64 in flight"),
          ("unshaped_1m_9k", "unshaped_1m_9k", "native, super-packets, 1 socket, MTU 9000"),
          ("unshaped_1m_udp_gso_9k", "unshaped_1m_9k", "UDP mode, super-packets, 1 socket, MTU 9000"),
          ("unshaped_1m_udp_9k", "unshaped_1m_9k", "UDP mode, packet by packet, 1 socket, MTU 9000"))
    for case, tcase, what in s8:
        lab = "CPU efficiency (unshaped veth), DLCP %s" % what
        d = find(cases, "s8", case, "dlcp")
        tc = find(cases, "s8", tcase, "tcp")
        if d and tc and d[0].get("mbit_per_cpu_s") and tc[0].get("mbit_per_cpu_s"):
            r = d[0]["mbit_per_cpu_s"] / tc[0]["mbit_per_cpu_s"]
            g = d[0]["goodput_mbps"] / tc[0]["goodput_mbps"] if tc[0]["goodput_mbps"] else 0
            add(lab, ">= 1.0x TCP goodput per CPU-s and goodput",
                "DLCP %.0f Mbit/s at %.0f Mbit per CPU-s; TCP %.0f Mbit/s at %.0f "
                "(%.2fx per CPU-s, %.2fx goodput)" %
                (d[0]["goodput_mbps"], d[0]["mbit_per_cpu_s"],
                 tc[0]["goodput_mbps"], tc[0]["mbit_per_cpu_s"], r, g),
                r >= 1.0 and g >= 1.0)
        else:
            add(lab, ">= 1.0x TCP per CPU-s", "-", None, "not measured")
    spur = []
    for c in find(cases, "s8", proto="dlcp"):
        rt, dr = c.get("retrans_pkts"), c.get("path_drops")
        if rt is None or dr is None:
            continue
        allow = max(10, (c.get("data_pkts") or 0) // 1000)
        spur.append((c["case"], rt, dr, rt <= dr + allow))
    if spur:
        add("no spurious retransmissions on the unshaped veth",
            "resent <= dropped + max(10, 0.1% of data packets), every case",
            "; ".join("%s %d resent / %d dropped" % (n, rt, dr) for n, rt, dr, _ in spur),
            all(ok for *_, ok in spur))
    return t


def observations(cases):
    """Things about the module worth a look, from the counters."""
    o = []
    for c in cases:
        name = "%s %s %s" % (c["scenario"], c["case"], c["label"])
        if c["rc"] or c["error"]:
            o.append("%s: client failed (rc %d): %s" % (name, c["rc"], c["error"][:200]))
        if c["proto"] != "dlcp":
            continue
        rt, dr, dup = c.get("retrans_pkts"), c.get("path_drops"), c.get("rcv_dup_pkts")
        if rt and dr is not None and rt > 1.5 * dr + 5:
            o.append("%s: %d DLCP retransmissions (%s after a timeout) for %d packets "
                     "dropped on the path; the receiver counted %s duplicates: "
                     "spurious retransmissions" %
                     (name, rt, fmt(c.get("retrans_timeout")), dr, fmt(dup)))
        elif rt and dr is None and dup and dup > 10:
            o.append("%s: receiver counted %d duplicate data packets for %d "
                     "retransmissions (%s after a timeout)" %
                     (name, dup, rt, fmt(c.get("retrans_timeout"))))
        for k, what in (("out_msgs_failed", "sender gave up on messages"),
                        ("rcv_msgs_timeout", "receiver timed out messages")):
            if c.get(k):
                o.append("%s: %s (%d)" % (name, what, c[k]))
        if c["failed_msgs"]:
            o.append("%s: %d completions reported a timeout/deadline" %
                     (name, c["failed_msgs"]))
    return o


def plot_scenario(scen, cs, outdir):
    if not cs:
        return None
    fn = os.path.join(outdir, "%s.png" % scen)
    if scen == "s7":
        fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
        ax = axes[0]
        for proto, style in (("dlcp", "o-"), ("tcp", "s--")):
            pts = sorted((c["params"]["size"], c) for c in cs
                         if c["case"].startswith("size_") and c["proto"] == proto
                         and c["ct_p50_ms"] is not None)
            if pts:
                ax.plot([p[0] for p in pts], [p[1]["ct_p50_ms"] for p in pts],
                        style, label=proto + " p50")
                ax.plot([p[0] for p in pts], [p[1]["ct_p99_ms"] for p in pts],
                        style, alpha=0.5, label=proto + " p99")
        pts = sorted((c["params"]["size"], c["bound_ms"]) for c in cs
                     if c["case"].startswith("size_") and c["proto"] == "dlcp"
                     and c.get("bound_ms"))
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "k:", label="bound")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("completion time (ms)")
        ax.set_title("completion time vs message size")
        ax.legend(fontsize=8)
        ax = axes[1]
        for proto, style in (("dlcp", "o-"), ("tcp", "s--")):
            pts = sorted((c["senders"], c) for c in cs
                         if c["case"].startswith("senders_") and c["proto"] == proto
                         and c["ct_p50_ms"] is not None)
            if pts:
                ax.plot([p[0] for p in pts], [p[1]["ct_p50_ms"] for p in pts],
                        style, label=proto + " p50")
                ax.plot([p[0] for p in pts], [p[1]["ct_p99_ms"] for p in pts],
                        style, alpha=0.5, label=proto + " p99")
        pts = sorted((c["senders"], c["bound_ms"]) for c in cs
                     if c["case"].startswith("senders_") and c["proto"] == "dlcp"
                     and c.get("bound_ms"))
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "k:", label="bound")
        ax.set_xlabel("senders (256 KiB messages)")
        ax.set_ylabel("completion time (ms)")
        ax.set_title("completion time vs senders")
        ax.legend(fontsize=8)
    else:
        fig, axes = plt.subplots(1, 2, figsize=(12, 4.5),
                                 gridspec_kw={"width_ratios": [3, 1.2]})
        labels = ["%s\n%s" % (c["case"], c["label"]) for c in cs]
        x = range(len(cs))
        ax = axes[0]
        w = 0.27
        for i, (k, lab) in enumerate((("ct_p50_ms", "p50"), ("ct_p99_ms", "p99"),
                                      ("ct_max_ms", "max"))):
            ax.bar([j + (i - 1) * w for j in x], [c[k] or 0 for c in cs], w,
                   label=lab)
        bx = [j for j, c in enumerate(cs) if c.get("bound_ms")]
        if bx:
            ax.plot(bx, [cs[j]["bound_ms"] for j in bx], "k_", markersize=25,
                    mew=2, label="physical bound")
        ax.set_xticks(list(x))
        ax.set_xticklabels(labels, fontsize=7, rotation=30, ha="right")
        ax.set_ylabel("message completion time (ms)")
        if any((c["ct_max_ms"] or 0) > 20 * (c["ct_p50_ms"] or 1e9) for c in cs):
            ax.set_yscale("log")
        ax.legend(fontsize=8)
        ax.set_title("completion time percentiles")
        ax = axes[1]
        ax.bar(list(x), [c["goodput_mbps"] or 0 for c in cs],
               color=["tab:blue" if c["proto"] == "dlcp" else "tab:orange"
                      for c in cs])
        rate = max((c["rate_mbit"] for c in cs), default=0)
        if rate:
            ax.axhline(rate, color="k", ls=":", label="link rate")
            ax.legend(fontsize=8)
        ax.set_xticks(list(x))
        ax.set_xticklabels([c["label"] for c in cs], fontsize=7, rotation=30,
                           ha="right")
        ax.set_ylabel("goodput (Mbit/s)")
        ax.set_title("goodput")
    fig.suptitle(SCEN_TITLE.get(scen, scen))
    fig.tight_layout()
    fig.savefig(fn, dpi=90)
    plt.close(fig)
    return os.path.basename(fn)


# scenarios that measure goodput of a bulk transfer, not lone messages:
# no completion-time CDF for them
BULK_SCENARIOS = ("s1", "s8")


def plot_cdf(scen, cs, outdir):
    """sN-cdf.png: the empirical CDF of message completion times, one panel
    per case (scenario 6: one panel for the race), one line per protocol
    and budget; None if no case of @scen has samples."""
    if scen in BULK_SCENARIOS:
        return None
    panels = {}
    for c in cs:
        if c["_samples_ms"]:
            key = "race" if c["params"].get("race") else c["case"]
            panels.setdefault(key, []).append(c)
    if not panels:
        return None
    ncol = min(4, len(panels))
    nrow = (len(panels) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(max(7, 4 * ncol), 3.3 * nrow + 0.4),
                             squeeze=False)
    for ax, (key, pc) in zip(axes.flat, panels.items()):
        lo, hi = float("inf"), 0.0
        for c in pc:
            v = sorted(c["_samples_ms"])
            lo, hi = min(lo, v[0]), max(hi, v[-1])
            ax.step(v, [(i + 1) / len(v) for i in range(len(v))], where="post",
                    ls="-" if c["proto"] == "dlcp" else "--",
                    label="%s (n=%d)" % (c["label"], len(v)))
        bound = next((c["bound_ms"] for c in pc if c.get("bound_ms")), None)
        if bound:
            ax.axvline(bound, color="k", ls=":", label="physical bound")
        if lo > 0 and hi > 20 * lo:
            ax.set_xscale("log")
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("completion time (ms)")
        ax.set_ylabel("fraction of messages")
        ax.set_title(key, fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    fig.suptitle("%s: completion-time CDF" % SCEN_TITLE.get(scen, scen),
                 fontsize=10)
    fig.tight_layout()
    fn = os.path.join(outdir, "%s-cdf.png" % scen)
    fig.savefig(fn, dpi=90)
    plt.close(fig)
    return os.path.basename(fn)


def plot_cpu(cs, outdir):
    """s8-cpu.png: goodput per CPU-second and goodput of every scenario 8
    case, DLCP against TCP; None without a measured case."""
    cs = [c for c in cs if c.get("mbit_per_cpu_s")]
    if not cs:
        return None
    fig, axes = plt.subplots(1, 2, figsize=(12, 0.45 * len(cs) + 1.8),
                             sharey=True)
    names = ["%s  %s" % (c["case"], c["label"]) for c in cs]
    colors = ["tab:blue" if c["proto"] == "dlcp" else "tab:orange" for c in cs]
    y = list(range(len(cs)))
    for ax, key, what in ((axes[0], "mbit_per_cpu_s", "goodput per CPU-second (Mbit)"),
                          (axes[1], "goodput_mbps", "goodput (Mbit/s)")):
        vals = [c.get(key) or 0 for c in cs]
        ax.barh(y, vals, color=colors)
        for j, v in zip(y, vals):
            ax.text(v, j, " %.0f" % v, va="center", fontsize=7)
        ax.set_xlabel(what)
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(y)
    axes[0].set_yticklabels(names, fontsize=7)
    axes[0].invert_yaxis()
    fig.suptitle("%s: DLCP (blue) against TCP (orange)" % SCEN_TITLE["s8"])
    fig.tight_layout()
    fn = os.path.join(outdir, "s8-cpu.png")
    fig.savefig(fn, dpi=90)
    plt.close(fig)
    return os.path.basename(fn)


def plot_all(cases, outdir):
    """Every plot of the run: {scenario: [file, ...]}."""
    plots = {}
    for scen in sorted({c["scenario"] for c in cases}, key=scen_key):
        cs = [c for c in cases if c["scenario"] == scen]
        files = [plot_scenario(scen, cs, outdir), plot_cdf(scen, cs, outdir)]
        if scen == "s8":
            files.append(plot_cpu(cs, outdir))
        files = [f for f in files if f]
        if files:
            plots[scen] = files
    return plots


def scen_key(scen):
    """Scenarios in their numeric order (s2 before s10)."""
    return int(scen[1:]) if scen[1:].isdigit() else 99


def main():
    outdir = sys.argv[1]
    meta = {}
    try:
        with open(os.path.join(outdir, "meta.json")) as f:
            meta = json.load(f)
    except (OSError, ValueError):
        pass
    groups = []
    try:
        with open(os.path.join(outdir, "groups.tsv")) as f:
            for line in f:
                g, rc, secs, load = line.rstrip("\n").split("\t")
                groups.append({"group": g, "vm_exit": int(rc),
                               "seconds": int(secs), "host_load1_after": load})
    except OSError:
        pass
    cases, skipped, bad_lines = [], [], 0
    for fn in sorted(glob.glob(os.path.join(outdir, "raw", "*.jsonl"))):
        with open(fn) as f:
            for line in f:
                try:
                    rec = json.loads(line)
                except ValueError:
                    bad_lines += 1
                    continue
                if "skipped" in rec:
                    skipped.append(rec)
                else:
                    cases.append(summarize(rec))
    cases.sort(key=lambda c: scen_key(c["scenario"]))
    tg = targets(cases)
    plots = plot_all(cases, outdir)
    public = [{k: v for k, v in c.items() if not k.startswith("_")}
              for c in cases]
    res = {"meta": meta, "groups": groups, "targets": tg, "cases": public,
           "skipped": skipped, "plots": plots, "unparsable_lines": bad_lines}
    with open(os.path.join(outdir, "results.json"), "w") as f:
        json.dump(res, f, indent=1)

    L = []
    L.append("# DLCP benchmark results %s%s" %
             (meta.get("timestamp", ""), " (QUICK)" if meta.get("quick") else ""))
    L.append("")
    L.append("git %s, module md5 %s, host load average at start %s (%s CPUs)." %
             (meta.get("git", "?"), meta.get("module_md5", "?")[:12],
              meta.get("host_loadavg_start", "?"), meta.get("host_nproc", "?")))
    L.append("Topology: two network namespaces of one QEMU TCG VM joined by veth; "
             "sender egress netem delay 0.5 ms + tbf 30 Mbit/s (burst 64k, limit "
             "128k), receiver egress netem delay 0.5 ms: base RTT 1 ms (scenario 4 "
             "netem reorder: 2.5 ms; scenario 4 multipath: sender -> router -> "
             "receiver over one path (1.25 ms, 30 Mbit/s) or two (0.5 ms and 2 ms, "
             "15 Mbit/s each), 1.75 ms mean RTT; scenario 5 shallow: tbf limit 16k; "
             "scenario 10: 30 ms RTT; scenario 8: no qdisc). TCP is cubic with TCP_NODELAY, same "
             "message framing. Shaped runs: veth offloads off. See docs/bench.md.")
    L.append("")
    L.append("Completion time (CT) = receiver's recvmsg() return minus sender's "
             "sendmsg() start, both CLOCK_MONOTONIC of the same VM kernel "
             "(mode: %s). Physical bound = senders x size / 30 Mbit/s + base RTT. "
             "Percentiles are nearest-rank over few samples (n column): p99 of "
             "n < 100 is the maximum." %
             ",".join(sorted({c["ct_mode"] for c in cases if c["ct_mode"]})))
    L.append("")
    if groups:
        L.append("VM runs: " + ", ".join(
            "%s exit %d (%d s)" % (g["group"], g["vm_exit"], g["seconds"])
            for g in groups) + ". (exit 125 = kernel logged a warning; see vm-GROUP.log)")
        L.append("")
    L.append("## Targets")
    L.append("")
    L.append("| target | goal | measured | met |")
    L.append("|---|---|---|---|")
    for t in tg:
        met = {True: "**yes**", False: "**no**", None: "not measured",
               "info": "n/a"}[t["met"]]
        L.append("| %s | %s | %s | %s%s |" % (t["target"], t["goal"], t["value"],
                                               met, (" (" + t["note"] + ")") if t["note"] else ""))
    L.append("")
    L.append("## Cases")
    L.append("")
    L.append("| scen | case | proto | n | CT p50 ms | p90 | p99 | p99.9 | max | bound ms | p99/bound | goodput Mbit/s | bytes lost | lossy msgs | retrans pkts / data pkts | path drops | rcv dup pkts | CPU busy s | Mbit per CPU-s | rc |")
    L.append("|" + "---|" * 20)
    for c in cases:
        rt = "%s / %s" % (fmt(c.get("retrans_pkts")), fmt(c.get("data_pkts")))
        L.append("| %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %d | %d | %s | %s | %s | %s | %s | %s |" % (
            c["scenario"], c["case"], c["label"], c["messages"],
            fmt(c["ct_p50_ms"]), fmt(c["ct_p90_ms"]), fmt(c["ct_p99_ms"]),
            fmt(c["ct_p999_ms"]), fmt(c["ct_max_ms"]), fmt(c.get("bound_ms")),
            fmt(c.get("p99_over_bound"), 2), fmt(c["goodput_mbps"]),
            c["bytes_lost"], c["lossy_msgs"], rt, fmt(c.get("path_drops")),
            fmt(c.get("rcv_dup_pkts")),
            fmt(c["cpu_busy_s"], 2), fmt(c.get("mbit_per_cpu_s")),
            c["rc"] if not c["error"] else "%d: %s" % (c["rc"], c["error"][:160])))
    L.append("")
    obs = observations(cases)
    res["observations"] = obs
    with open(os.path.join(outdir, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    if obs:
        L.append("## Observations (automatic)")
        L.append("")
        for o in obs:
            L.append("- " + o)
        L.append("")
    if skipped:
        L.append("## Skipped")
        L.append("")
        for s in skipped:
            L.append("- %s %s: %s" % (s["scenario"], s["case"], s["skipped"]))
        L.append("")
    if plots:
        L.append("## Plots")
        L.append("")
        for s, files in plots.items():
            L.append("- %s: %s" % (SCEN_TITLE.get(s, s), " ".join(
                "![%s](%s)" % (os.path.splitext(p)[0], p) for p in files)))
        L.append("")
    mp = [c for c in cases if c.get("path_tx_pkts")]
    if mp:
        L.append("## Multipath: packets the router sent per path")
        L.append("")
        L.append("| case | proto | path 1 (0.5 ms) | path 2 (2 ms) |")
        L.append("|---|---|---|---|")
        for c in mp:
            L.append("| %s | %s | %d | %d |" % (c["case"], c["label"],
                                              c["path_tx_pkts"][0], c["path_tx_pkts"][1]))
        L.append("")
    L.append("## Netem per case")
    L.append("")
    seen = set()
    for c in cases:
        k = (c["scenario"], c["case"])
        if k not in seen:
            seen.add(k)
            L.append("- %s %s: %s; veth TSO/GSO/GRO %s; %d sender(s); client args `%s`" %
                     (c["scenario"], c["case"], c["netem"], c["offload"],
                      c["senders"], c["args"]))
    L.append("")
    with open(os.path.join(outdir, "results.md"), "w") as f:
        f.write("\n".join(L))
    print("\n".join(L[:40 + len(cases)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
