#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DLCP loss budgets: messages complete at their budget instead of waiting
# for retransmission, and every invariant of a lossy delivery holds
# (dlcp_loss checks them byte by byte): bytes reported lost never exceed
# the budget, every byte not reported lost is correct, every reported range
# reads as zeros, critical ranges are always intact. Also: budget 0 stays
# exact under loss, burst loss, deadlines, and peers that vanish mid-message;
# a 64 MiB message passes with default settings.
#
# Topology: ns_s (sender, 10.77.1.2) <-- veth --> ns_r (receiver, 10.77.1.1)
# Impairments are netem qdiscs on both ends (data and reports).
#
# DLCP_ENCAP=udp runs every case with DLCP inside UDP (net.dlcp.encap=1 in
# both namespaces) and adds the UDP cases: source-port entropy, a port in
# use, malformed UDP payloads. DLCP_FAMILY=6 runs them over IPv6 (AF_INET6
# sockets, fd77:1::2 -> fd77:1::1; dlcp_loss6.sh: IPv6 inside UDP).

# cleanup, setup and case_* are called by name from ktap_main:
# shellcheck disable=SC2317
true

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

LOSS=$SELFTEST_DIR/dlcp_loss
DLCPSTAT=$REPO_DIR/userspace/tools/dlcpstat
ENCAP=${DLCP_ENCAP:-native}
export DLCP_FAMILY=${DLCP_FAMILY:-4}
if [ "$DLCP_FAMILY" = 6 ]; then
	S=fd77:1::2
	R=fd77:1::1
	PLEN=64
	PY_AF=AF_INET6
else
	S=10.77.1.2
	R=10.77.1.1
	PLEN=24
	PY_AF=AF_INET
fi
port=7100
tmpdir=

cleanup()
{
	ns_delete ns_s ns_r
	return 0
}

setup()
{
	need_exec "$LOSS" || return 1
	modprobe -q veth 2> /dev/null
	modprobe -q sch_netem 2> /dev/null
	modprobe -q sch_tbf 2> /dev/null
	modprobe -q sch_plug 2> /dev/null
	ns_create ns_s ns_r || return 1
	ip -n ns_s link add eth0 type veth peer name eth0 netns ns_r || return 1
	if [ "$DLCP_FAMILY" = 6 ]; then
		# sender_vanishes takes the link down and up: keep the address
		ip netns exec ns_s sysctl -qw net.ipv6.conf.eth0.keep_addr_on_down=1 &&
		ip netns exec ns_r sysctl -qw net.ipv6.conf.eth0.keep_addr_on_down=1 ||
			return 1
	fi
	ip -n ns_s addr add "$S/$PLEN" dev eth0 nodad || return 1
	ip -n ns_r addr add "$R/$PLEN" dev eth0 nodad || return 1
	ip -n ns_s link set eth0 up && ip -n ns_r link set eth0 up || return 1
	if [ "$ENCAP" = udp ]; then
		ip netns exec ns_s sysctl -qw net.dlcp.encap=1 &&
		ip netns exec ns_r sysctl -qw net.dlcp.encap=1
	fi
}

# per_packet: GSO off on both ends, so that an impairment acts on every
# packet: netem drops or delays a super-packet whole, as it does TCP's GSO
# packets, and these cases are about packets lost one by one
per_packet()
{
	ip netns exec ns_s ethtool -K eth0 gso off > /dev/null &&
	ip netns exec ns_r ethtool -K eth0 gso off > /dev/null
}

# impair QDISC...: the same qdisc on both ends, packet by packet
impair()
{
	per_packet || return 1
	tc -n ns_s qdisc replace dev eth0 root "$@" &&
	tc -n ns_r qdisc replace dev eth0 root "$@"
}

# between cases: no impairment, default timeouts and port
after_case()
{
	clear_impairments
}

clear_impairments()
{
	tc -n ns_s qdisc del dev eth0 root 2> /dev/null
	tc -n ns_r qdisc del dev eth0 root 2> /dev/null
	ip netns exec ns_s sysctl -qw net.dlcp.msg_timeout_ms=10000
	ip netns exec ns_r sysctl -qw net.dlcp.msg_timeout_ms=10000
	ip netns exec ns_r sysctl -qw net.dlcp.udp_port=9253
	ip netns exec ns_s sysctl -qw net.dlcp.udp_entropy=1 net.dlcp.udp_gso=1 \
		net.dlcp.gso=1
	ip netns exec ns_s ethtool -K eth0 tx on tx-gso-list on gso on > /dev/null 2>&1
	ip netns exec ns_r ethtool -K eth0 gso on > /dev/null 2>&1
	return 0
}

# start_recv ARGS...: a checking receiver in ns_r, in the background ($rpid)
start_recv()
{
	port=$((port + 1))
	rm -f "$tmpdir/ready"
	ip netns exec ns_r timeout "$(tscale 150)" "$LOSS" recv --port "$port" \
		--ready "$tmpdir/ready" "$@" &
	rpid=$!
	wait_for_file "$tmpdir/ready" 20 "$rpid" || fail "receiver did not start"
}

send()
{
	ip netns exec ns_s timeout "$(tscale 150)" "$LOSS" send --to "$R" --port "$port" "$@"
}

# transfer COUNT SIZE BUDGET RECV_EXPECT SEND_EXPECT [EXTRA...]
transfer()
{
	local count=$1 size=$2 budget=$3 rexp=$4 sexp=$5 rc=0
	shift 5

	start_recv --count "$count" --size "$size" --budget "$budget" \
		--expect "$rexp" "$@" || return 1
	send --count "$count" --size "$size" --budget "$budget" \
		--expect-completion "$sexp" "$@" || { echo "FAIL: sender"; rc=1; }
	wait "$rpid" || { echo "FAIL: receiver"; rc=1; }
	return "$rc"
}

