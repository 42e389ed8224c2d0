#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DLCP training demo (make demo), run inside the test VM (root, module built):
#
#   tools/vm-run --timeout 2400 -- userspace/python/demo_train.sh
#
# N workers (default 4), each a process in its own network namespace
# (dw0..dwN-1, 10.77.0.(i+1)/24), joined by veths to a bridge in a router
# namespace (dr). Every worker link is rate-limited (tbf) and delayed
# (netem) in both directions, and lossy (netem) on the worker's egress
# only, so that every packet, worker to worker, sees the loss rate once
# and the delay twice: the round trip worker to worker is 4 x DELAY.
# TSO/GSO are off on the veths, so that netem drops wire-sized packets as a
# real link does (with GSO, one "packet" at the qdisc is a TCP burst of up
# to 64 KB: 1% loss would hit 1% of bursts, one loss event per ~44
# packets, which TCP shrugs off); DLCP sends wire-sized packets anyway.
#
# Why these defaults (20 Mbit/s, 10 ms per link, 1% loss): loss costs TCP
# in proportion to the round trip. Its loss-limited rate (Mathis et al.) is
# about MSS/RTT x 1.22/sqrt(p): at p = 1% and the 40 ms round trip here,
# 1448 B x 8 / 40 ms x 12.2 = 3.5 Mbit/s, well under the 20 Mbit/s link,
# as on a real fabric (or WAN) path with a non-trivial RTT. At 1 ms per
# link (RTT ~2-4 ms, the old default) the same formula gives 45-70 Mbit/s,
# above the link: 1% loss cost TCP nothing there and no transport could
# be faster. gloo and DLCP run on the same lossy links; the lossless
# reference (gloo:clean) runs on the same links at the same delay and rate
# without loss.
# The same job (train_digits.py, fixed seed) runs over plain gloo (TCP
# allreduce) and over DLCP (dlcp_ddp hook, ring all-reduce with a loss
# budget) on the same lossy links, alternating epoch by epoch, then gloo on
# clean links as the lossless reference; a table compares iteration time
# and test accuracy.
#
# Environment: WORKLOAD (train; coll: time the all-reduce alone, for
# COLL_CASES "tcp:ring dlcp:ring tcp:direct dlcp:direct" on COLL_CONDS
# "clean lossy", COLL_ITERS 30 times each), ALGO (DLCP's all-reduce:
# direct or ring), WORKERS (4), RATE (20mbit), LOSS (1%), DELAY (10ms per link,
# each direction), OFFLOAD (off: TSO/GSO off on the veths; on: kernel default),
# BUDGET (ppm, reduce-scatter, 50000), BUDGET2 (ppm, all-gather, 0: exact,
# so that the replicas stay identical), EPOCHS (10), HIDDEN (256), LR (0.05), BUCKET_MB (25,
# DDP's default: one bucket), RTO_MIN_MS (net.dlcp.rto_min_ms in the
# workers' namespaces; unset: the module's default), TRAIN_ARGS (more
# train_digits.py options), DLCP_KO (module), PHASES
# (gloo:lossy,dlcp:lossy,gloo:clean; also local:clean, the compute alone, and
# COND-rtoMS, e.g. dlcp:lossy-rto50), OUT (results file; worker logs go next
# to it), SAMPLE (seconds: log rank 0's DLCP cwnd and srtt to sockets.log),
# INTERLEAVE (1: phases on the same links alternate epoch by epoch, so that
# gloo and DLCP see the same load of a shared host; 0: one after the other),
# TRACE (1: record the module's dlcp_cwnd trace events to cwnd.trace next
# to OUT and count the window changes by reason).
#
#   demo_train.sh link clean|lossy[-rtoMS]    (internal: reshape the links)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
WORKERS=${WORKERS:-4}
RATE=${RATE:-20mbit}
LOSS=${LOSS:-1%}
DELAY=${DELAY:-10ms}
OFFLOAD=${OFFLOAD:-off}
TRACE=${TRACE:-}
BUDGET=${BUDGET:-50000}
BUDGET2=${BUDGET2:-0}
ALGO=${ALGO:-direct}
EPOCHS=${EPOCHS:-10}
HIDDEN=${HIDDEN:-256}
LR=${LR:-0.05}
BUCKET_MB=${BUCKET_MB:-25}
TRAIN_ARGS=${TRAIN_ARGS:-}
RTO_MIN_MS=${RTO_MIN_MS:-}
INTERLEAVE=${INTERLEAVE:-1}
PHASES=${PHASES:-gloo:lossy,dlcp:lossy,gloo:clean}
OUT=${OUT:-$HERE/results/demo-train.jsonl}
LOGDIR=$(dirname "$OUT")
PY=/usr/bin/python3

