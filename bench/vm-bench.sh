#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DLCP benchmark scenarios, run INSIDE the test VM as root (bench/run boots
# the VM once per group and calls this script).
#
#   bench/vm-bench.sh OUTDIR GROUP[,GROUP...] [quick]
#
# GROUP: base | loss | loss2 | burst | reorder | incast | prio | scaling | cpu | thc
# Appends one JSON object per measured case to OUTDIR/raw/GROUP.jsonl.
#
# Topology (network namespaces of the one VM, one veth pair):
#
#   ns bsnd  veth0 10.77.100.1 ==== veth1 10.77.100.2  ns brcv
#
# sender egress  (data):     netem delay 0.5ms [impairment], child tbf 30mbit
# receiver egress (acks):    netem delay 0.5ms
# -> bottleneck 30 Mbit/s, base RTT 1 ms. The "cpu" group removes every qdisc
# (unshaped veth). Shaped runs turn TSO/GSO/GRO off on the veth so that
# netem drops single packets for TCP as for DLCP (a GSO super-packet would be
# dropped whole); the unshaped run keeps them on. dlcp-perf servers (DLCP port 5301, TCP port 5302) run in
# brcv, clients in bsnd; all clients of a case share the bottleneck queue
# (the incast convergence point). TCP is cubic.

set -u
OUT=$1
GROUP_LIST=$2
GROUP=setup
QUICK=${3:-}
[ "$QUICK" = quick ] && QUICK=1 || QUICK=

export PATH=$PATH:/usr/sbin:/sbin
REPO=$(cd "$(dirname "$0")/.." && pwd -P)
PERF=$REPO/userspace/perf/dlcp-perf
RAW=
mkdir -p "$OUT/raw"
TMP=$(mktemp -d)

RATE_MBIT=30
DELAY_MS=0.5
BASE_RTT_MS=1.0
TBF=${BENCH_TBF:-"tbf rate ${RATE_MBIT}mbit burst 64k limit 128k"}
S=10.77.100.1
R=10.77.100.2
DPORT=5301
TPORT=5302
LINK_RATE=$RATE_MBIT	# current link rate (0 = unshaped)
NETEM_DESC=""

log() { echo "[bench $GROUP] $*" >&2; }

