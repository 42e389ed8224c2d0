#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# DeAR scheduling and the compressed DDP hook, end to end on the host: two
# train_digits.py ranks over libdlcp's TCP transport (127.0.0.1). TAP.
#   1. DeAR with fp32 gives the plain hook's training loss bit for bit (same
#      arithmetic, only the schedule differs);
#   2. 8-bit compression, with and without DeAR, trains to within 1 point of
#      test accuracy of fp32 after 3 epochs (and both ranks agree).
# Needs Debian's /usr/bin/python3 with torch and sklearn. The ranks are
# started by torchrun (python3 -m dlcp.run) with a c10d rendezvous on a
# port the kernel chooses, and the DLCP group meets through the process
# group's store on ports of its own: no fixed port, so runs side by side
# on one host do not collide.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
echo "TAP version 13"
PYTHONPATH="$HERE" DLCP_TRANSPORT=tcp DLCP_ADDR=127.0.0.1 GLOO_SOCKET_IFNAME=lo \
PYTHONDONTWRITEBYTECODE=1 \
	timeout 600 /usr/bin/python3 -m dlcp.run --nproc_per_node=2 \
	--rdzv_backend=c10d --rdzv_endpoint=127.0.0.1:0 \
	"$HERE/train_digits.py" --epochs 3 --hidden 64 \
	--budget 0 --phases dlcp,dlcp+dear,dlcp+q8,dlcp+q8+dear,dlcp+q4+h+dear,dlcp+q8+fit+dear \
	> "$TMP/out.0" 2> "$TMP/log.0"
/usr/bin/python3 - "$TMP/out.0" <<'PY'
import json, sys
rows = {}
for l in open(sys.argv[1]):
    if l.startswith("{"):
        r = json.loads(l)
        rows[r["phase"]] = r
n, bad = 0, 0
def check(ok, what):
    global n, bad
    n += 1
    bad += not ok
    print("%sok %d - %s" % ("" if ok else "not ", n, what))
ph = ["dlcp", "dlcp+dear", "dlcp+q8", "dlcp+q8+dear", "dlcp+q4+h+dear", "dlcp+q8+fit+dear"]
check(all(p in rows for p in ph), "every phase ran (%s)" % ", ".join(rows))
if all(p in rows for p in ph):
    a, d = rows["dlcp"], rows["dlcp+dear"]
    check(a["train_loss"] == d["train_loss"] and a["test_acc"] == d["test_acc"],
          "dear fp32 == plain hook: loss %r vs %r" % (d["train_loss"], a["train_loss"]))
    for p in ph[2:]:
        r = rows[p]
        check(abs(r["test_acc"] - a["test_acc"]) <= 1.0 and r["param_spread"] == 0,
              "%s: accuracy %.2f vs fp32 %.2f, bytes sent %d vs %d, ranks agree" % (
                  p, r["test_acc"], a["test_acc"], r["dlcp"]["bytes_sent"],
                  a["dlcp"]["bytes_sent"]))
print("1..%d" % n)
sys.exit(1 if bad else 0)
PY
rc=$?
[ $rc = 0 ] || tail -40 "$TMP/log.0" | sed 's/^/# /'
exit $rc