# shape NS DEV LOSS: netem (delay, loss) with tbf (rate) under it
shape() {
	local ns=$1 dev=$2 loss=$3
	tc -n "$ns" qdisc replace dev "$dev" root handle 1: netem delay "$DELAY" \
		loss random "$loss" limit 10000
	tc -n "$ns" qdisc replace dev "$dev" parent 1: handle 2: tbf rate "$RATE" \
		burst 32kb latency 100ms
}

# link clean|lossy[-rtoMS]: shape the links; -rtoMS also sets
# net.dlcp.rto_min_ms in the workers' namespaces (else $RTO_MIN_MS, if set)
link() {
	local cond=${1%%-rto*} rto=$RTO_MIN_MS i loss
	case $1 in *-rto*) rto=${1##*-rto} ;; esac
	case $cond in
	clean) loss=0% ;;
	lossy) loss=$LOSS ;;
	*) echo "link: clean or lossy" >&2; exit 2 ;;
	esac
	for ((i = 0; i < WORKERS; i++)); do
		shape "dw$i" "v$i" "$loss"	# uplink: lossy
		shape dr "b$i" 0%		# downlink: rate only
		if [ -n "$rto" ]; then
			ip netns exec "dw$i" sysctl -qw net.dlcp.rto_min_ms="$rto"
		fi
	done
	echo "# links: $1 (rate $RATE, delay $DELAY per direction, loss $loss on uplinks, offload $OFFLOAD${rto:+, rto_min_ms $rto})" >&2
}

setup() {
	local i
	modprobe -q veth
	modprobe -q sch_netem
	modprobe -q sch_tbf
	grep -q "^dlcp " /proc/modules || insmod "${DLCP_KO:-$TOP/kmod/dlcp.ko}"
	ip netns add dr
	ip -n dr link set lo up
	ip -n dr link add br0 type bridge
	ip -n dr link set br0 up
	for ((i = 0; i < WORKERS; i++)); do
		ip netns add "dw$i"
		ip -n "dw$i" link set lo up
		ip link add "v$i" netns "dw$i" type veth peer name "b$i" netns dr
		ip -n "dw$i" addr add "10.77.0.$((i + 1))/24" dev "v$i"
		ip netns exec "dw$i" ethtool -K "v$i" tso "$OFFLOAD" gso "$OFFLOAD" \
			gro "$OFFLOAD" >/dev/null 2>&1 || true
		ip netns exec dr ethtool -K "b$i" tso "$OFFLOAD" gso "$OFFLOAD" \
			gro "$OFFLOAD" >/dev/null 2>&1 || true
		ip -n "dw$i" link set "v$i" up
		ip -n dr link set "b$i" master br0
		ip -n dr link set "b$i" up
	done
}

teardown() {
	local i
	for ((i = 0; i < WORKERS; i++)); do
		ip netns del "dw$i" 2>/dev/null || true
	done
	ip netns del dr 2>/dev/null || true
}

if [ "${1:-}" = link ]; then
	link "$2"
	exit 0
