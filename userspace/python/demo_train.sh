#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# DLCP training demo (make demo), run inside the test VM (root, module built):
#
#   tools/vm-run --timeout 2400 -- userspace/python/demo_train.sh
#
# N workers (default 4), each a network namespace (dw0..dwN-1) with an
# ordinary address ($NET.(i+1)/24, default 172.30.0.0/24), joined by veths
# to a bridge in a router namespace (dr): each namespace is a node of a
# torchrun job, started with `python3 -m dlcp.run --nnodes N
# --nproc_per_node 1 --node_rank i --master_addr <node 0>` as a user starts
# a multi-node job. Every worker link is rate-limited (tbf) and delayed
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
# WORKLOAD=train (make demo): train_ddp.py, a DDP job written against plain
# torch.distributed, runs once per phase of PHASES as its own torchrun job:
# "gloo" phases with init_process_group("gloo"), "dlcp" phases with
# init_process_group("dlcp") (the backend) and DDP over a group of the
# gradients' own with loss budgets BUDGET and BUDGET2 (--budget, --budget2;
# the algorithm from DLCP_ALGO, set from ALGO), from the same seed on the
# same links; the part after ':' reshapes the links first (clean or
# lossy[-rtoMS]). gloo on clean
# links is the lossless reference; a table compares iteration time and test
# accuracy (demo_summary.py: printed, and written beside OUT as .txt, with a
# plot of both per epoch and phase as .png). Rank 0's per-epoch lines are
# printed as they come.
#
# WORKLOAD=hook: train_digits.py, the research harness, under torchrun
# too: gloo against DLCP through the DDP communication hook (dlcp.ddp) and
# its variants (compression, DeAR, ring/direct/ps), phases interleaved
# epoch by epoch on one link condition (INTERLEAVE=1) so that they see the
# same load of a shared host; see train_digits.py for the phase syntax.
#
# WORKLOAD=coll (make demo-coll): the all-reduce of the model's gradient
# alone (coll_bench.py, no model), for COLL_CASES "tcp:ring dlcp:ring
# tcp:direct dlcp:direct" on COLL_CONDS "clean lossy", COLL_ITERS 30 times
# each.
#
# Environment: WORKLOAD (train, hook or coll), NET (the workers' /24,
# default 172.30.0), ALGO (DLCP's all-reduce: direct or ring), WORKERS (4),
# RATE (20mbit), LOSS (1%), DELAY (10ms per link, each direction), OFFLOAD
# (off: TSO/GSO off on the veths; on: kernel default), BUDGET (ppm,
# reduce-scatter, 50000), BUDGET2 (ppm, all-gather, 0: exact, so that the
# replicas stay identical), EPOCHS (10), HIDDEN (256), LR (0.05), BUCKET_MB
# (25, DDP's default: one bucket), RTO_MIN_MS (net.dlcp.rto_min_ms in the
# workers' namespaces; unset: the module's default), TRAIN_ARGS (more
# options of the training script), DLCP_KO (module), PHASES
# (gloo:lossy,dlcp:lossy,gloo:clean; WORKLOAD=hook also takes local:clean,
# the compute alone, and dlcp+MODS:COND), OUT (results file; worker logs go
# next to it), SAMPLE (seconds: log rank 0's DLCP cwnd and srtt to
# sockets.log), INTERLEAVE (WORKLOAD=hook: 1, phases on the same links
# alternate epoch by epoch; 0: one after the other), TRACE (1: record the
# module's dlcp_cwnd trace events to cwnd.trace next to OUT and count the
# window changes by reason).
#
#   demo_train.sh link clean|lossy[-rtoMS]    (internal: reshape the links)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
WORKERS=${WORKERS:-4}
NET=${NET:-172.30.0}
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
		ip -n "dw$i" addr add "$NET.$((i + 1))/24" dev "v$i"
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
ip netns exec dw0 ping -c 1 -W 2 "$NET.$WORKERS" >/dev/null

# launch NAME ENV... -- SCRIPT ARGS...: one torchrun agent per worker
# namespace, each a node of a WORKERS-node job (one process per node) that
# meets at node 0's address (static rendezvous, port 29500 + the job's
# number: the namespaces are private to this run). Worker output goes to
# $LOGDIR/NAME.i.log; rank 0's progress lines ("[...] ...") are printed.
jobs_run=0
launch() {
	local name=$1 envs=() i p rc=0 follow pids=()
	shift
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	jobs_run=$((jobs_run + 1))
	: > "$LOGDIR/$name.0.log"
	tail -n +1 -F "$LOGDIR/$name.0.log" 2>/dev/null |
		grep --line-buffered '^\[' >&2 &
	follow=$!
	for ((i = 0; i < WORKERS; i++)); do
		ip netns exec "dw$i" env GLOO_SOCKET_IFNAME="v$i" PYTHONPATH="$HERE" \
			PYTHONDONTWRITEBYTECODE=1 OMP_NUM_THREADS=1 "${envs[@]}" \
			$PY -m dlcp.run --nnodes="$WORKERS" --nproc_per_node=1 \
			--node_rank="$i" --master_addr="$NET.1" \
			--master_port=$((29500 + jobs_run)) "$@" \
			> "$LOGDIR/$name.$i.log" 2>&1 &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || rc=1
	done
	sleep 0.5
	kill "$follow" 2>/dev/null || true
	pkill -f "tail -n \+1 -F $LOGDIR/$name.0.log" 2>/dev/null || true
	if [ $rc != 0 ]; then
		for ((i = 0; i < WORKERS; i++)); do
			echo "---- $name, node $i"; tail -30 "$LOGDIR/$name.$i.log"
		done >&2
	fi
	return $rc
}

