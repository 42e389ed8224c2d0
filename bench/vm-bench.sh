#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DLCP benchmark scenarios, run INSIDE the test VM as root (bench/run boots
# the VM once per group and calls this script).
#
#   bench/vm-bench.sh OUTDIR GROUP[,GROUP...] [quick]
#
# GROUP: base | loss | loss2 | burst | reorder | multipath | lossrtt | incast |
#        prio | scaling | cpu | thc
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
# scenario 9: RED under the tbf, marking from 10 to 30 packets of queue
# (4-12 ms at 30 Mbit/s), certainly above 30; drops only past 128 KB
RED="red limit 131072 min 15000 max 45000 avpkt 1500 burst 14 probability 1 bandwidth ${RATE_MBIT}mbit ecn"
S=10.77.100.1
R=10.77.100.2
DPORT=5301
TPORT=5302
LINK_RATE=$RATE_MBIT	# current link rate (0 = unshaped)
NETEM_DESC=""
# where run_case runs clients and servers, and which root qdiscs it counts
# drops of ("NS:DEV ..."); the multipath group switches to its own topology
SNS=bsnd
RNS=brcv
QDEVS="bsnd:veth0 brcv:veth1"

log() { echo "[bench $GROUP] $*" >&2; }

# shellcheck disable=SC2317  # called by the EXIT trap
cleanup()
{
	# shellcheck disable=SC2086
	[ -n "${SRV_PIDS:-}" ] && kill $SRV_PIDS 2> /dev/null
	wait 2> /dev/null
	local ns
	for ns in bsnd brcv msnd mrt mrcv; do
		ip netns del "$ns" 2> /dev/null
	done
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
	endpoints bsnd brcv srv
	sleep 0.3
}

# perf_server NS LOG ARGS...: a dlcp-perf server with ARGS in NS, its
# output in $TMP/LOG.log and its pid added to SRV_PIDS
perf_server()
{
	local ns=$1 log=$2

	shift 2
	ip netns exec "$ns" "$PERF" server "$@" > "$TMP/$log.log" 2>&1 &
	SRV_PIDS="${SRV_PIDS:-} $!"
}

# endpoints SNDNS RCVNS LOG: TCP cubic with socket memory for 64 MiB
# messages on both ends, and the DLCP and TCP dlcp-perf servers in RCVNS
# (logs $TMP/LOG-{dlcp,tcp}.log, pids added to SRV_PIDS)
endpoints()
{
	local ns

	ip netns exec "$1" sysctl -qw net.ipv4.tcp_congestion_control=cubic
	for ns in "$1" "$2"; do
		ip netns exec "$ns" sysctl -qw net.ipv4.tcp_rmem="4096 131072 33554432"
		ip netns exec "$ns" sysctl -qw net.ipv4.tcp_wmem="4096 131072 33554432"
	done
	perf_server "$2" "$3-dlcp" --proto dlcp --port $DPORT
	perf_server "$2" "$3-tcp" --proto tcp --port $TPORT
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
		delay "${fwd}ms" "$@" || return 1
	# shellcheck disable=SC2086  # TBF is a list of tc words
	tc -n bsnd qdisc add dev veth0 parent 1:1 handle 10: $TBF || return 1
	tc -n brcv qdisc add dev veth1 root netem limit 10000 delay "${DELAY_MS}ms" || return 1
	LINK_RATE=$RATE_MBIT
	BASE_RTT_MS=$(awk -v a="$fwd" -v b="$DELAY_MS" 'BEGIN{print a+b}')
	NETEM_DESC="fwd delay ${fwd}ms${*:+ $*}; rev delay ${DELAY_MS}ms"
}