fi
if [ $# -ne 0 ]; then
	echo "usage: $0 [link clean|lossy]" >&2
	exit 2
fi

start=$(date +%s)
make -s -C "$TOP/userspace/lib" >/dev/null
mkdir -p "$(dirname "$OUT")"
: > "$OUT"
teardown
setup
trap teardown EXIT
link lossy
ip netns exec dw0 ping -c 1 -W 2 "10.77.0.$WORKERS" >/dev/null

# WORKLOAD=coll (make demo-coll): time the all-reduce of the model's
# gradient alone (coll_bench.py, no model), for each transport and
# algorithm in COLL_CASES, on clean and lossy links
if [ "${WORKLOAD:-train}" = coll ]; then
	rc=0
	for cond in ${COLL_CONDS:-clean lossy}; do
		link "$cond"
		for c in ${COLL_CASES:-tcp:ring dlcp:ring tcp:direct dlcp:direct}; do
			pids=()
			for ((i = 0; i < WORKERS; i++)); do
				ip netns exec "dw$i" env RANK=$i WORLD_SIZE="$WORKERS" \
					DLCP_ADDR_PLAN=10.77 PYTHONDONTWRITEBYTECODE=1 $PY "$HERE/coll_bench.py" \
					--transport "${c%%:*}" --algo "${c#*:}" --label "$cond $c" \
					--budget "$BUDGET" --budget2 "$BUDGET2" \
					--iters "${COLL_ITERS:-30}" > "$LOGDIR/coll.$i.log" 2>&1 &
				pids+=($!)
			done
			for p in "${pids[@]}"; do
				wait "$p" || { rc=1; tail -n 5 "$LOGDIR"/coll.*.log; }
			done
			tee -a "$OUT" < "$LOGDIR/coll.0.log"
		done
	done
	echo "# demo_train coll: $(( $(date +%s) - start )) s, workers $WORKERS, rate $RATE, delay $DELAY per link, loss $LOSS, budget $BUDGET/$BUDGET2 ppm"
	exit $rc
fi

# SAMPLE=S: every S seconds, log rank 0's DLCP sockets (cwnd, srtt_us)
if [ -n "${SAMPLE:-}" ]; then
	# shellcheck disable=SC2016  # awk fields
	while sleep "$SAMPLE"; do
		echo "$(date +%s.%N) $(ip netns exec dw0 awk 'NR > 1 { print $8, $9 }' \
			/proc/net/dlcp/sockets 2>/dev/null | tr '\n' ' ')"
	done > "$LOGDIR/sockets.log" &
	sampler=$!
fi
TR=/sys/kernel/tracing
if [ -n "$TRACE" ] && [ -d $TR/events/dlcp/dlcp_cwnd ]; then
	echo 16384 > $TR/buffer_size_kb
	echo > $TR/trace
	echo 1 > $TR/events/dlcp/dlcp_cwnd/enable
fi
read -ra targs <<< "$TRAIN_ARGS"
pids=()
for ((i = 0; i < WORKERS; i++)); do
	outarg=()
	[ "$i" = 0 ] && outarg=(--out "$OUT")
	[ "$INTERLEAVE" = 1 ] && outarg+=(--interleave)
	ip netns exec "dw$i" env RANK=$i WORLD_SIZE="$WORKERS" MASTER_ADDR=10.77.0.1 \
		MASTER_PORT=29500 GLOO_SOCKET_IFNAME="v$i" DLCP_ADDR_PLAN=10.77 DLCP_BASE_PORT=29600 DLCP_LINK_CMD="$HERE/demo_train.sh link" \
		WORKERS="$WORKERS" RATE="$RATE" LOSS="$LOSS" DELAY="$DELAY" \
		PYTHONDONTWRITEBYTECODE=1 \
		$PY "$HERE/train_digits.py" --phases "$PHASES" --epochs "$EPOCHS" \
		--hidden "$HIDDEN" --budget "$BUDGET" --budget2 "$BUDGET2" \
		--lr "$LR" --bucket-mb "$BUCKET_MB" --algo "$ALGO" \
		"${targs[@]}" "${outarg[@]}" \
		> "$LOGDIR/train.$i.log" 2>&1 &
	pids+=($!)
done
rc=0
for p in "${pids[@]}"; do
	wait "$p" || rc=1
done
if [ $rc != 0 ]; then
	for ((i = 0; i < WORKERS; i++)); do
		echo "---- rank $i"; tail -30 "$LOGDIR/train.$i.log"
	done
fi
[ -z "${sampler:-}" ] || kill "$sampler"
if [ -n "$TRACE" ] && [ -d $TR/events/dlcp/dlcp_cwnd ]; then
	echo 0 > $TR/events/dlcp/dlcp_cwnd/enable
	cat $TR/trace > "$LOGDIR/cwnd.trace"
	grep -o 'why=[a-z]*' "$LOGDIR/cwnd.trace" | sort | uniq -c |
		sed 's/^/# cwnd changes: /' >&2 || true
fi
grep -h 'phase done' "$LOGDIR/train.0.log" | cut -c1-300 >&2 || true
# DLCP counters, summed over the workers' namespaces
for ((i = 0; i < WORKERS; i++)); do
	ip netns exec "dw$i" cat /proc/net/dlcp/snmp 2>/dev/null || true
done | awk '$1 ~ /Retrans|Msgs|BytesLost|GivenUp|DupPkts|Drop(RcvMem|Mismatch|UnknownMsg)/ \
	{ s[$1] += $2 } END { for (k in s) printf "# snmp %-24s %d\n", k, s[k] }' | sort
$PY "$HERE/demo_summary.py" "$OUT" || rc=1
echo "# demo_train: $(( $(date +%s) - start )) s, workers $WORKERS, rate $RATE, delay $DELAY per link, loss $LOSS, offload $OFFLOAD, budget $BUDGET/$BUDGET2 ppm, DLCP algorithm $ALGO"
exit $rc