# WORKLOAD=coll (make demo-coll): time the all-reduce of the model's
# gradient alone (coll_bench.py, no model), for each transport and
# algorithm in COLL_CASES, on clean and lossy links
if [ "${WORKLOAD:-train}" = coll ]; then
	rc=0
	for cond in ${COLL_CONDS:-clean lossy}; do
		link "$cond"
		for c in ${COLL_CASES:-tcp:ring dlcp:ring tcp:direct dlcp:direct}; do
			launch coll -- "$HERE/coll_bench.py" \
				--transport "${c%%:*}" --algo "${c#*:}" --label "$cond $c" \
				--budget "$BUDGET" --budget2 "$BUDGET2" \
				--iters "${COLL_ITERS:-30}" || rc=1
			if ! grep -h '^{' "$LOGDIR/coll.0.log" | tee -a "$OUT"; then
				echo "demo_train: no result from rank 0 ($cond $c):" >&2
				tail -n 20 "$LOGDIR/coll.0.log" >&2
				rc=1
			fi
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
rc=0
case ${WORKLOAD:-train} in
train)
	IFS=, read -ra phases <<< "$PHASES"
	for ph in "${phases[@]}"; do
		kind=${ph%%:*}
		case $kind in
		gloo|dlcp) ;;
		*) echo "demo_train: phase $ph: WORKLOAD=train runs gloo and dlcp" >&2; exit 2 ;;
		esac
		[ "$ph" = "$kind" ] || link "${ph#*:}"
		launch train DLCP_ALGO="$ALGO" -- "$HERE/train_ddp.py" --backend "$kind" \
			--budget "$BUDGET" --budget2 "$BUDGET2" \
			--label "$ph" --epochs "$EPOCHS" --hidden "$HIDDEN" --lr "$LR" \
			--bucket-mb "$BUCKET_MB" --out "$OUT" "${targs[@]}" || rc=1
	done
	;;
hook)
	iarg=()
	[ "$INTERLEAVE" = 1 ] && iarg=(--interleave)
	launch hook DLCP_LINK_CMD="$HERE/demo_train.sh link" WORKERS="$WORKERS" \
		RATE="$RATE" LOSS="$LOSS" DELAY="$DELAY" NET="$NET" -- \
		"$HERE/train_digits.py" --phases "$PHASES" --epochs "$EPOCHS" \
		--hidden "$HIDDEN" --budget "$BUDGET" --budget2 "$BUDGET2" \
		--lr "$LR" --bucket-mb "$BUCKET_MB" --algo "$ALGO" --out "$OUT" \
		"${iarg[@]}" "${targs[@]}" || rc=1
	;;
*)
	echo "demo_train: WORKLOAD=$WORKLOAD: train, hook or coll" >&2
	exit 2
	;;
esac
[ -z "${sampler:-}" ] || kill "$sampler"
if [ -n "$TRACE" ] && [ -d $TR/events/dlcp/dlcp_cwnd ]; then
	echo 0 > $TR/events/dlcp/dlcp_cwnd/enable
	cat $TR/trace > "$LOGDIR/cwnd.trace"
	grep -o 'why=[a-z]*' "$LOGDIR/cwnd.trace" | sort | uniq -c |
		sed 's/^/# cwnd changes: /' >&2 || true
fi
# DLCP counters, summed over the workers' namespaces
for ((i = 0; i < WORKERS; i++)); do
	ip netns exec "dw$i" cat /proc/net/dlcp/snmp 2>/dev/null || true
done | awk '$1 ~ /Retrans|Msgs|BytesLost|GivenUp|DupPkts|Drop(RcvMem|Mismatch|UnknownMsg)/ \
	{ s[$1] += $2 } END { for (k in s) printf "# snmp %-24s %d\n", k, s[k] }' | sort
$PY "$HERE/demo_summary.py" "$OUT" || rc=1
echo "# demo_train: $(( $(date +%s) - start )) s, workers $WORKERS on $NET.0/24, rate $RATE, delay $DELAY per link, loss $LOSS, offload $OFFLOAD, budget $BUDGET/$BUDGET2 ppm, DLCP algorithm $ALGO"
exit $rc