# Multipath topology (scenario 4, group multipath): a router with two
# parallel links to the receiver, each shaped to half the rate:
#
#   ns msnd eth0 10.77.110.1 -- s0 10.77.110.2 ns mrt p1 10.77.111.1 -- r1 10.77.111.2 ns mrcv
#                                                  p2 10.77.112.1 -- r2 10.77.112.2
#   the receiver's address 10.77.119.1 (on lo) is reached over p1 and/or p2;
#   the way back (reports, ACKs) is r1 -> p1 -> s0 with netem delay 0.5ms.
#
# r1 and r2 share one MAC address, so that a frame the router addressed to
# r1 can be redirected out of p2 and is still accepted by r2.
MP_DST=10.77.119.1
MP_FAST_MS=0.5	# one-way delay of path 1
MP_SLOW_MS=2	# one-way delay of path 2
MP_MEAN_MS=1.25	# the in-order baseline's one path
mp_setup()
{
	local l ns dev
	modprobe -q cls_basic; modprobe -q em_meta; modprobe -q act_mirred
	modprobe -q sch_ingress
	ip netns add msnd && ip netns add mrt && ip netns add mrcv || return 1
	ip -n msnd link add eth0 type veth peer name s0 netns mrt &&
	ip -n mrt link add p1 type veth peer name r1 netns mrcv &&
	ip -n mrt link add p2 type veth peer name r2 netns mrcv || return 1
	ip -n mrcv link set r1 address 02:00:0a:4d:77:01 &&
	ip -n mrcv link set r2 address 02:00:0a:4d:77:01 || return 1
	ip -n msnd addr add 10.77.110.1/24 dev eth0 &&
	ip -n mrt addr add 10.77.110.2/24 dev s0 &&
	ip -n mrt addr add 10.77.111.1/24 dev p1 &&
	ip -n mrt addr add 10.77.112.1/24 dev p2 &&
	ip -n mrcv addr add 10.77.111.2/24 dev r1 &&
	ip -n mrcv addr add 10.77.112.2/24 dev r2 &&
	ip -n mrcv addr add $MP_DST/32 dev lo || return 1
	for l in "msnd eth0" "mrt s0" "mrt p1" "mrt p2" "mrcv r1" "mrcv r2" \
		 "msnd lo" "mrt lo" "mrcv lo"; do
		read -r ns dev <<< "$l"
		ip -n "$ns" link set "$dev" up || return 1
		[ "$dev" = lo ] && continue
		# per-packet forwarding and spraying: no GRO/GSO super-packets
		ip netns exec "$ns" ethtool -K "$dev" tso off gso off gro off > /dev/null 2>&1
	done
	ip -n msnd route add default via 10.77.110.2 &&
	ip -n mrcv route add default via 10.77.111.1 dev r1 || return 1
	ip netns exec mrt sysctl -qw net.ipv4.ip_forward=1 &&
	ip netns exec mrt sysctl -qw net.ipv4.fib_multipath_hash_policy=1 || return 1
	for ns in mrcv mrt; do
		ip netns exec $ns sysctl -qw net.ipv4.conf.all.rp_filter=0
		ip netns exec $ns sysctl -qw net.ipv4.conf.default.rp_filter=0
	done
	for dev in r1 r2; do
		ip netns exec mrcv sysctl -qw net.ipv4.conf.$dev.rp_filter=0
	done
	endpoints msnd mrcv msrv
	SNS=msnd
	RNS=mrcv
	R=$MP_DST
	QDEVS="mrt:p1 mrt:p2 mrcv:r1"
	sleep 0.3
}

