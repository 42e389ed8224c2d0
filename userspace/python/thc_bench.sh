#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# Homomorphic compression and DeAR overlap, measured. Inside the
# test VM (root, module built):
#
#   tools/vm-run --timeout 2400 -- userspace/python/thc_bench.sh
#
# 1. test_qcoll over DLCP on a lossy lo (netem LOSS): quantized collectives
#    keep every element exact (mean over arrived contributions);
# 2. the digits training (demo_train.sh: WORKERS ranks, RATE links, LOSS on
#    the uplinks, BUDGET ppm) with fp32 / 8-bit / 4-bit homomorphic
#    compression (and 8-bit "fit"), each without and with DeAR overlap, on the same lossy
#    links; a table of accuracy, iteration time and bytes sent per rank.
#
# Environment: WORKERS (3), EPOCHS (6), RATE (20mbit), LOSS (1%), BUDGET
# (50000), THC_PHASES (the phase list), OUT (results file).
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
export WORKERS=${WORKERS:-3} EPOCHS=${EPOCHS:-6} RATE=${RATE:-20mbit}
export LOSS=${LOSS:-1%} BUDGET=${BUDGET:-50000}
export OUT=${OUT:-$HERE/results/thc.jsonl}
export PHASES=${THC_PHASES:-dlcp:lossy,dlcp+q8:lossy,dlcp+q4:lossy,dlcp+q8+fit:lossy,dlcp+dear:lossy,dlcp+q8+dear:lossy,dlcp+q4+dear:lossy,dlcp+q8+fit+dear:lossy}
rc=0

make -s -C "$TOP/userspace/lib" >/dev/null
make -s -C "$TOP/userspace/lib/tests" test_qcoll >/dev/null
grep -q "^dlcp " /proc/modules || insmod "${DLCP_KO:-$TOP/kmod/dlcp.ko}" || exit 1
modprobe -q sch_netem
ip netns del tq 2>/dev/null
ip netns add tq
ip -n tq link set lo up
ip -n tq link set lo mtu 1500
# packet by packet (GSO off): netem drops a super-packet whole
ip netns exec tq ethtool -K lo gso off > /dev/null
ip netns exec tq tc qdisc add dev lo root netem loss random 2%
echo "# lo: netem loss 2%"
ip netns exec tq "$TOP/userspace/lib/tests/test_qcoll" dlcp --loss || rc=1
ip netns del tq

"$HERE/demo_train.sh" || rc=1
/usr/bin/python3 - "$OUT" <<'PY' || rc=1
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print("| phase | test acc % | mean iter ms | p50 ms | bytes sent (rank 0) | comm s | elems lost |")
print("|---|---|---|---|---|---|---|")
for r in rows:
    d = r.get("dlcp", {})
    print("| %s | %.2f | %.1f | %.1f | %s | %.1f | %s |" % (
        r["phase"], r["test_acc"], r["mean_ms"], r["p50_ms"], d.get("bytes_sent", "-"),
        d.get("comm_s", 0), d.get("elems_lost", "-")))
PY
exit $rc