counter_delta()	# NS COUNTER BEFORE
{
	echo $(($(snmp "$1" "$2") - $3))
}

# counters_take "COUNTER...": CNT[COUNTER] = the sender's counter
# counters_since: CNT[COUNTER] = its increase since counters_take
declare -A CNT
counters_take()
{
	local c

	CNT=()
	for c in $1; do
		CNT[$c]=$(snmp ns_s "$c")
		[ "${CNT[$c]}" != missing ] || fail "no counter $c" || return 1
	done
}

counters_since()
{
	local c

	for c in "${!CNT[@]}"; do
		CNT[$c]=$(counter_delta ns_s "$c" "${CNT[$c]}")
	done
}

case_exact_under_loss()
{
	impair netem loss 5% || return 1
	transfer 4 1048576 0 exact exact
}

case_budget_1pct_loss_1pct()
{
	impair netem loss 1% || return 1
	transfer 8 1048576 10000 any any
}

# packets reordered, none lost: a message within budget waits for the late
# ones (the receiver's reordering wait) instead of zero-filling them
case_budget_reordered_not_lost()
{
	local lost

	lost=$(snmp ns_r DlcpInBytesLost)
	impair netem delay 10ms reorder 50% || return 1
	transfer 4 1048576 100000 exact exact || return 1
	[ "$(counter_delta ns_r DlcpInBytesLost "$lost")" -eq 0 ] ||
		fail "bytes zero-filled on a link that lost none"
}

case_budget_5pct_loss_1pct()
{
	local lossy

	lossy=$(snmp ns_r DlcpInMsgsLossy)

	impair netem loss 1% || return 1
	transfer 8 1048576 50000 any any || return 1
	# 1% loss is within a 5% budget: most messages complete lossy
	[ "$(counter_delta ns_r DlcpInMsgsLossy "$lossy")" -ge 1 ] ||
		fail "no message completed within budget"
}

case_budget_1pct_loss_5pct()
{
	impair netem loss 5% || return 1
	# losses exceed the budget: just enough is retransmitted
	transfer 6 1048576 10000 any any
}

case_budget_5pct_loss_5pct()
{
	impair netem loss 5% || return 1
	transfer 6 1048576 50000 any any
}

case_budget_10pct_loss_5pct()
{
	local avoided

	avoided=$(snmp ns_s DlcpRetransAvoided)

	impair netem loss 5% || return 1
	transfer 6 1048576 100000 any any || return 1
	[ "$(counter_delta ns_s DlcpRetransAvoided "$avoided")" -ge 1 ] ||
		fail "no retransmission was avoided"
}

case_burst_loss_gemodel()
{
	# Gilbert-Elliott: bursts of loss, about 2-3% overall
	impair netem loss gemodel 1% 30% 70% 0.1% || return 1
	transfer 6 1048576 50000 any any
}

# A receiver that answers is never given up on, however many packets of
# one message a burst takes: bursts of loss (Gilbert-Elliott, ~3.5% on
# average), duplicates, corruption, jitter and reordering both ways, a
# 50 Mbit/s bottleneck on the data side; 120 messages of 1 B to 4 MiB with
# budgets 0-20%, 6 in flight. Every message must complete within its
# budget (none with ETIMEDOUT), and the receiver must get each one. The
# sender's msg_timeout_ms is 4 s: the netem loss chain moves on per
# packet, so while a sender backs off, one burst spans seconds, and the
# sender must give its receiver enough REPORTs to get one through before
# it gives up (its back-off stops at a fifth of msg_timeout_ms, and its
# packets ask for a REPORT each until it hears from the receiver).
case_burst_loss_receiver_alive()
{
	local ge="loss gemodel 1.8% 30% 75% 0.5% duplicate 1% corrupt 0.5%"
	local sizes=1,1000,64k,1m,4m,200k budgets=0,10000,50000,200000
	local rc=0

	per_packet || return 1
	# shellcheck disable=SC2086
	tc -n ns_s qdisc replace dev eth0 root handle 1: netem $ge \
		delay 2ms 1ms reorder 25% &&
	tc -n ns_s qdisc add dev eth0 parent 1:1 handle 10: tbf \
		rate 50mbit burst 32kb latency 200ms &&
	tc -n ns_r qdisc replace dev eth0 root netem $ge \
		delay 2ms 1ms reorder 25% || return 1
	ip netns exec ns_s sysctl -qw net.dlcp.msg_timeout_ms=4000 || return 1
	start_recv --count 120 --size "$sizes" --budget "$budgets" ||
		return 1
	send --count 120 --size "$sizes" --budget "$budgets" --window 6 \
		--expect-completion any > "$tmpdir/completions" ||
		{ echo "FAIL: sender"; rc=1; }
	grep -v 'errno 0$' "$tmpdir/completions"
	wait "$rpid" || { echo "FAIL: receiver"; rc=1; }
	return "$rc"
}

case_critical_ranges_intact()
{
	impair netem loss 5% || return 1
	transfer 6 1048576 100000 any any --crit 0:4096 --crit 500000:20000 \
		--crit 1040000:8576
}