# mp_link inorder|spray|ecmp [ENCAP]: the forward paths of the multipath
# topology; ENCAP (0/1) sets net.dlcp.encap on both ends (UDP mode)
#   inorder: one path, netem delay 1.25 ms (the mean of the two) + tbf 30 Mbit/s
#   spray:   both paths (0.5 ms, 2 ms), tbf 15 Mbit/s each; every IP packet
#            the router sends to p1 is redirected to p2 with probability
#            1/2 (clsact egress, basic meta(random) ematch, mirred): per-packet
#            random spraying for every protocol
#   ecmp:    both paths as above, an ECMP route hashing L4 ports
#            (fib_multipath_hash_policy=1): a TCP connection takes one path,
#            DLCP in UDP mode (a new source port per packet) is spread
mp_link()
{
	local mode=$1 enc=${2:-0} d
	for d in p1 p2; do
		tc -n mrt qdisc del dev $d root 2> /dev/null
		tc -n mrt qdisc del dev $d clsact 2> /dev/null
	done
	tc -n mrcv qdisc del dev r1 root 2> /dev/null
	ip netns exec msnd sysctl -qw net.dlcp.encap="$enc" &&
	ip netns exec mrcv sysctl -qw net.dlcp.encap="$enc" || return 1
	tc -n mrcv qdisc add dev r1 root netem limit 10000 delay ${DELAY_MS}ms || return 1
	if [ "$mode" = inorder ]; then
		ip -n mrt route replace $MP_DST/32 via 10.77.111.2 dev p1 || return 1
		tc -n mrt qdisc add dev p1 root handle 1: netem limit 10000 delay ${MP_MEAN_MS}ms &&
		tc -n mrt qdisc add dev p1 parent 1:1 handle 10: tbf rate ${RATE_MBIT}mbit burst 64k limit 128k ||
			return 1
		NETEM_DESC="multipath topology, one path: delay ${MP_MEAN_MS}ms, tbf ${RATE_MBIT}mbit burst 64k limit 128k; rev delay ${DELAY_MS}ms"
	else
		local half=$((RATE_MBIT / 2))
		tc -n mrt qdisc add dev p1 root handle 1: netem limit 10000 delay ${MP_FAST_MS}ms &&
		tc -n mrt qdisc add dev p1 parent 1:1 handle 10: tbf rate ${half}mbit burst 32k limit 64k &&
		tc -n mrt qdisc add dev p2 root handle 1: netem limit 10000 delay ${MP_SLOW_MS}ms &&
		tc -n mrt qdisc add dev p2 parent 1:1 handle 10: tbf rate ${half}mbit burst 32k limit 64k ||
			return 1
		NETEM_DESC="multipath topology, 2 paths: p1 delay ${MP_FAST_MS}ms, p2 delay ${MP_SLOW_MS}ms, each tbf ${half}mbit burst 32k limit 64k"
		if [ "$mode" = spray ]; then
			ip -n mrt route replace $MP_DST/32 via 10.77.111.2 dev p1 &&
			tc -n mrt qdisc add dev p1 clsact &&
			tc -n mrt filter add dev p1 egress protocol ip basic \
				match 'meta(random mask 1 eq 0)' \
				action mirred egress redirect dev p2 || return 1
			NETEM_DESC="$NETEM_DESC; random per-packet spraying (tc meta(random) + mirred)"
		else
			ip -n mrt route replace $MP_DST/32 nexthop via 10.77.111.2 dev p1 \
				nexthop via 10.77.112.2 dev p2 || return 1
			NETEM_DESC="$NETEM_DESC; ECMP route, L4 hash (fib_multipath_hash_policy=1)"
		fi
		NETEM_DESC="$NETEM_DESC; rev delay ${DELAY_MS}ms"
	fi
	[ "$enc" = 1 ] && NETEM_DESC="$NETEM_DESC; net.dlcp.encap=1 (UDP)"
	LINK_RATE=$RATE_MBIT
	BASE_RTT_MS=$(awk -v a="$MP_MEAN_MS" -v b="$DELAY_MS" 'BEGIN{print a+b}')
	OFFLOAD=off
}

# mp_txpkts: packets the router sent on p1 and on p2 ("P1 P2")
mp_txpkts()
{
	ip -n mrt -s link show 2> /dev/null | awk '
		/^[0-9]+:/ { d = $2; sub(/@.*/, "", d); sub(/:$/, "", d) }
		/TX:/ { getline; tx[d] = $2 }
		END { printf "%d %d\n", tx["p1"], tx["p2"] }' 
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
	# shellcheck disable=SC2016  # an awk program
	ip netns exec "$1" awk '
		FILENAME ~ /dlcp/ { d = d sep "\"" $1 "\":" $2; sep = "," }
		FILENAME ~ /snmp$/ && /^Tcp:/ {
			if (!hdr) { for (i = 2; i <= NF; i++) n[i] = $i; hdr = 1 }
			else for (i = 2; i <= NF; i++) { t = t tsep "\"" n[i] "\":" $i; tsep = "," } }
		END { printf "{\"dlcp\":{%s},\"tcp\":{%s}}", d, t }
	' /proc/net/dlcp/snmp /proc/net/snmp 2> /dev/null || echo '{}'
}