cleanup()
{
	# shellcheck disable=SC2086
	[ -n "${SRV_PIDS:-}" ] && kill $SRV_PIDS 2> /dev/null
	wait 2> /dev/null
	ip netns del bsnd 2> /dev/null
	ip netns del brcv 2> /dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

setup()
{
	modprobe -q veth; modprobe -q sch_netem; modprobe -q sch_tbf
	ip netns add bsnd || return 1
	ip netns add brcv || return 1
	ip -n bsnd link add veth0 type veth peer name veth1 netns brcv || return 1
	ip -n bsnd addr add $S/24 dev veth0
	ip -n brcv addr add $R/24 dev veth1
	ip -n bsnd link set lo up; ip -n brcv link set lo up
	ip -n bsnd link set veth0 up; ip -n brcv link set veth1 up
	ip netns exec bsnd sysctl -qw net.ipv4.tcp_congestion_control=cubic
	# enough socket memory for TCP at 64 MiB messages on both ends
	for ns in bsnd brcv; do
		ip netns exec $ns sysctl -qw net.ipv4.tcp_rmem="4096 131072 33554432"
		ip netns exec $ns sysctl -qw net.ipv4.tcp_wmem="4096 131072 33554432"
	done
	ip netns exec brcv "$PERF" server --proto dlcp --port $DPORT > "$TMP/srv-dlcp.log" 2>&1 &
	SRV_PIDS="$!"
	ip netns exec brcv "$PERF" server --proto tcp --port $TPORT > "$TMP/srv-tcp.log" 2>&1 &
	SRV_PIDS="$SRV_PIDS $!"
	sleep 0.3
}

# link IMPAIRMENT...: sender egress netem delay 0.5ms IMPAIRMENT + tbf
link()
{
	ip -n bsnd link set veth0 up
	tc -n bsnd qdisc del dev veth0 root 2> /dev/null
	tc -n brcv qdisc del dev veth1 root 2> /dev/null
	local fwd=${FWD_DELAY_MS:-$DELAY_MS}
	# per-packet loss for TCP too: netem drops whole GSO super-packets
	offload off
	tc -n bsnd qdisc add dev veth0 root handle 1: netem limit 10000 \
		delay ${fwd}ms "$@" || return 1
	tc -n bsnd qdisc add dev veth0 parent 1:1 handle 10: $TBF || return 1
	tc -n brcv qdisc add dev veth1 root netem limit 10000 delay ${DELAY_MS}ms || return 1
	LINK_RATE=$RATE_MBIT
	BASE_RTT_MS=$(awk -v a="$fwd" -v b="$DELAY_MS" 'BEGIN{print a+b}')
	NETEM_DESC="fwd delay ${fwd}ms${*:+ $*}; rev delay ${DELAY_MS}ms"
}

# offload on|off: TSO/GSO/GRO of both veth ends (on for the unshaped run)
offload()
{
	ip netns exec bsnd ethtool -K veth0 tso "$1" gso "$1" gro "$1" > /dev/null 2>&1
	ip netns exec brcv ethtool -K veth1 tso "$1" gso "$1" gro "$1" > /dev/null 2>&1
	OFFLOAD=$1
}

# prio_link: link, plus a strict-priority qdisc (8 bands, 85-packet FIFOs)
# under tbf: DLCP class c has skb->priority 7 - c and goes to band c; TCP
# (priority 0) to band 7
prio_link()
{
	link || return 1
	tc -n bsnd qdisc add dev veth0 parent 10:1 handle 20: prio bands 8 \
		priomap 7 6 5 4 3 2 1 0 7 7 7 7 7 7 7 7 || return 1
	local b
	for b in 1 2 3 4 5 6 7 8; do
		tc -n bsnd qdisc add dev veth0 parent 20:$b pfifo limit 85 || return 1
	done
	NETEM_DESC="$NETEM_DESC; tbf child: prio bands 8 (class c -> band c)"
}

unshaped()
{
	offload on
	tc -n bsnd qdisc del dev veth0 root 2> /dev/null
	tc -n brcv qdisc del dev veth1 root 2> /dev/null
	LINK_RATE=0
	BASE_RTT_MS=0
	NETEM_DESC="none (unshaped veth)"
}

# snap NS: JSON of the namespace's DLCP and TCP counters
snap()
{
	ip netns exec "$1" awk '
		FILENAME ~ /dlcp/ { d = d sep "\"" $1 "\":" $2; sep = "," }
		FILENAME ~ /snmp$/ && /^Tcp:/ {
			if (!hdr) { for (i = 2; i <= NF; i++) n[i] = $i; hdr = 1 }
			else for (i = 2; i <= NF; i++) { t = t tsep "\"" n[i] "\":" $i; tsep = "," } }
		END { printf "{\"dlcp\":{%s},\"tcp\":{%s}}", d, t }
	' /proc/net/dlcp/snmp /proc/net/snmp 2> /dev/null || echo '{}'
}

# qdrops: packets dropped on the path, both directions: the root netem
# qdiscs count their own losses and the drops of their tbf child
qdrops()
{
	{ tc -s -n bsnd qdisc show dev veth0; tc -s -n brcv qdisc show dev veth1; } 2> /dev/null |
		awk '/^qdisc/ { q = $2 } /dropped/ { gsub(/,/, "", $7); if (q == "netem") s += $7 } END { print s + 0 }'
}

cpu_ticks() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9; exit}' /proc/stat; }

# case SCEN CASE PROTO SENDERS PARAMS_JSON -- CLIENT_ARGS...
# Runs SENDERS client processes at once in bsnd, records one JSON line.
run_case()
{
	local scen=$1 cname=$2 proto=$3 senders=$4 params=$5
	shift 6
	local port=$DPORT i pids="" rc=0 clients="" errs="" b_s b_r a_s a_r c0 c1 t0 t1
	[ "$proto" = tcp ] && port=$TPORT
	local q0 q1
	q0=$(qdrops)
	b_s=$(snap bsnd); b_r=$(snap brcv); c0=$(cpu_ticks); t0=$(date +%s.%N)
	for ((i = 1; i <= senders; i++)); do
		# a race: client 1 gets $RACE_A, client 2 (0.5 s later) $RACE_B
		local extra=""
		if [ -n "${RACE_A:-}" ]; then
			if [ "$i" = 1 ]; then extra=$RACE_A; else sleep 0.5; extra=$RACE_B; fi
		fi
		# shellcheck disable=SC2086
		timeout 120 ip netns exec bsnd "$PERF" client $R --port $port \
			--proto "$proto" --id "$i" --timeout 30 --json --samples "$@" $extra \
			> "$TMP/c$i.json" 2> "$TMP/c$i.err" &
		pids="$pids $!"
	done
	for p in $pids; do wait "$p" || rc=1; done
	t1=$(date +%s.%N); c1=$(cpu_ticks); a_s=$(snap bsnd); a_r=$(snap brcv)
	q1=$(qdrops)
	for ((i = 1; i <= senders; i++)); do
		if [ -s "$TMP/c$i.json" ]; then
			clients="$clients${clients:+,}$(cat "$TMP/c$i.json")"
		fi
		if [ -s "$TMP/c$i.err" ]; then
			errs="$errs$(tr -d '"\\' < "$TMP/c$i.err" | tr '\n' ' ')"
		fi
	done
	[ $rc -ne 0 ] && log "FAILED $scen/$cname/$proto: $errs"
	printf '{"scenario":"%s","case":"%s","proto":"%s","senders":%d,"rate_mbit":%s,"base_rtt_ms":%s,"netem":"%s","offload":"%s","params":%s,"args":"%s%s","rc":%d,"error":"%s","wall_s":%s,"qdisc_drops":%d,"cpu_ticks":%s,"hz":%s,"snd_before":%s,"snd_after":%s,"rcv_before":%s,"rcv_after":%s,"clients":[%s]}\n' \
		"$scen" "$cname" "$proto" "$senders" "$LINK_RATE" \
		"$BASE_RTT_MS" \
		"$NETEM_DESC" "${OFFLOAD:-on}" "$params" "$*" "${RACE_A:+ | client 1: $RACE_A | client 2: $RACE_B}" "$rc" "$errs" \
		"$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}')" "$((q1 - q0))" "$((c1 - c0))" "$(getconf CLK_TCK)" \
		"$b_s" "$a_s" "$b_r" "$a_r" "$clients" >> "$RAW"
	[ -n "${BENCH_DEBUG:-}" ] && tc -s -n bsnd qdisc show dev veth0 >&2
	log "$scen/$cname/$proto rc=$rc $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')s"
}