# Lost bytes read as zeros also in pages that held data before: the
# receiver does not zero a page when it allocates it, only the bytes of it
# that did not arrive, when the message is delivered. The first transfer
# leaves the pages of 16 MiB of patterned data to be reused; the lossy one
# then gets them back for its partly received pages.
case_lost_bytes_zero_in_used_pages()
{
	transfer 16 1048576 0 exact exact || return 1
	impair netem loss 5% || return 1
	transfer 16 1048576 100000 any any
}

# A path that loses nothing gets nothing resent, however busy the CPUs:
# 300 MiB, 4 messages in flight, sender and receiver keeping the VM's CPUs
# busy, packet by packet (net.dlcp.gso=0), then in super-packets. veth
# hands each packet to the backlog of the CPU that sent it, and a busy CPU
# holds its backlog back for a scheduling slice: a socket transmitting from two
# CPUs had its packets overtake each other by milliseconds, and the
# receiver's reports of the gaps made the sender resend (0.24% of the
# packets). Allowed: 10 plus 0.1% of the data packets, for a stall that
# comes before the reordering window has learnt the host's. A transfer
# over that is repeated once and the case fails only if both are: one
# long stall of the emulator's vCPU can cost a burst of resends (the same
# module resent 11-129 of ~225,000 in nine runs, and 325 once), while a
# sender that resends for every overtaking packet does it in every run.
LOSSLESS_COUNTERS="DlcpRetransPkts DlcpOutDataPkts DlcpRetransUndone
	DlcpRetransTimeout DlcpRetransReported DlcpTlpProbes"
lossless_resends()
{
	counters_take "$LOSSLESS_COUNTERS" || return 1
	transfer 300 1048576 0 exact exact --window 4 || return 1
	counters_since
	echo "${CNT[DlcpRetransPkts]} of ${CNT[DlcpOutDataPkts]} data packets" \
	     "resent on a lossless path (undone: ${CNT[DlcpRetransUndone]};" \
	     "found lost by a timeout ${CNT[DlcpRetransTimeout]}, by a report" \
	     "${CNT[DlcpRetransReported]}; tail probes ${CNT[DlcpTlpProbes]})"
	[ "${CNT[DlcpRetransPkts]}" -le $((10 + CNT[DlcpOutDataPkts] / 1000)) ] ||
		return 2
}

lossless_no_needless_resends()
{
	tries 2 lossless_resends "over the allowance" "needless resends"
}

case_lossless_no_needless_resends()
{
	ip netns exec ns_s sysctl -qw net.dlcp.gso=0 net.dlcp.udp_gso=0 ||
		return 1
	lossless_no_needless_resends
}

# the same in super-packets (net.dlcp.gso and udp_gso, the defaults)
case_lossless_super_no_needless_resends()
{
	local gso

	gso=$(snmp ns_s DlcpGsoOutPkts)
	[ "$ENCAP" = udp ] && gso=$(snmp ns_s DlcpUdpGsoOutPkts)
	lossless_no_needless_resends || return 1
	if [ "$ENCAP" = udp ]; then
		gso=$(counter_delta ns_s DlcpUdpGsoOutPkts "$gso")
	else
		gso=$(counter_delta ns_s DlcpGsoOutPkts "$gso")
	fi
	echo "$gso super-packets"
	[ "$gso" -gt 0 ] || fail "no super-packet sent"
}

# A CPU that does not run its softirq holds the packets it sent in its
# backlog (veth), and its timers too: when it runs again, the timer
# softirq comes before the backlog's, and the guard timer found lost the
# packets that its own CPU still held (RACK's timer, the timeout), as did
# a report handled on the other CPU meanwhile; the answer to a PROBE
# held there, older than the reports that overtook it, had segments they
# acknowledged resent. While the sending CPU's backlog holds packets, its
# segments are not found lost (DlcpLossHeld), and an answer older than
# the message's latest report is no longer taken as the whole truth.
# net.core.netdev_budget and dev_weight of 1 hand most receive work to
# ksoftirqd, as a busy host does; the sender runs on CPU 1, the receiver
# on CPU 0, and a SCHED_FIFO loop takes CPU 1 for 40 ms in every 70, so
# that ksoftirqd/1 waits with a backlog. Two transfers of 100 MiB, packet
# by packet, 4 messages in flight, may resend 10 plus 0.02% of their data
# packets together (the module resent 0-3 in eight runs; before, 115-423,
# 0.08-0.29%); over that, the pair is run once more.
STALL_CPU_COUNTERS="DlcpRetransPkts DlcpOutDataPkts DlcpLossHeld
	DlcpRetransTimeout DlcpRetransReported"
stalled_cpu_resends()
{
	local run

	counters_take "$STALL_CPU_COUNTERS" || return 1
	for run in 1 2; do
		taskset -p -c 0 $$ > /dev/null
		start_recv --count 100 --size 1048576 --budget 0 \
			--expect exact --window 4 || return 1
		taskset -p -c 1 $$ > /dev/null
		send --count 100 --size 1048576 --budget 0 \
			--expect-completion exact --window 4 ||
			{ echo "FAIL: sender (run $run)"; return 1; }
		wait "$rpid" || { echo "FAIL: receiver (run $run)"; return 1; }
	done
	counters_since
	echo "${CNT[DlcpRetransPkts]} of ${CNT[DlcpOutDataPkts]} data packets" \
	     "resent (found lost by a timeout ${CNT[DlcpRetransTimeout]}, by a" \
	     "report ${CNT[DlcpRetransReported]}; held ${CNT[DlcpLossHeld]})"
	[ "${CNT[DlcpRetransPkts]}" -le $((10 + CNT[DlcpOutDataPkts] / 5000)) ] ||
		return 2
}