# qdrops: packets dropped on the path, both directions: the root netem
# qdiscs (of $QDEVS) count their own losses and the drops of their tbf child
qdrops()
{
	local nd
	for nd in $QDEVS; do
		tc -s -n "${nd%%:*}" qdisc show dev "${nd#*:}" 2> /dev/null
	done |
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
	local pp0="" pp1="" ppj=""
	[ "$SNS" = msnd ] && pp0=$(mp_txpkts)
	b_s=$(snap $SNS); b_r=$(snap $RNS); c0=$(cpu_ticks); t0=$(date +%s.%N)
	for ((i = 1; i <= senders; i++)); do
		# a race: client 1 gets $RACE_A, client 2 (0.5 s later) $RACE_B
		local extra=""
		if [ -n "${RACE_A:-}" ]; then
			if [ "$i" = 1 ]; then extra=$RACE_A; else sleep 0.5; extra=${RACE_B:-}; fi
		fi
		# shellcheck disable=SC2086
		timeout "${CLIENT_TIMEOUT:-120}" ip netns exec $SNS "$PERF" client $R --port $port \
			--proto "$proto" --id "$i" --timeout 30 --json --samples "$@" $extra \
			> "$TMP/c$i.json" 2> "$TMP/c$i.err" &
		pids="$pids $!"
	done
	for p in $pids; do wait "$p" || rc=1; done
	t1=$(date +%s.%N); c1=$(cpu_ticks); a_s=$(snap $SNS); a_r=$(snap $RNS)
	q1=$(qdrops)
	if [ -n "$pp0" ]; then
		pp1=$(mp_txpkts)
		ppj=$(awk -v a="$pp0" -v b="$pp1" 'BEGIN { split(a, x, " "); split(b, y, " ");
			printf ",\"path_tx_pkts\":[%d,%d]", y[1] - x[1], y[2] - x[2] }')
	fi
	for ((i = 1; i <= senders; i++)); do
		if [ -s "$TMP/c$i.json" ]; then
			clients="$clients${clients:+,}$(cat "$TMP/c$i.json")"
		fi
		if [ -s "$TMP/c$i.err" ]; then
			# shellcheck disable=SC1003  # deletes quotes and backslashes
			errs="$errs$(tr -d '"\\' < "$TMP/c$i.err" | tr '\n' ' ')"
		fi
	done
	[ $rc -ne 0 ] && log "FAILED $scen/$cname/$proto: $errs"
	printf '{"scenario":"%s","case":"%s","proto":"%s","senders":%d,"rate_mbit":%s,"base_rtt_ms":%s,"netem":"%s","offload":"%s","params":%s,"args":"%s%s","rc":%d,"error":"%s","wall_s":%s,"qdisc_drops":%d,"cpu_ticks":%s,"hz":%s,"snd_before":%s,"snd_after":%s,"rcv_before":%s,"rcv_after":%s%s,"clients":[%s]}\n' \
		"$scen" "$cname" "$proto" "$senders" "$LINK_RATE" \
		"$BASE_RTT_MS" \
		"$NETEM_DESC" "${OFFLOAD:-on}" "$params" "$*" "${RACE_A:+ | client 1: $RACE_A | client 2: $RACE_B}" "$rc" "$errs" \
		"$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}')" "$((q1 - q0))" "$((c1 - c0))" "$(getconf CLK_TCK)" \
		"$b_s" "$a_s" "$b_r" "$a_r" "$ppj" "$clients" >> "$RAW"
	[ -n "${BENCH_DEBUG:-}" ] && tc -s -n $SNS qdisc show dev veth0 >&2
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
			LOSSES="0.1 5"; SIZES="1m 4m"; BUDGETS="0 10000"; N1=8
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
		both s4 inorder_2ms 1 "{\"size\":$MiB,\"count\":15}" "" -- --size 1m --count 15
		FWD_DELAY_MS=2 link reorder 25% 50% || exit 1
		both s4 reorder_2ms 1 "{\"size\":$MiB,\"count\":15}" "" -- --size 1m --count 15
		# multipath spraying: group multipath
		;;
	ecn)	# 9: a RED bottleneck that marks ECN-capable packets instead of
		# dropping them: DLCP (ECT on important packets, a DCTCP-style
		# response to the echoed CE bytes) against TCP cubic with ECN and
		# TCP DCTCP (sender and receiver, so that CE is echoed per packet)
		modprobe -q sch_red; modprobe -q tcp_dctcp
		link || exit 1
		# shellcheck disable=SC2086  # RED is a list of tc words
		tc -n bsnd qdisc add dev veth0 parent 10:1 handle 20: $RED || {
			skip s9 ecn "tc red ecn under tbf failed"; exit 0; }
		for ns in bsnd brcv; do
			ip netns exec $ns sysctl -qw net.ipv4.tcp_ecn=1
		done
		N=$([ -n "$QUICK" ] && echo 4 || echo 8)
		P="{\"size\":$MiB,\"count\":$N,\"ecn\":1"
		run_case s9 ecn_4x1m dlcp 4 "$P}" -- --size 1m --count "$N" --timeout 60
		run_case s9 ecn_4x1m tcp 4 "$P,\"cc\":\"cubic\"}" -- --size 1m --count "$N" --timeout 60
		for ns in bsnd brcv; do
			ip netns exec $ns sysctl -qw net.ipv4.tcp_congestion_control=dctcp
		done
		perf_server brcv dctcp --proto tcp --port $((TPORT + 1))
		sleep 0.5
		TPORT=$((TPORT + 1)) run_case s9 ecn_4x1m tcp 4 "$P,\"cc\":\"dctcp\"}" -- \
			--size 1m --count "$N" --timeout 60
		for ns in bsnd brcv; do
			ip netns exec $ns sysctl -qw net.ipv4.tcp_congestion_control=cubic
			ip netns exec $ns sysctl -qw net.ipv4.tcp_ecn=2
		done
		tc -s -n bsnd qdisc show dev veth0 | grep -A3 'qdisc red' >&2
		;;
	incast)	# 5: 8 senders to one receiver, one message in flight each
		# deep buffer: tbf limit 128k (~34 ms at 30 Mbit/s, ~35 BDPs of
		# the 1 ms path), 256 KiB messages
		link
		N=$([ -n "$QUICK" ] && echo 6 || echo 10)
		both s5 incast8_256k 8 "{\"size\":262144,\"count\":$N,\"buffer\":\"deep\"}" "" -- \
			--size 256k --count "$N"
		[ -n "$QUICK" ] && return 0
		# shallow buffer, as in a data-center switch: tbf limit 16k (11
		# full-size frames, 4.4 ms at 30 Mbit/s, ~4 BDPs of the 1 ms path);
		# burst 32k keeps tbf at its rate when the TCG guest's timers fire
		# late (it lets at most 32k through at once after an idle period)
		TBF="tbf rate ${RATE_MBIT}mbit burst 32k limit 16k" link || exit 1
		NETEM_DESC="$NETEM_DESC; shallow buffer: tbf burst 32k limit 16k"
		both s5 incast8_64k_shallow 8 "{\"size\":65536,\"count\":12,\"buffer\":\"shallow\"}" "" -- \
			--size 64k --count 12
		both s5 incast8_256k_shallow 8 "{\"size\":262144,\"count\":$N,\"buffer\":\"shallow\"}" "" -- \
			--size 256k --count "$N"
		;;
	multipath)	# 4: multipath: per-packet spraying over two paths of
		# different delay vs one path of the same mean delay and the same
		# total rate; DLCP and TCP alike. Then DLCP's own way: UDP mode
		# over an ECMP route (TCP hashes to one path there).
		mp_setup || { log "multipath topology setup failed"; exit 1; }
		for spec in 1m:${MP_N1:-12} 4m:${MP_N4:-4}; do
			sz=${spec%:*}; n=${spec#*:}; bytes=$(( ${sz%m} * MiB ))
			P="\"size\":$bytes,\"count\":$n"
			mp_link inorder || exit 1
			both s4 "mp_inorder_$sz" 1 "{$P,\"path\":\"inorder\"}" "" -- \
				--size "$sz" --count "$n"
			mp_link spray || exit 1
			both s4 "mp_spray_$sz" 1 "{$P,\"path\":\"spray\"}" "" -- \
				--size "$sz" --count "$n"
			mp_link inorder 1 || exit 1
			run_case s4 "mp_inorder_udp_$sz" dlcp 1 "{$P,\"path\":\"inorder\",\"encap\":1}" -- \
				--size "$sz" --count "$n"
			mp_link ecmp 1 || exit 1
			both s4 "mp_ecmp_$sz" 1 "{$P,\"path\":\"ecmp\",\"encap\":1}" "" -- \
				--size "$sz" --count "$n"
		done
		mp_link inorder 0
		;;
	lossrtt)	# 10: long round trip with random loss: 30 ms
		# base RTT (netem delay 15 ms each way), tbf 30 Mbit/s (limit 128k,
		# ~1 BDP), 1% loss on the data direction; lone 4 MiB and 1 MiB
		# messages: DLCP lossless (the reference), DLCP budget 0 and 1%,
		# TCP cubic (capped in time: it is slow here)
		DELAY_MS=${LR_DELAY_MS:-15}
		# every case stops after N messages or CAP seconds, whichever
		# comes first (the report states n)
		CLIENT_TIMEOUT=240
		for spec in 4m:${LR_N4:-12}:${LR_CAP4:-40} 1m:${LR_N1:-20}:${LR_CAP1:-25}; do
			IFS=: read -r sz n cap <<< "$spec"
			bytes=$(( ${sz%m} * MiB ))
			P="\"size\":$bytes,\"count\":$n,\"cap_s\":$cap"
			FWD_DELAY_MS=$DELAY_MS link || exit 1
			run_case s10 "lossrtt_${sz}_lossless" dlcp 1 "{$P,\"loss_pct\":0,\"budget_ppm\":0}" -- \
				--size "$sz" --count "$n" --duration "$cap" --budget 0
			FWD_DELAY_MS=$DELAY_MS link loss random 1% || exit 1
			for b in 0 10000; do
				run_case s10 "lossrtt_${sz}_loss1" dlcp 1 "{$P,\"loss_pct\":1,\"budget_ppm\":$b}" -- \
					--size "$sz" --count "$n" --duration "$cap" --budget "$b" --timeout 60
			done
			run_case s10 "lossrtt_${sz}_loss1" tcp 1 "{$P,\"loss_pct\":1}" -- \
				--size "$sz" --count "$n" --duration "$cap" --timeout 60
		done
		;;
	scaling)	# 7: completion time vs size, vs number of senders
		link
		for spec in 4k:20 64k:20 1m:8 8m:2 64m:1; do
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
		# Each protocol learns of a message's delivery its own way: the
		# TCP client reads the server's ACK frame from the stream, the
		# DLCP client takes the message's completion (the STOP), as a
		# DLCP application does, and the DLCP servers of this group send
		# no ACK messages (--no-ack). In the cases of four sockets as
		# many threads read the DLCP server's socket as the TCP server
		# has (one a connection).
		local DPORT=$((DPORT + 1))
		perf_server brcv srv8-dlcp --proto dlcp --no-ack --port $DPORT
		perf_server brcv srv8x4-dlcp --proto dlcp --no-ack \
			--port $((DPORT + 1)) --threads 4
		sleep 0.3
		D=$([ -n "$QUICK" ] && echo 3 || echo 5)
		local mtu
		for mtu in 1500 9000; do
			local sfx="" p1="" udpc=unshaped_1m_udp
			if [ "$mtu" = 9000 ]; then
				sfx=_9k; p1=",\"mtu\":9000"; udpc=unshaped_1m_udp_9k
			fi
			ip -n bsnd link set veth0 mtu "$mtu"
			ip -n brcv link set veth1 mtu "$mtu"
			# native super-packets (net.dlcp.gso)
			ip netns exec $SNS sysctl -qw net.dlcp.gso=1
			both s8 "unshaped_1m$sfx" 1 "{\"size\":$MiB,\"concurrency\":4,\"duration\":$D,\"gso\":1$p1}" --no-ack -- \
				--size 1m --concurrency 4 --duration "$D"
			if [ "$mtu" = 1500 ]; then
				# four sockets; many small messages (per-message cost)
				DPORT=$((DPORT + 1)) both s8 unshaped_1m_4sock 4 \
					"{\"size\":$MiB,\"concurrency\":4,\"duration\":$D,\"gso\":1,\"server_threads\":4}" --no-ack -- \
					--size 1m --concurrency 4 --duration "$D"
				both s8 unshaped_64k 1 "{\"size\":65536,\"concurrency\":64,\"duration\":$D,\"gso\":1}" --no-ack -- \
					--size 64k --concurrency 64 --duration "$D"
				# each packet on its own
				ip netns exec $SNS sysctl -qw net.dlcp.gso=0
				run_case s8 unshaped_1m_nogso dlcp 1 \
					"{\"size\":$MiB,\"concurrency\":4,\"duration\":$D,\"gso\":0}" -- \
					--size 1m --concurrency 4 --duration "$D" --no-ack
			fi
			ip netns exec $SNS sysctl -qw net.dlcp.gso=0
			# UDP mode at the defaults: super-packets inside UDP, a
			# source port per packet where they are cut (the receiver's
			# namespace opens its UDP port)
			ip netns exec $RNS sysctl -qw net.dlcp.encap=1
			ip netns exec $SNS sysctl -qw net.dlcp.udp_entropy=1 net.dlcp.udp_gso=1
			run_case s8 "unshaped_1m_udp_gso$sfx" dlcp 1 \
				"{\"size\":$MiB,\"concurrency\":4,\"duration\":$D,\"encap\":\"udp\",\"udp_entropy\":1$p1}" -- \
				--size 1m --concurrency 4 --duration "$D" --encap udp --no-ack
			if [ "$mtu" = 1500 ]; then
				DPORT=$((DPORT + 1)) run_case s8 unshaped_1m_udp_gso_4sock dlcp 4 \
					"{\"size\":$MiB,\"concurrency\":4,\"duration\":$D,\"encap\":\"udp\",\"udp_entropy\":1,\"server_threads\":4}" -- \
					--size 1m --concurrency 4 --duration "$D" --encap udp --no-ack
			fi
			# the same without super-packets: what UDP GSO saves
			ip netns exec $SNS sysctl -qw net.dlcp.udp_gso=0
			run_case s8 "$udpc" dlcp 1 \
				"{\"size\":$MiB,\"concurrency\":4,\"duration\":$D,\"encap\":\"udp\",\"udp_entropy\":1,\"udp_gso\":0$p1}" -- \
				--size 1m --concurrency 4 --duration "$D" --encap udp --no-ack
			ip netns exec $SNS sysctl -qw net.dlcp.udp_gso=1
			ip netns exec $RNS sysctl -qw net.dlcp.encap=0
		done
		ip -n bsnd link set veth0 mtu 1500
		ip -n brcv link set veth1 mtu 1500
		;;
	thc)	# digits training, fp32 / 8-bit / 4-bit homomorphic
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