# both SCEN CASE SENDERS PARAMS_JSON DLCP_EXTRA -- COMMON_ARGS...: DLCP then TCP
both()
{
	local scen=$1 cname=$2 senders=$3 params=$4 dextra=$5
	shift 6
	# shellcheck disable=SC2086
	run_case "$scen" "$cname" dlcp "$senders" "$params" -- "$@" $dextra
	run_case "$scen" "$cname" tcp "$senders" "$params" -- "$@"
}

skip()
{
	printf '{"scenario":"%s","case":"%s","skipped":"%s"}\n' "$1" "$2" "$3" >> "$RAW"
	log "$1/$2 skipped: $3"
}

if [ ! -x "$PERF" ]; then
	log "no $PERF (make -C userspace/perf)"; exit 1
fi
if [ ! -d /proc/net/dlcp ]; then
	log "dlcp.ko is not loaded"; exit 1
fi
setup || { log "topology setup failed"; exit 1; }

MiB=1048576
run_group()
{
	case $GROUP in
	base)	# 1: lossless, one flow, goodput (bulk: 1 MiB messages, 4 in flight)
		link
		D=$([ -n "$QUICK" ] && echo 4 || echo 8)
		both s1 lossless 1 "{\"size\":$MiB,\"concurrency\":4,\"duration\":$D}" "" -- \
			--size 1m --concurrency 4 --duration "$D"
		;;
	loss|loss2)	# 2: random loss; completion time of lone 1 MiB / 4 MiB messages
		# loss: 1% (budgets 0, 1%, 10%); loss2: 0.1% and 5% (budgets 0, 1%)
		if [ -n "$QUICK" ]; then
			LOSSES="1"; SIZES="1m"; BUDGETS="0 10000"; N1=15
		elif [ "$GROUP" = loss ]; then
			LOSSES="1"; SIZES="1m 4m"; BUDGETS="0 10000 100000"; N1=15
		else
			LOSSES="0.1 5"; SIZES="1m 4m"; BUDGETS="0 10000"; N1=10
		fi
		for l in $LOSSES; do
			link loss random "${l}%" || exit 1
			for sz in $SIZES; do
				n=$N1; [ "$sz" = 4m ] && n=$((N1 / 2))
				bytes=$(( ${sz%m} * MiB ))
				for b in $BUDGETS; do
					run_case s2 "loss${l}_${sz}" dlcp 1 \
						"{\"loss_pct\":$l,\"size\":$bytes,\"budget_ppm\":$b,\"count\":$n}" \
						-- --size "$sz" --count "$n" --budget "$b"
				done
				run_case s2 "loss${l}_${sz}" tcp 1 \
					"{\"loss_pct\":$l,\"size\":$bytes,\"count\":$n}" \
					-- --size "$sz" --count "$n"
			done
		done
		;;
	burst)	# 3: Gilbert-Elliott bursts: p=0.5% enter bad, r=25% leave, bad state
		# loses 50%: ~1% loss in bursts (mean bad run 4 packets). With 100% loss
		# in the bad state, sparse traffic (RTO probes) stays in it for seconds.
		link loss gemodel 0.5% 25% 50% 0% || exit 1
		for b in 0 10000; do
			run_case s3 burst_1m dlcp 1 "{\"size\":$MiB,\"budget_ppm\":$b,\"count\":15}" \
				-- --size 1m --count 15 --budget $b --timeout 60
		done
		run_case s3 burst_1m tcp 1 "{\"size\":$MiB,\"count\":15}" -- --size 1m --count 15 --timeout 60
		;;
	reorder)	# 4: reordering vs in-order at the same delay
		FWD_DELAY_MS=2 link || exit 1	# in-order baseline, same delays
		both s4 inorder_2ms 1 "{\"size\":$MiB,\"count\":20}" "" -- --size 1m --count 20
		FWD_DELAY_MS=2 link reorder 25% 50% || exit 1
		both s4 reorder_2ms 1 "{\"size\":$MiB,\"count\":20}" "" -- --size 1m --count 20
		skip s4 multipath_spraying "not implemented yet (no multipath in DLCP)"
		skip s9 udp_encap "not implemented yet (no UDP-encapsulation case in the bench yet)"
		skip s9 ipv6 "not implemented yet (no IPv6)"
		skip s9 ecn "not implemented yet (no RED/ECN bottleneck case in the bench yet)"
		;;
	incast)	# 5: 8 senders to one receiver, 256 KiB messages, one in flight each
		link
		N=$([ -n "$QUICK" ] && echo 6 || echo 10)
		both s5 incast8_256k 8 "{\"size\":262144,\"count\":$N}" "" -- --size 256k --count "$N"
		;;
	scaling)	# 7: completion time vs size, vs number of senders
		link
		for spec in 4k:40 64k:30 1m:10 8m:2 64m:1; do
			sz=${spec%:*}; n=${spec#*:}
			case $sz in *k) bytes=$(( ${sz%k} * 1024 ));; *m) bytes=$(( ${sz%m} * MiB ));; esac
			both s7 "size_$sz" 1 "{\"size\":$bytes,\"count\":$n}" "" -- \
				--size "$sz" --count "$n" --timeout 60
		done
		for k in 1 2 4 8; do
			both s7 "senders_$k" "$k" "{\"size\":262144,\"count\":6}" "" -- \
				--size 256k --count 6
		done
		;;
	prio)	# 6: priority race: a bulk sender of 4 MiB messages (class 7) and,
		# 0.5 s later, a sender of lone 256 KiB messages (class 1) share
		# the bottleneck, which has a strict-priority qdisc
		if "$PERF" client 127.0.0.1 --proto dlcp --prio 1 --size 1 --count 1 --timeout 1 2>&1 |
			grep -q -e "DLCP_MSG_HAS_PRIO" -e "refused"; then
			skip s6 priority_race "not implemented yet (no priority classes)"
			return 0
		fi
		prio_link || exit 1
		P="{\"race\":1,\"size\":262144,\"bulk_size\":4194304,\"count\":12"
		RACE_A="--size 4m --concurrency 2 --duration 8 --prio 7" \
		RACE_B="--size 256k --count 12 --prio 1" \
			run_case s6 race_prio dlcp 2 "$P,\"prio\":1}" --
		RACE_A="--size 4m --concurrency 2 --duration 8" \
		RACE_B="--size 256k --count 12" \
			run_case s6 race_sameclass dlcp 2 "$P,\"prio\":-1}" --
		RACE_A="--size 4m --concurrency 2 --duration 8" \
		RACE_B="--size 256k --count 12" \
			run_case s6 race_tcp tcp 2 "$P}" --
		;;
	cpu)	# 8: unshaped veth, bulk transfer, goodput per CPU second
		unshaped
		D=$([ -n "$QUICK" ] && echo 3 || echo 5)
		both s8 unshaped_1m 1 "{\"size\":$MiB,\"concurrency\":4,\"duration\":$D}" "" -- \
			--size 1m --concurrency 4 --duration "$D"
		;;
	thc)	# issue #9: digits training, fp32 / 8-bit / 4-bit homomorphic
		# compression, with and without DeAR overlap (full bench only)
		mkdir -p "$OUT/thc"
		OUT="$OUT/thc/train.jsonl" "$REPO/userspace/python/thc_bench.sh" \
			> "$OUT/thc/results.md" 2> "$OUT/thc/log.txt" ||
			log "thc_bench.sh failed (see $OUT/thc/log.txt)"
		;;
	*)
		log "unknown group $GROUP"; exit 2
		;;
	esac
}

rc_all=0
for GROUP in ${GROUP_LIST//,/ }; do
	RAW=$OUT/raw/$GROUP.jsonl
	( run_group ) || rc_all=1
done
exit $rc_all