case_stalled_cpu_no_needless_resends()
{
	local rc budget weight stall_pid

	if [ "$(nproc)" -lt 2 ]; then
		echo "needs two CPUs"
		return "$KSFT_SKIP"
	fi
	budget=$(sysctl -n net.core.netdev_budget) &&
	weight=$(sysctl -n net.core.dev_weight) &&
	ip netns exec ns_s sysctl -qw net.dlcp.gso=0 net.dlcp.udp_gso=0 &&
	sysctl -qw net.core.netdev_budget=1 net.core.dev_weight=1 || return 1
	# shellcheck disable=SC2016  # the loop's own expansions
	chrt -f 50 taskset -c 1 bash -c 'while :; do
		end=$((${EPOCHREALTIME/./} + 40000))
		while [ "${EPOCHREALTIME/./}" -lt "$end" ]; do :; done
		sleep 0.03
	done' &
	stall_pid=$!
	tries 2 stalled_cpu_resends "over the allowance" "needless resends"
	rc=$?
	kill "$stall_pid"
	wait "$stall_pid" 2> /dev/null
	taskset -p -c "0-$(($(nproc) - 1))" $$ > /dev/null
	sysctl -qw net.core.netdev_budget="$budget" net.core.dev_weight="$weight"
	return "$rc"
}

# replies_pluggable: the receiver's replies go through sch_plug, which
# hold_replies closes and opens; $KSFT_SKIP on a kernel without it
replies_pluggable()
{
	local err

	# the kernel loads sch_plug itself for the qdisc's kind
	if ! err=$(tc -n ns_r qdisc replace dev eth0 root plug \
			limit 100000000 2>&1); then
		echo "$err"
		[[ $err == *"qdisc kind is unknown"* ]] || return 1
		echo "this kernel has no sch_plug (CONFIG_NET_SCH_PLUG)"
		return "$KSFT_SKIP"
	fi
	tc -n ns_r qdisc change dev eth0 root plug release_indefinite
}

# hold_replies PKTS HOLD: in the background ($hold_pid), once PKTS more
# data packets have arrived, hold the receiver's replies HOLD ms, then let
# them go in the order they were sent, as a CPU that did not run for that
# long drains its backlog (replies_pluggable first)
hold_replies()
{
	local pkts=$1 hold=$2

	(
		got=$(snmp ns_r DlcpInDataPkts)
		while [ "$(snmp ns_r DlcpInDataPkts)" -lt $((got + pkts)) ]; do
			sleep 0.01
		done
		tc -n ns_r qdisc change dev eth0 root plug block
		sleep "$(printf '%d.%03d' $((hold / 1000)) $((hold % 1000)))"
		tc -n ns_r qdisc change dev eth0 root plug release_indefinite
		echo "replies held $hold ms"
	) &
	hold_pid=$!
}

# Reports that stop for longer than the timeout while every data packet
# arrives, as when the host does not run the receiver's CPU (or the
# sender's softirq) for that long: the sender presumes what it sent lost,
# but resends only the oldest segment of each message until the receiver
# answers, and that answer shows the rest arrived (DlcpRetransUndone).
# The receiver's replies are held 150 ms (sch_plug on its side) once 2000
# data packets of 64 MiB have arrived; the transfer cannot end before the
# replies come. Allowed: four resends per message in flight (a timeout and
# three backed-off ones) and 10 more; a sender that resends its whole
# window at the first timeout goes far over that.
STALL_COUNTERS="DlcpRetransPkts DlcpOutDataPkts DlcpRetransTimeout
	DlcpRetransUndone DlcpTlpProbes"
case_stalled_reports_no_needless_resends()
{
	local rc=0 window=4

	counters_take "$STALL_COUNTERS" || return 1
	replies_pluggable || return
	start_recv --count 64 --size 1048576 --budget 0 --expect exact ||
		return 1
	hold_replies 2000 150
	send --count 64 --size 1048576 --budget 0 --expect-completion exact \
		--window "$window" || { echo "FAIL: sender"; rc=1; }
	wait "$rpid" || { echo "FAIL: receiver"; rc=1; }
	kill "$hold_pid" 2> /dev/null
	wait "$hold_pid"
	counters_since
	echo "${CNT[DlcpRetransPkts]} of ${CNT[DlcpOutDataPkts]} data packets resent" \
	     "(presumed lost by a timeout ${CNT[DlcpRetransTimeout]}, undone" \
	     "${CNT[DlcpRetransUndone]}; tail probes ${CNT[DlcpTlpProbes]})"
	[ "${CNT[DlcpRetransTimeout]}" -gt 0 ] ||
		fail "no timeout fired: the stall missed the transfer" || rc=1
	[ "${CNT[DlcpRetransPkts]}" -le $((4 * window + 10)) ] ||
		fail "needless resends" || rc=1
	return "$rc"
}

# A timeout that fires while the segment it resends is on its way (the
# receiver's replies held longer than the timeout) makes that resend
# needless, and the receiver says so (DlcpSpuriousTimeouts). That tells
# nothing of reordering and must leave RACK's reordering window alone: a
# window taught by it the age at which RACK had found the message's real
# losses, a round trip and more, made a long path with random loss wait
# for the timeout at every loss. 30 ms round trip, 1% of the data lost,
# 2 x 8 MiB; the replies are held 500 ms once 3000 data packets have
# arrived, by when RACK has found losses in the message. A tail loss
# probe goes first, the timeout an RTO after it (about 90 ms into the
# hold), and again at each backed-off RTO: the answer to the first resend
# comes after later ones went out, and must be told from the answer to a
# resend of RACK's all the same. While the
# transfer lasts, the window's part above net.dlcp.reorder_us (reo_us in
# /proc/net/dlcp/peers) stays within srtt/2. A run tells only if the
# timeout's resend was needless (the oldest segment may have been lost)
# and no resend of RACK's was (the host reordered packets): up to three
# runs.
SPURIOUS_COUNTERS="DlcpSpuriousTimeouts DlcpDupReports DlcpRetransTimeout
	DlcpRetransReported"
spurious_timeout_transfer()
{
	local rc=0 spid reo

	counters_take "$SPURIOUS_COUNTERS" || return 1
	reo=$(ip netns exec ns_s sysctl -n net.dlcp.reorder_us) || return 1
	start_recv --count 2 --size 8388608 --budget 0 --expect exact ||
		return 1
	hold_replies 3000 500
	echo -1000000000 > "$tmpdir/reo_excess"
	# the largest excess of the window over reorder_us + srtt/2, in us
	(
		max=-1000000000
		while :; do
			max=$(ip netns exec ns_s cat /proc/net/dlcp/peers |
			      awk -v m="$max" -v r="$reo" \
				'NR > 1 && $7 > 0 { x = $11 - r - $7 / 2; if (x > m) m = x }
				 END { print int(m) }')
			# whole or not at all when the sampler is stopped
			echo "$max" > "$tmpdir/reo_excess.new"
			mv "$tmpdir/reo_excess.new" "$tmpdir/reo_excess"
			sleep 0.05
		done
	) &
	spid=$!
	send --count 2 --size 8388608 --budget 0 --expect-completion exact ||
		{ echo "FAIL: sender"; rc=1; }
	wait "$rpid" || { echo "FAIL: receiver"; rc=1; }
	kill "$hold_pid" "$spid" 2> /dev/null
	wait "$hold_pid" "$spid"
	counters_since
	echo "timeouts' needless resends ${CNT[DlcpSpuriousTimeouts]}, needless" \
	     "resends in all ${CNT[DlcpDupReports]}; presumed lost by a timeout" \
	     "${CNT[DlcpRetransTimeout]}, by a report ${CNT[DlcpRetransReported]};" \
	     "reordering window over reorder_us + srtt/2 by at most" \
	     "$(cat "$tmpdir/reo_excess") us"
	[ "$rc" -eq 0 ] || return 1
	if [ "${CNT[DlcpSpuriousTimeouts]}" -eq 0 ]; then
		echo "no timeout's resend was needless"
		return 2
	fi
	if [ "${CNT[DlcpDupReports]}" -gt "${CNT[DlcpSpuriousTimeouts]}" ]; then
		echo "a resend found lost by a report was needless too (the" \
		     "host reordered): the window may widen"
		return 2
	fi
	[ "$(cat "$tmpdir/reo_excess")" -le 0 ] ||
		fail "a timeout's needless resend widened the reordering window"
}

# long_lossy_path: 30 ms round trip (all of it on the data's way), 1% of
# the data lost, packet by packet; the replies go through sch_plug
long_lossy_path()
{
	per_packet || return 1
	tc -n ns_s qdisc replace dev eth0 root netem delay 30ms loss 1% &&
	replies_pluggable
}

case_spurious_timeout_keeps_reordering_window()
{
	long_lossy_path || return
	tries 3 spurious_timeout_transfer "this run cannot tell" \
		"needless resends not the timeout's in every run"
}

# On a long path whose round trip varies little, the retransmission
# timeout (srtt + 4 rttvar) comes before two round trips: a message whose
# last segments were lost, and whose reports therefore stopped, must be
# probed (DlcpTlpProbes) before it times out (DlcpRetransTimeout), which
# cuts the window and resends a segment that may only be queued; the
# probe's answer comes a round trip later, before the timeout, and tells
# what to resend. 30 ms round trip, 1% of the data lost, 40 x 1 MiB one
# at a time, budget 0: several messages lose a segment of their last
# window's tail. A transfer in which a timeout fired all the same is
# repeated once (a probe or its answer held up by the emulator); a sender
# that times out before it probes does in every one.
tail_probed_transfer()
{
	counters_take "DlcpTlpProbes DlcpRetransTimeout" || return 1
	transfer 40 1048576 0 exact exact --window 1 || return 1
	counters_since
	echo "tail loss probes ${CNT[DlcpTlpProbes]}, segments presumed lost" \
	     "by a timeout ${CNT[DlcpRetransTimeout]}"
	[ "${CNT[DlcpTlpProbes]}" -gt 0 ] || fail "no tail loss probe" ||
		return 1
	[ "${CNT[DlcpRetransTimeout]}" -eq 0 ] || return 2
}

case_long_path_tail_probed()
{
	long_lossy_path || return
	tries 2 tail_probed_transfer "a timeout fired" \
		"timeouts instead of tail loss probes"
}

# A receiver's STOP is lost, and its reports: the sender's timeouts resend
# a segment of the message the receiver delivered, and the STOP it sends
# again must echo that resend, not the last packet before delivery, whose
# age would be taken for a round trip and the timeout for a spurious one:
# the timeout would stay at twice that age (2 s at most) for 10 s. The
# receiver's replies are dropped for 1 s from the start of a 16 KiB
# message (resends at about 0.2, 0.6 and 1.4 s); once its STOP came, the
# sender's timeout is read (dlcpstat -P) while a 64 MiB message follows on
# the socket. A run in which no reading came before the second message
# ended tells nothing: up to three runs.
stale_echo_transfer()
{
	local rc=0 bpid spid max done0

	done0=$(snmp ns_s DlcpOutMsgsDone)
	start_recv --count 2 --size 16k,64m --budget 0 --expect exact ||
		return 1
	tc -n ns_r qdisc replace dev eth0 root netem loss 100% || return 1
	(sleep 1; tc -n ns_r qdisc del dev eth0 root) &
	bpid=$!
	: > "$tmpdir/rto"
	(
		while [ "$(snmp ns_s DlcpOutMsgsDone)" -le "$done0" ]; do
			sleep 0.01
		done
		while :; do
			"$DLCPSTAT" -N ns_s -P -j --netlink 2> /dev/null |
				grep -o '"rto_us":[0-9]*' | cut -d: -f2 \
				>> "$tmpdir/rto"
			sleep 0.02
		done
	) &
	spid=$!
	send --count 2 --size 16k,64m --budget 0 --window 1 \
		--expect-completion exact || { echo "FAIL: sender"; rc=1; }
	wait "$rpid" || { echo "FAIL: receiver"; rc=1; }
	kill "$spid" 2> /dev/null
	wait "$spid" "$bpid"
	[ "$rc" -eq 0 ] || return 1
	[ -s "$tmpdir/rto" ] || { echo "no reading of the timeout"; return 2; }
	max=$(sort -n "$tmpdir/rto" | tail -n 1)
	echo "$(wc -l < "$tmpdir/rto") readings of the sender's timeout" \
	     "after the first message, the longest $max us"
	[ "$max" -lt 1000000 ] ||
		fail "the STOP answering a resend echoed an older packet"
}

case_stop_echoes_resend()
{
	need_exec "$DLCPSTAT" || return 1
	if ! have_inet_diag; then
		echo "reads the timeout through sock_diag: kernel without" \
		     "inet_diag (CONFIG_INET_DIAG)"
		return "$KSFT_SKIP"
	fi
	# the neighbours are known: no resolution across the dropped replies
	ip -n ns_s neigh replace "$R" dev eth0 nud permanent \
		lladdr "$(mac ns_r eth0)" &&
	ip -n ns_r neigh replace "$S" dev eth0 nud permanent \
		lladdr "$(mac ns_s eth0)" || return 1
	tries 3 stale_echo_transfer "no reading during the second message" \
		"no reading of the timeout in any run"
}

case_deadline_over_budget()
{
	local failed rc=0

	failed=$(snmp ns_r DlcpInMsgsFailed)

	# 4 MiB through 8 Mbit/s cannot finish in 300 ms: the receiver drops
	# it at the deadline and the sender's completion says ETIME
	impair tbf rate 8mbit burst 16kb latency 50ms || return 1
	start_recv --count 1 --size 4194304 --budget 10000 --timeout 6 ||
		return 1
	send --count 1 --size 4194304 --budget 10000 --deadline 300 \
		--expect-completion etime || { echo "FAIL: sender"; rc=1; }
	if wait "$rpid"; then
		echo "FAIL: the receiver got a message it should have dropped"
		rc=1
	fi
	[ "$(counter_delta ns_r DlcpInMsgsFailed "$failed")" -eq 1 ] ||
		fail "DlcpInMsgsFailed did not count the drop"
	return "$rc"
}

case_receiver_vanishes()
{
	local failed refused t0 rc=0

	failed=$(snmp ns_s DlcpOutMsgsFailed)
	refused=$(snmp ns_s DlcpNoPortRcvd)

	# msg_timeout_ms of 20 s: the sender must learn from the receiver's
	# host that the port closed (a STOP flagged NOPORT), not time out
	ip netns exec ns_s sysctl -qw net.dlcp.msg_timeout_ms=20000
	impair tbf rate 8mbit burst 16kb latency 50ms || return 1
	start_recv --count 1 --size 8388608 --budget 0 || return 1
	(sleep 1; kill "$rpid") &
	t0=$SECONDS
	send --count 1 --size 8388608 --budget 0 \
		--expect-completion econnrefused || { echo "FAIL: sender"; rc=1; }
	wait "$rpid"
	echo "sender learnt of the failure after $((SECONDS - t0)) s"
	[ $((SECONDS - t0)) -lt 10 ] ||
		fail "the sender learnt of the closed port only at a timeout"
	[ "$(counter_delta ns_s DlcpOutMsgsFailed "$failed")" -eq 1 ] ||
		fail "DlcpOutMsgsFailed did not count it"
	[ "$(counter_delta ns_s DlcpNoPortRcvd "$refused")" -ge 1 ] ||
		fail "DlcpNoPortRcvd did not count the STOP"
	return "$rc"
}

case_sender_vanishes()
{
	local timeouts spid n data rc=0

	timeouts=$(snmp ns_r DlcpInMsgsTimeout)
	data=$(snmp ns_r DlcpInDataPkts)
	ip netns exec ns_r sysctl -qw net.dlcp.msg_timeout_ms=2000
	impair tbf rate 8mbit burst 16kb latency 50ms || return 1
	start_recv --count 1 --size 4194304 --budget 0 --expect exact ||
		return 1
	# not through send(): kill must reach the process itself
	ip netns exec ns_s "$LOSS" send --to "$R" --port "$port" --count 1 \
		--size 4194304 --budget 0 &
	spid=$!
	# a few hundred packets in (of 2938), the sender's host drops off the
	# network, then the process dies
	for n in $(seq 1 200); do
		[ $(($(snmp ns_r DlcpInDataPkts) - data)) -ge 300 ] && break
		sleep 0.05
	done
	ip -n ns_s link set eth0 down
	kill -9 "$spid"
	wait "$spid"
	echo "receiver: $(($(snmp ns_r DlcpInDataPkts) - data)) data packets in;" \
		"$(ip netns exec ns_r tail -n +2 /proc/net/dlcp/sockets)"
	for n in $(seq 1 100); do
		[ "$(counter_delta ns_r DlcpInMsgsTimeout "$timeouts")" -ge 1 ] &&
			break
		sleep 0.1
	done
	echo "receiver freed the partial message after about $((n / 10)) s"
	[ "$(counter_delta ns_r DlcpInMsgsTimeout "$timeouts")" -eq 1 ] ||
		{ echo "FAIL: DlcpInMsgsTimeout did not count it"; rc=1; }
	echo "receiver after: $(ip netns exec ns_r tail -n +2 /proc/net/dlcp/sockets)"
	# the receiving socket still works
	ip -n ns_s link set eth0 up
	send --count 1 --size 4194304 --budget 0 --expect-completion exact ||
		{ echo "FAIL: second sender"; rc=1; }
	wait "$rpid" || { echo "FAIL: receiver"; rc=1; }
	return "$rc"
}

case_big_message_64mib_defaults()
{
	local max

	# the largest default message, no tuning: 64 MiB in one message
	max=$(ip netns exec ns_r sysctl -n net.dlcp.max_msg_size)
	[ "$max" -eq 67108864 ] || fail "max_msg_size is $max" || return 1
	transfer 1 67108864 0 exact exact
}

case_udp_entropy()
{
	local udp ports gso

	# the sender's device cuts the super-packets, as a NIC's GSO does
	ip netns exec ns_s ethtool -K eth0 tx-gso-list off > /dev/null ||
		fail "ethtool -K eth0 tx-gso-list off" || return 1
	udp=$(snmp ns_r DlcpUdpInPkts)
	gso=$(snmp ns_s DlcpUdpGsoOutPkts)
	ip netns exec ns_r timeout 60 tcpdump -i eth0 -n -s 128 -B 8192 -l --immediate-mode -c 200 \
		udp dst port 9253 > "$tmpdir/cap" 2> "$tmpdir/cap.err" &
	capture_ready "$tmpdir/cap.err" $! || return 1
	transfer 2 262144 0 exact exact || return 1
	wait
	# S.SPORT > R.9253: UDP ...
	ports=$(awk -v s="$S." 'index($3, s) == 1 { n = split($3, a, "."); print a[n] }' \
		"$tmpdir/cap" | sort -u | wc -l)
	gso=$(counter_delta ns_s DlcpUdpGsoOutPkts "$gso")
	echo "$(wc -l < "$tmpdir/cap") UDP packets captured, $ports source ports;" \
		"DlcpUdpInPkts +$(counter_delta ns_r DlcpUdpInPkts "$udp");" \
		"$gso super-packets sent"
	[ "$(counter_delta ns_r DlcpUdpInPkts "$udp")" -gt 0 ] ||
		fail "no packet came in through UDP" || return 1
	[ "$gso" -gt 0 ] || fail "no super-packet sent" || return 1
	# one port per packet, from 16384: almost every packet has its own,
	# also those cut from one super-packet
	[ "$ports" -ge 100 ] || fail "only $ports source ports in 200 packets"
}

# UDP GSO (net.dlcp.udp_gso 1, the default): the sender hands IP each run
# of packets the window allows as one super-packet inside one UDP header,
# typed as a UDP tunnel's GSO packet. veth passes it whole and the
# receiver takes it whole (DlcpUdpGsoInPkts), with nothing to cut
# (DlcpUdpGsoCut); or the sender's device cannot take it (tx-gso-list off)
# and the UDP tunnel's GSO cuts it with DLCP's, each packet with its own
# source port (udp_entropy 1, the default), the checksums left to the
# device or, with tx off, summed in software and verified by the receiving
# UDP layer. Every byte arrives each way (dlcp_loss checks them). None is
# built with udp_gso 0.
case_udp_gso()
{
	local gso out in how whole cut csum

	for how in whole "tx-gso-list off" "tx-gso-list off tx off"; do
		if [ "$how" != whole ]; then
			# shellcheck disable=SC2086 # the words are ethtool's
			ip netns exec ns_s ethtool -K eth0 $how > /dev/null ||
				fail "ethtool -K eth0 $how" || return 1
		fi
		gso=$(snmp ns_s DlcpUdpGsoOutPkts)
		out=$(snmp ns_s DlcpUdpOutPkts)
		in=$(snmp ns_r DlcpUdpInPkts)
		whole=$(snmp ns_r DlcpUdpGsoInPkts)
		cut=$(snmp ns_r DlcpUdpGsoCut)
		csum=$(ip netns exec ns_r nstat -az UdpInCsumErrors |
			awk '$1 == "UdpInCsumErrors" { print $2 }')
		transfer 4 1048576 0 exact exact || return 1
		gso=$(counter_delta ns_s DlcpUdpGsoOutPkts "$gso")
		out=$(counter_delta ns_s DlcpUdpOutPkts "$out")
		in=$(counter_delta ns_r DlcpUdpInPkts "$in")
		whole=$(counter_delta ns_r DlcpUdpGsoInPkts "$whole")
		cut=$(counter_delta ns_r DlcpUdpGsoCut "$cut")
		csum=$(($(ip netns exec ns_r nstat -az UdpInCsumErrors |
			awk '$1 == "UdpInCsumErrors" { print $2 }') - csum))
		echo "$how: $gso super-packets, $out packets sent, $in received, $whole taken whole, $cut cut by the receiver, $csum UDP checksum errors"
		[ "$gso" -gt 0 ] || fail "no super-packet sent" || return 1
		[ "$in" -ge 1400 ] || fail "only $in packets received" || return 1
		[ "$cut" -eq 0 ] || fail "$cut super-packets cut by the receiver" ||
			return 1
		[ "$csum" -eq 0 ] || fail "$csum UDP checksum errors" || return 1
		if [ "$how" = whole ]; then
			[ "$whole" -eq "$gso" ] ||
				fail "$whole of $gso super-packets taken whole" ||
				return 1
		else
			[ "$whole" -eq 0 ] ||
				fail "$whole taken whole after the sender cut them" ||
				return 1
		fi
	done
	ip netns exec ns_s sysctl -qw net.dlcp.udp_gso=0 || return 1
	gso=$(snmp ns_s DlcpUdpGsoOutPkts)
	transfer 2 262144 0 exact exact || return 1
	[ "$(counter_delta ns_s DlcpUdpGsoOutPkts "$gso")" -eq 0 ] ||
		fail "super-packets with net.dlcp.udp_gso=0"
}

case_udp_port_in_use()
{
	local err

	# something else holds UDP 9300: moving DLCP there must fail cleanly
	ip netns exec ns_r timeout 20 /usr/bin/python3 -c 'import socket, sys, time
s = socket.socket(getattr(socket, sys.argv[1]), socket.SOCK_DGRAM)
s.bind(("", 9300))
time.sleep(30)' "$PY_AF" &
	for _ in $(seq 100); do
		ip netns exec ns_r ss -Huln 'sport = :9300' | grep -q . && break
		sleep 0.2
	done
	err=$(ip netns exec ns_r sysctl -w net.dlcp.udp_port=9300 2>&1) &&
		{ kill %%; fail "udp_port moved onto a port in use"; return 1; }
	kill %% 2> /dev/null
	wait
	echo "sysctl said: $err"
	grep -q "Address already in use" <<< "$err" ||
		fail "not EADDRINUSE" || return 1
	[ "$(ip netns exec ns_r sysctl -n net.dlcp.udp_port)" -eq 9253 ] ||
		fail "udp_port changed anyway" || return 1
	# and DLCP still works on its port
	transfer 1 65536 0 exact exact
}

case_udp_malformed()
{
	local before after

	before=$(snmp ns_r DlcpDropShort)
	# ten 3-byte datagrams to the DLCP port, from a source port DLCP takes
	# datagrams from (below 1024): dropped, counted as short
	ip netns exec ns_s /usr/bin/python3 -c 'import socket, sys
s = socket.socket(getattr(socket, sys.argv[2]), socket.SOCK_DGRAM)
s.bind(("", 1000))
for _ in range(10):
	s.sendto(b"abc", (sys.argv[1], 9253))' "$R" "$PY_AF"
	sleep 0.5
	after=$(snmp ns_r DlcpDropShort)
	echo "DlcpDropShort +$((after - before))"
	[ $((after - before)) -eq 10 ] || fail "expected 10 short drops"
}

CASES=(
	big_message_64mib_defaults
	exact_under_loss
	budget_1pct_loss_1pct
	budget_5pct_loss_1pct
	budget_1pct_loss_5pct
	budget_5pct_loss_5pct
	budget_10pct_loss_5pct
	budget_reordered_not_lost
	burst_loss_gemodel
	burst_loss_receiver_alive
	critical_ranges_intact
	lost_bytes_zero_in_used_pages
	lossless_no_needless_resends
	lossless_super_no_needless_resends
	stalled_reports_no_needless_resends
	stalled_cpu_no_needless_resends
	spurious_timeout_keeps_reordering_window
	long_path_tail_probed
	stop_echoes_resend
	deadline_over_budget
	receiver_vanishes
	sender_vanishes
)

# The short subset: exact and lossy delivery, burst loss, critical ranges,
# lost bytes as zeros, the deadline
CORE_CASES=(exact_under_loss budget_5pct_loss_1pct burst_loss_gemodel
	    critical_ranges_intact lost_bytes_zero_in_used_pages
	    deadline_over_budget)
# In UDP mode (dlcp_loss_udp.sh, dlcp_loss6.sh): the short subset and UDP
# GSO's super-packets without needless resends (every case with
# DLCP_SLOW=1), as the recovery the rest tests is the same code as
# natively, where every case runs; and the UDP cases
if [ "$ENCAP" = udp ]; then
	[ "${DLCP_SLOW:-0}" = 1 ] ||
		CASES=("${CORE_CASES[@]}" lossless_super_no_needless_resends)
	CASES+=(udp_entropy udp_gso udp_port_in_use udp_malformed)
fi
# DLCP_LOSS_CORE=1: the short subset alone, for the kernels that run the
# core selftests (make check-kernels, make check on 6.12); in UDP mode also
# its GSO and malformed payloads
if [ -n "${DLCP_LOSS_CORE:-}" ]; then
	CASES=("${CORE_CASES[@]}")
	[ "$ENCAP" = udp ] && CASES+=(udp_gso udp_malformed)
fi
# DLCP_LOSS_CASES="a b": run only these cases
[ -n "${DLCP_LOSS_CASES:-}" ] && read -r -a CASES <<< "$DLCP_LOSS_CASES"

ktap_main "${CASES[@]}"
