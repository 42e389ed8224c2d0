#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DLCP priority classes and selective dropping, end to end through a
# router running tc-scripts/dlcp-qos:
#   - tagging on the wire: DSCP = net.dlcp.class_dscp[class] for classes
#     from layers and explicit priorities, ECT(0) on important data and on
#     control packets, Not-ECT on droppable segments (DLCP_CMSG_SEG_CLASS
#     and droppable_ppm), class 0 for control packets;
#   - skb->priority selects the prio band on the sending node (band
#     counters of dlcp-qos show), DSCP filters do on the router;
#   - on a rate-limited link a class 1 message sent after a large class 7
#     one arrives first;
#   - on a congested RED/ECN bottleneck the drops fall on droppable
#     segments, and the loss reports agree;
#   - ECN marking slows the sender: queueing delay (ping) stays bounded,
#     and a TCP flow sharing the bottleneck gets its share;
#   - bad input: EINVAL and EPERM cases of classes.
#
# Topology (10 Mbit/s bottleneck on the router's eth1 where needed):
#   ns_ps 10.78.1.2 --- 10.78.1.1 ns_pr 10.78.2.1 --- 10.78.2.2 ns_pd

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

PRIO=$SELFTEST_DIR/dlcp_prio
QOS=$REPO_DIR/tc-scripts/dlcp-qos
IMPAIR=$REPO_DIR/tc-scripts/impair
S=10.78.1.2
D=10.78.2.2
RATE=10mbit
RATE_MBIT=10
port=7300
tmpdir=
seg=

cleanup()
{
	ns_delete ns_ps ns_pr ns_pd
	[ -n "$tmpdir" ] && rm -rf "$tmpdir"
}

setup()
{
	local m

	modprobe -q veth 2> /dev/null
	for m in sch_prio sch_ets sch_red sch_tbf cls_u32; do
		modprobe -q "$m" 2> /dev/null
	done
	ns_create ns_ps ns_pr ns_pd || return 1
	ip -n ns_ps link add eth0 type veth peer name eth0 netns ns_pr || return 1
	ip -n ns_pd link add eth0 type veth peer name eth1 netns ns_pr || return 1
	ip -n ns_ps addr add "$S/24" dev eth0 || return 1
	ip -n ns_pr addr add 10.78.1.1/24 dev eth0 || return 1
	ip -n ns_pr addr add 10.78.2.1/24 dev eth1 || return 1
	ip -n ns_pd addr add "$D/24" dev eth0 || return 1
	ip -n ns_ps link set eth0 up && ip -n ns_pd link set eth0 up &&
	ip -n ns_pr link set eth0 up && ip -n ns_pr link set eth1 up || return 1
	ip -n ns_ps route add default via 10.78.1.1 || return 1
	ip -n ns_pd route add default via 10.78.2.1 || return 1
	ip netns exec ns_pr sysctl -qw net.ipv4.ip_forward=1 || return 1
	ip netns exec ns_ps ping -c 1 -W 5 "$D" > /dev/null || return 1
	seg=$(ip netns exec ns_ps "$PRIO" segsize --to "$D") || return 1
	echo "segment size $seg"
	# the router's queues, its netem and the capture count packets: a
	# super-packet forwarded whole would be one, so the sender sends
	# packet by packet (super-packets are dlcp_gso.sh's)
	ip netns exec ns_ps sysctl -qw net.dlcp.gso=0 || return 1
	# DLCP_PRIO_SENDER_SYSCTLS="rto_min_ms=50 ...": diagnostics only
	for m in ${DLCP_PRIO_SENDER_SYSCTLS:-}; do
		ip netns exec ns_ps sysctl -w "net.dlcp.$m" || return 1
	done
}

reset_all()
{
	local ns

	for ns in ns_ps ns_pd; do
		tc -n "$ns" qdisc del dev eth0 root 2> /dev/null
		ip netns exec "$ns" sysctl -qw net.dlcp.class_dscp="56 48 40 32 24 16 8 0"
		ip netns exec "$ns" sysctl -qw net.dlcp.layer_width=1
		ip netns exec "$ns" sysctl -qw net.dlcp.ecn=1
		ip netns exec "$ns" sysctl -qw net.dlcp.droppable_ppm=0
	done
	tc -n ns_pr qdisc del dev eth1 root 2> /dev/null
	tc -n ns_pr qdisc del dev eth0 root 2> /dev/null
	return 0
}

# start_recv OUT ARGS...: a receiver in ns_pd writing to OUT ($rpid)
start_recv()
{
	local out=$1
	shift

	port=$((port + 1))
	rm -f "$tmpdir/ready"
	ip netns exec ns_pd timeout 40 "$PRIO" recv --port "$port" \
		--ready "$tmpdir/ready" "$@" > "$out" &
	rpid=$!
	wait_for_file "$tmpdir/ready" 20 "$rpid" || fail "receiver did not start"
}

send()
{
	ip netns exec ns_ps timeout 40 "$PRIO" send --to "$D" --port "$port" "$@"
}

# field FILE KEY: values of KEY=... on "msg" lines
field()
{
	awk -v k="$2" '{ for (i = 1; i <= NF; i++) if (index($i, k "=") == 1)
		print substr($i, length(k) + 2) }' "$1"
}

# qos_show NS DEV FILE: dlcp-qos show, printed and kept in FILE
qos_show()
{
	ip netns exec "$1" "$QOS" show "$2" > "$3"
	cat "$3"
}

# band_pkts FILE BAND: sent packets of a band in a dlcp-qos show output
band_pkts()
{
	awk -v b="$2" '$1 == b && $2 != "qdisc" { print $3; found = 1 }
		END { if (!found) print -1 }' "$1"
}

# qos_total FILE COLUMN: sum of a column of a dlcp-qos show output
qos_total()
{
	awk -v c="$2" '$1 ~ /^[0-9]+$/ && NF >= 10 { s += $c } END { print s + 0 }' "$1"
}

# counters NS "NAME...": "NAME=value ..." of a namespace
counters()
{
	local ns=$1 out="" n
	local -a names

	read -r -a names <<< "$2"
	ip netns exec "$ns" cat /proc/net/dlcp/snmp > "$tmpdir/snmp"
	for n in "${names[@]}"; do
		out+="$n=$(awk -v n="$n" '$1 == n { print $2 }' "$tmpdir/snmp") "
	done
	echo "$out"
}

# delta "BEFORE" "AFTER": per-counter differences of two counters() lines
delta()
{
	awk -v a="$1" -v b="$2" 'BEGIN { n = split(a, x, " "); split(b, y, " ");
		for (i = 1; i <= n; i++) { split(x[i], p, "="); split(y[i], q, "=");
			printf "%s+%d ", p[1], q[2] - p[2] } print "" }'
}

SCNT="DlcpOutDataPkts DlcpRetransPkts DlcpRetransReported DlcpRetransTimeout DlcpReportsRcvd DlcpOutErrors"
RCNT="DlcpInDataPkts DlcpInDupPkts DlcpInLatePkts DlcpReportsSent DlcpInMsgsLossy"

# ------------------------------------------------------------------ cases

case_qos_script()
{
	local a b rc=0

	ip netns exec ns_pr "$QOS" setup eth1 --rate "$RATE" || return 1
	a=$(tc -n ns_pr qdisc show dev eth1; tc -n ns_pr filter show dev eth1 parent d1c1:)
	ip netns exec ns_pr "$QOS" setup eth1 --rate "$RATE" || return 1
	b=$(tc -n ns_pr qdisc show dev eth1; tc -n ns_pr filter show dev eth1 parent d1c1:)
	echo "$a"
	[ "$a" = "$b" ] || { echo "FAIL: setup twice differs:"; echo "$b"; rc=1; }
	[ "$(grep -c '^qdisc red' <<< "$a")" -eq 8 ] || fail "not 8 red bands" || rc=1
	[ "$(grep -c 'flowid' <<< "$a")" -eq 8 ] || fail "not 8 DSCP filters" || rc=1
	grep -q 'priomap 7 6 5 4 3 2 1 0 7 7 7 7 7 7 7 7' <<< "$a" ||
		fail "priomap" || rc=1
	ip netns exec ns_pr "$QOS" show eth1 || rc=1
	ip netns exec ns_pr "$QOS" setup eth1 --bands 4 --ets --no-red || rc=1
	tc -n ns_pr qdisc show dev eth1 | grep -q 'ets.*priomap 3 3 3 3 3 2 1 0' ||
		fail "ets 4 bands priomap" || rc=1
	ip netns exec ns_pr "$QOS" teardown eth1 || rc=1
	tc -n ns_pr qdisc show dev eth1 | grep -q 'd1c' && fail "teardown left qdiscs" && rc=1
	ip netns exec ns_pr "$QOS" teardown eth1 | grep -q nothing || rc=1
	if ip netns exec ns_pr "$QOS" setup nosuchdev 2> "$tmpdir/err"; then
		fail "setup of a missing device succeeded"
		rc=1
	fi
	cat "$tmpdir/err"
	grep -q "no such device" "$tmpdir/err" || rc=1
	tc -n ns_pr qdisc add dev eth1 root handle 5: pfifo
	if ip netns exec ns_pr "$QOS" setup eth1 2> "$tmpdir/err"; then
		fail "replaced a foreign qdisc without --force"
		rc=1
	fi
	cat "$tmpdir/err"
	ip netns exec ns_pr "$QOS" setup eth1 --force > /dev/null || rc=1
	ip netns exec ns_pr "$QOS" teardown eth1 > /dev/null || rc=1
	return $rc
}

# one message of each kind; the capture in ns_pd sees data and reports
case_tagging_on_wire()
{
	local tdpid out=$tmpdir/tag.txt rc=0 bad

	command -v tcpdump > /dev/null || { echo "no tcpdump"; return "$KSFT_SKIP"; }
	ip netns exec ns_pd tcpdump -i eth0 -n -s 128 -B 8192 -U --immediate-mode -w "$tmpdir/tag.pcap" \
		"ip proto 253" 2> "$tmpdir/tcpdump.err" &
	tdpid=$!
	capture_ready "$tmpdir/tcpdump.err" "$tdpid" || return 1
	start_recv "$tmpdir/tag.recv" --count 7 --seg "$seg" || return 1
	# layers 0, 3, 20 -> classes 1, 4, 7; explicit 2 and 0; droppables
	send --msg "size=$((seg * 10)),layer=0,tensor=100" \
		--msg "size=$((seg * 10)),layer=3,tensor=200" \
		--msg "size=$((seg * 10)),layer=20,tensor=300" \
		--msg "size=$((seg * 10)),prio=2,layer=6,tensor=400" \
		--msg "size=$((seg * 10)),prio=0,tensor=500" \
		--msg "size=$((seg * 20)),layer=5,half,segclass,seg=$seg,tensor=600" \
		--msg "size=$((seg * 20)),layer=5,half,droppable=500000,seg=$seg,tensor=700" \
		> /dev/null || { echo "FAIL: sender"; rc=1; }
	wait "$rpid" || { echo "FAIL: receiver"; rc=1; }
	cat "$tmpdir/tag.recv"
	sleep 0.5
	kill "$tdpid"
	wait "$tdpid"
	"$PRIO" pcap "$tmpdir/tag.pcap" | tee "$out" || return 1
	# every data packet: DSCP = (7 - class) * 8; ECN by importance
	bad=$(awk '/type=DATA/ { split($3, c, "="); split($4, d, "=");
		if (d[2] != (7 - c[2]) * 8) print }' "$out")
	[ -z "$bad" ] || { echo "FAIL: DSCP != class_dscp[class]: $bad"; rc=1; }
	grep -E 'type=DATA .*droppable=0' "$out" | grep -vq 'ecn=ECT0 ' &&
		{ echo "FAIL: important data not ECT(0)"; rc=1; }
	grep -E 'type=DATA .*droppable=1' "$out" | grep -vq 'ecn=NotECT ' &&
		{ echo "FAIL: droppable data not Not-ECT"; rc=1; }
	# 10 + 10 droppable segments (odd ones of two 20-segment messages),
	# first transmissions (a loaded host may retransmit some)
	[ "$(awk '/type=DATA/ && /droppable=1/ && / rtx=0 / { split($NF, n, "="); s += n[2] }
		END { print s + 0 }' "$out")" -eq 20 ] ||
		{ echo "FAIL: expected 20 droppable data packets"; rc=1; }
	for c in 0 1 2 4 6 7; do
		grep -q "type=DATA class=$c " "$out" ||
			{ echo "FAIL: no data of class $c"; rc=1; }
	done
	grep -E 'type=(REPORT|STOP)' "$out" |
		grep -vq 'dscp=56 ecn=ECT0 ' &&
		{ echo "FAIL: REPORT/STOP not CS7 / ECT(0)"; rc=1; }
	# PROBE and ABORT go in their message's class, behind its data (a
	# tail loss probe can come from any message on a slow host)
	bad=$(awk '/type=DATA/ { split($4, d, "="); dscp[d[2]] = 1 }
		/type=(PROBE|ABORT)/ { split($4, d, "=");
			if (!(d[2] in dscp) || !/ecn=ECT0 /) print }' "$out")
	[ -z "$bad" ] ||
		{ echo "FAIL: PROBE/ABORT not in a data class, ECT(0): $bad"; rc=1; }
	grep -qE 'type=(REPORT|STOP)' "$out" || { echo "FAIL: no control packets seen"; rc=1; }
	grep -q 'bad=[1-9]' "$tmpdir/tag.recv" && { echo "FAIL: corrupt data"; rc=1; }
	return $rc
}

# a changed class_dscp and layer_width show on the wire
case_tagging_sysctls()
{
	local tdpid out=$tmpdir/tag2.txt rc=0

	command -v tcpdump > /dev/null || return "$KSFT_SKIP"
	ip netns exec ns_ps sysctl -qw net.dlcp.class_dscp="48 46 34 26 18 10 8 0" || return 1
	ip netns exec ns_ps sysctl -qw net.dlcp.layer_width=4 || return 1
	ip netns exec ns_pd tcpdump -i eth0 -n -s 128 -B 8192 -U --immediate-mode -w "$tmpdir/tag2.pcap" \
		"ip proto 253" 2> "$tmpdir/tcpdump2.err" &
	tdpid=$!
	capture_ready "$tmpdir/tcpdump2.err" "$tdpid" || return 1
	start_recv "$tmpdir/tag2.recv" --count 2 || return 1
	# layer 9 / width 4 -> class 1 + 2 = 3 -> DSCP 26; layer 3 -> class 1
	send --msg "size=$((seg * 4)),layer=9" --msg "size=$((seg * 4)),layer=3" \
		> /dev/null || { echo "FAIL: sender"; rc=1; }
	wait "$rpid" || { echo "FAIL: receiver"; rc=1; }
	sleep 0.5
	kill "$tdpid"
	wait "$tdpid"
	"$PRIO" pcap "$tmpdir/tag2.pcap" | tee "$out" || return 1
	grep -q 'type=DATA class=3 dscp=26 ecn=ECT0 droppable=0 rtx=0 crit=0 n=4' "$out" ||
		{ echo "FAIL: layer 9 not class 3 / DSCP 26"; rc=1; }
	grep -q 'type=DATA class=1 dscp=46 ecn=ECT0 droppable=0 rtx=0 crit=0 n=4' "$out" ||
		{ echo "FAIL: layer 3 not class 1 / DSCP 46 (EF)"; rc=1; }
	return $rc
}

# retransmissions of critical data go in class 0, other retransmissions
# stay in their class; PROBEs go in their message's class (10% loss on the
# router)
case_tagging_retransmissions()
{
	local tdpid out=$tmpdir/tag3.txt rc=0

	command -v tcpdump > /dev/null || return "$KSFT_SKIP"
	ip netns exec ns_pr "$IMPAIR" eth1 --loss 10 || return 1
	ip netns exec ns_pd tcpdump -i eth0 -n -s 128 -B 8192 -U --immediate-mode -w "$tmpdir/tag3.pcap" \
		"ip proto 253" 2> "$tmpdir/tcpdump3.err" &
	tdpid=$!
	capture_ready "$tmpdir/tcpdump3.err" "$tdpid" || return 1
	start_recv "$tmpdir/tag3.recv" --count 2 || return 1
	send --msg "size=$((seg * 60)),prio=5,crit" \
		--msg "size=$((seg * 60)),prio=5,budget=20000" \
		> /dev/null || { echo "FAIL: sender"; rc=1; }
	wait "$rpid" || { echo "FAIL: receiver"; rc=1; }
	cat "$tmpdir/tag3.recv"
	sleep 0.5
	kill "$tdpid"
	wait "$tdpid"
	"$PRIO" pcap "$tmpdir/tag3.pcap" | tee "$out" || return 1
	grep -q 'type=DATA .*rtx=1 crit=1' "$out" ||
		{ echo "FAIL: no retransmission of critical data seen"; rc=1; }
	grep 'type=DATA .*rtx=1 crit=1' "$out" | grep -vq 'dscp=56 ecn=ECT0 ' &&
		{ echo "FAIL: critical retransmission not in class 0 (CS7)"; rc=1; }
	grep -E 'type=DATA .*(rtx=0|crit=0)' "$out" | grep -vq 'dscp=16 ' &&
		{ echo "FAIL: first transmissions or non-critical retransmissions not in class 5 (CS2)"; rc=1; }
	grep -q 'type=PROBE' "$out" || echo "(no PROBE captured)"
	# a PROBE follows its message's data in the message's class, so
	# that it cannot overtake that data in a strict-priority queue
	grep 'type=PROBE' "$out" | grep -vq 'dscp=16 ecn=ECT0 ' &&
		{ echo "FAIL: PROBE not in its message's class 5 (CS2)"; rc=1; }
	return $rc
}

# skb->priority picks the band on the sending node (no DSCP filters), and
# DSCP on the router, where skb->priority is lost
case_bands_priority_and_dscp()
{
	local rc=0 c n r extra

	# a tail loss probe or a resend on a loaded host goes in its
	# message's band too: at most that many extra packets
	extra=$(($(snmp ns_ps DlcpProbesSent) + $(snmp ns_ps DlcpRetransPkts)))
	ip netns exec ns_ps "$QOS" setup eth0 --no-dscp > /dev/null || return 1
	ip netns exec ns_pd "$QOS" setup eth0 --no-dscp > /dev/null || return 1
	ip netns exec ns_pr "$QOS" setup eth1 > /dev/null || return 1
	start_recv "$tmpdir/band.recv" --count 3 || return 1
	send --msg "size=$((seg * 20)),prio=1" --msg "size=$((seg * 30)),prio=3" \
		--msg "size=$((seg * 40)),prio=6" > /dev/null ||
		{ echo "FAIL: sender"; rc=1; }
	wait "$rpid" || { echo "FAIL: receiver"; rc=1; }
	echo "sender egress (skb->priority only):"
	qos_show ns_ps eth0 "$tmpdir/q.s"
	echo "router egress (DSCP filters):"
	qos_show ns_pr eth1 "$tmpdir/q.r"
	echo "receiver egress (skb->priority only):"
	qos_show ns_pd eth0 "$tmpdir/q.d"
	extra=$(($(snmp ns_ps DlcpProbesSent) + $(snmp ns_ps DlcpRetransPkts) - extra))
	echo "probes and resends: $extra"
	for c in 1:20 3:30 6:40; do
		n=$(band_pkts "$tmpdir/q.s" "${c%:*}")
		r=$(band_pkts "$tmpdir/q.r" "${c%:*}")
		echo "class ${c%:*}: sender band $n, router band $r, want ${c#*:}"
		if [ "$n" -lt "${c#*:}" ] || [ "$n" -gt $((${c#*:} + extra)) ]; then
			echo "FAIL: sender band ${c%:*}"
			rc=1
		fi
		if [ "$r" -lt "${c#*:}" ] || [ "$r" -gt $((${c#*:} + extra)) ]; then
			echo "FAIL: router band ${c%:*}"
			rc=1
		fi
	done
	# and nothing else in a DLCP band (7 also has ARP)
	n=0
	for c in 0 1 2 3 4 5 6; do
		n=$((n + $(band_pkts "$tmpdir/q.s" $c)))
	done
	[ "$n" -eq $((90 + extra)) ] ||
		{ echo "FAIL: sender sent $n packets, not 90 + $extra"; rc=1; }
	# the receiver's reports and stops: class 0, skb->priority 7, band 0
	n=$(band_pkts "$tmpdir/q.d" 0)
	[ "$n" -ge 3 ] || { echo "FAIL: receiver's control packets not in band 0 ($n)"; rc=1; }
	for c in 1 2 3 4 5 6; do
		[ "$(band_pkts "$tmpdir/q.d" $c)" -eq 0 ] ||
			{ echo "FAIL: receiver sent in band $c"; rc=1; }
	done
	return $rc
}

# order OUT: tensor ids of the receiver's lines in arrival order
order() { field "$1" tensor | tr '\n' ' '; }

# a class 1 message sent 200 ms after a big class 7 one arrives first
case_priority_two_sockets()
{
	local rc=0 spid o

	ip netns exec ns_pr "$QOS" setup eth1 --rate "$RATE" > /dev/null || return 1
	start_recv "$tmpdir/p2.recv" --count 2 || return 1
	send --msg "size=2097152,prio=7,tensor=7" > "$tmpdir/p2.s7" &
	spid=$!
	sleep 0.2
	send --msg "size=65536,prio=1,tensor=1" > "$tmpdir/p2.s1" ||
		{ echo "FAIL: class 1 sender"; rc=1; }
	wait "$spid" || { echo "FAIL: class 7 sender"; rc=1; }
	wait "$rpid" || { echo "FAIL: receiver"; rc=1; }
	cat "$tmpdir/p2.recv"
	qos_show ns_pr eth1 "$tmpdir/q.r"
	o=$(order "$tmpdir/p2.recv")
	[ "$o" = "1 7 " ] || { echo "FAIL: arrival order $o, want 1 7"; rc=1; }
	return $rc
}

case_priority_same_socket()
{
	local rc=0 o

	ip netns exec ns_pr "$QOS" setup eth1 --rate "$RATE" > /dev/null || return 1
	start_recv "$tmpdir/p1.recv" --count 2 || return 1
	send --msg "size=2097152,prio=7,tensor=7" \
		--msg "size=65536,prio=1,tensor=1,gap=200" ||
		{ echo "FAIL: sender"; rc=1; }
	wait "$rpid" || { echo "FAIL: receiver"; rc=1; }
	cat "$tmpdir/p1.recv"
	o=$(order "$tmpdir/p1.recv")
	[ "$o" = "1 7 " ] || { echo "FAIL: arrival order $o, want 1 7"; rc=1; }
	return $rc
}

# congestion drops fall on droppable (Not-ECT) segments; CLASS of the data
# (default 6, below the class 0 of the PROBE that ends the first pass)
case_selective_drop()
{
	local rc=0 imp drop lost slost bad early marked pdrop s0 r0 cls=${1:-6}

	ip netns exec ns_pr "$QOS" setup eth1 --rate "$RATE" > /dev/null || return 1
	s0=$(counters ns_ps "$SCNT")
	r0=$(counters ns_pd "$RCNT")
	start_recv "$tmpdir/sd.recv" --count 6 --seg "$seg" || return 1
	# 6 x 400 segments, odd ones droppable, loss budget 50%
	send --msg "size=$((seg * 400)),prio=$cls,budget=500000,half,segclass,seg=$seg,count=6,tensor=1" \
		> "$tmpdir/sd.send" || { echo "FAIL: sender"; rc=1; }
	wait "$rpid" || { echo "FAIL: receiver"; rc=1; }
	qos_show ns_pr eth1 "$tmpdir/q.r"
	tail -n 1 "$tmpdir/sd.recv"
	echo "sender:   $(delta "$s0" "$(counters ns_ps "$SCNT")")"
	echo "receiver: $(delta "$r0" "$(counters ns_pd "$RCNT")")"
	imp=$(grep '^msg' "$tmpdir/sd.recv" | field /dev/stdin lost_imp | awk '{ s += $1 } END { print s + 0 }')
	drop=$(grep '^msg' "$tmpdir/sd.recv" | field /dev/stdin lost_drop | awk '{ s += $1 } END { print s + 0 }')
	lost=$(grep '^msg' "$tmpdir/sd.recv" | field /dev/stdin lost | awk '{ s += $1 } END { print s + 0 }')
	bad=$(grep '^msg' "$tmpdir/sd.recv" | field /dev/stdin bad | awk '{ s += $1 } END { print s + 0 }')
	slost=$(grep '^completion' "$tmpdir/sd.send" | field /dev/stdin lost | awk '{ s += $1 } END { print s + 0 }')
	early=$(qos_total "$tmpdir/q.r" 7)
	marked=$(qos_total "$tmpdir/q.r" 6)
	pdrop=$(qos_total "$tmpdir/q.r" 8)
	echo "lost at receiver $lost (important $imp, droppable $drop), at sender $slost; bad $bad"
	echo "router: marked $marked, early drops $early, limit drops $pdrop"
	echo "sender: $(grep -c '^completion' "$tmpdir/sd.send") completions"
	[ "$imp" -eq 0 ] || { echo "FAIL: $imp important bytes delivered as lost"; rc=1; }
	[ "$bad" -eq 0 ] || { echo "FAIL: $bad corrupt bytes"; rc=1; }
	[ "$lost" -eq $((imp + drop)) ] || { echo "FAIL: lost ranges != bytes_lost"; rc=1; }
	[ "$lost" -eq "$slost" ] || { echo "FAIL: sender and receiver disagree on the loss"; rc=1; }
	[ $((early + pdrop)) -gt 0 ] || { echo "FAIL: the bottleneck dropped nothing: not congested"; rc=1; }
	# RED drops only Not-ECT packets ("early"); "pdrop" is a full band
	[ "$pdrop" -eq 0 ] || { echo "FAIL: $pdrop packets dropped by a full queue, ECT or not"; rc=1; }
	echo "segments delivered as lost: $(((lost + seg - 1) / seg)); packets the router dropped: $((early + pdrop))"
	return $rc
}

# the same with the data in class 0, the class of the PROBE: nothing
# overtakes the data, so whatever the receiver misses was really dropped
case_selective_drop_class0()
{
	case_selective_drop 0
}

# ping_stats FILE: "avg max" RTT in ms of a ping output
ping_stats()
{
	awk -F'[=/ ]+' '/time=/ { for (i = 1; i <= NF; i++) if ($i == "time") {
		v = $(i + 1); s += v; n++; if (v > m) m = v } }
		END { if (n) printf "%.1f %.1f %d\n", s / n, m, n; else print "999 999 0" }' "$1"
}

# ECN marks hold the queue: ping RTT through the bottleneck stays bounded
case_ecn_queue_bound()
{
	local rc=0 avg max n mbit marked pdrop base s0 r0

	ip netns exec ns_pr "$QOS" setup eth1 --rate "$RATE" > /dev/null || return 1
	s0=$(counters ns_ps "$SCNT")
	r0=$(counters ns_pd "$RCNT")
	base=$(ip netns exec ns_ps ping -c 5 -i 0.2 "$D" | tee "$tmpdir/ping0" > /dev/null; ping_stats "$tmpdir/ping0")
	echo "idle RTT avg/max ms: $base"
	start_recv "$tmpdir/ecn.recv" --seconds 14 || return 1
	send --timeout 15 --seconds 6 --outstanding 2 \
		--msg "size=1048576,prio=7" > "$tmpdir/ecn.send" &
	sleep 2
	ip netns exec ns_ps ping -c 16 -i 0.25 "$D" > "$tmpdir/ping1"
	wait
	tail -n 1 "$tmpdir/ecn.send"
	read -r avg max n <<< "$(ping_stats "$tmpdir/ping1")"
	mbit=$(awk '/^total/ { for (i = 1; i <= NF; i++) if ($i ~ /^mbit=/) print substr($i, 6) }' "$tmpdir/ecn.recv")
	qos_show ns_pr eth1 "$tmpdir/q.r"
	marked=$(qos_total "$tmpdir/q.r" 6)
	pdrop=$(qos_total "$tmpdir/q.r" 5)
	tail -n 1 "$tmpdir/ecn.recv"
	echo "sender:   $(delta "$s0" "$(counters ns_ps "$SCNT")")"
	echo "receiver: $(delta "$r0" "$(counters ns_pd "$RCNT")")"
	echo "under load: RTT avg $avg ms max $max ms ($n replies); DLCP goodput $mbit Mbit/s of $RATE_MBIT"
	echo "router: CE marked $marked, dropped $pdrop"
	# RED's max threshold is 31250 bytes: 25 ms at 10 Mbit/s
	awk -v a="$avg" 'BEGIN { exit !(a < 40) }' ||
		{ echo "FAIL: average RTT $avg ms >= 40 ms"; rc=1; }
	[ "$n" -ge 12 ] || { echo "FAIL: only $n of 16 pings answered"; rc=1; }
	[ "$marked" -gt 0 ] || { echo "FAIL: nothing CE-marked"; rc=1; }
	awk -v m="${mbit:-0}" -v r="$RATE_MBIT" 'BEGIN { exit !(m >= 0.5 * r) }' ||
		{ echo "FAIL: goodput $mbit Mbit/s < half the link"; rc=1; }
	return $rc
}

# a TCP flow and a DLCP flow share the bottleneck (same band, class 7)
case_tcp_coexistence()
{
	local rc=0 tcp_mbit dlcp_mbit tpid s0

	ip netns exec ns_pr "$QOS" setup eth1 --rate "$RATE" > /dev/null || return 1
	rm -f "$tmpdir/tready"
	ip netns exec ns_pd timeout 30 "$PRIO" tcp-recv --port 5201 --seconds 8 \
		--ready "$tmpdir/tready" > "$tmpdir/tcp.recv" &
	tpid=$!
	wait_for_file "$tmpdir/tready" 10 "$tpid" || return 1
	s0=$(counters ns_ps "$SCNT")
	start_recv "$tmpdir/share.recv" --seconds 10 || return 1
	ip netns exec ns_ps timeout 30 "$PRIO" tcp-send --to "$D" --port 5201 --seconds 9 &
	send --timeout 15 --seconds 7 --outstanding 2 \
		--msg "size=524288,prio=7" > /dev/null &
	wait
	tcp_mbit=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^mbit=/) print substr($i, 6) }' "$tmpdir/tcp.recv")
	dlcp_mbit=$(awk '/^total/ { for (i = 1; i <= NF; i++) if ($i ~ /^mbit=/) print substr($i, 6) }' "$tmpdir/share.recv")
	qos_show ns_pr eth1 "$tmpdir/q.r"
	echo "sender:   $(delta "$s0" "$(counters ns_ps "$SCNT")")"
	echo "TCP $tcp_mbit Mbit/s, DLCP $dlcp_mbit Mbit/s over $RATE_MBIT Mbit/s"
	awk -v t="${tcp_mbit:-0}" -v r="$RATE_MBIT" 'BEGIN { exit !(t >= 0.2 * r) }' ||
		{ echo "FAIL: TCP starved (< 20% of the link)"; rc=1; }
	awk -v d="${dlcp_mbit:-0}" -v r="$RATE_MBIT" 'BEGIN { exit !(d >= 0.2 * r) }' ||
		{ echo "FAIL: DLCP starved (< 20% of the link)"; rc=1; }
	return $rc
}

case_bad_input()
{
	local rc=0

	ip netns exec ns_ps "$PRIO" errors --to "$D" || rc=1
	if command -v capsh > /dev/null; then
		ip netns exec ns_ps capsh --drop=cap_net_admin -- -c \
			"'$PRIO' errors --to '$D' --unpriv" || rc=1
	elif command -v setpriv > /dev/null; then
		ip netns exec ns_ps setpriv --inh-caps=-net_admin \
			--bounding-set=-net_admin "$PRIO" errors --to "$D" --unpriv || rc=1
	else
		echo "no capsh or setpriv: EPERM not checked"
		return "$KSFT_SKIP"
	fi
	return $rc
}

CASES=(
	qos_script
	tagging_on_wire
	tagging_sysctls
	tagging_retransmissions
	bands_priority_and_dscp
	priority_two_sockets
	priority_same_socket
	selective_drop
	selective_drop_class0
	ecn_queue_bound
	tcp_coexistence
	bad_input
)

require_root
# DLCP_PRIO_CASES="case ...": run only these
read -r -a CASES <<< "${DLCP_PRIO_CASES:-${CASES[*]}}"
ktap_header "${#CASES[@]}"
if ! dlcp_loaded || [ ! -x "$PRIO" ]; then
	for c in "${CASES[@]}"; do
		ktap_result "$c" 1 "module not loaded or $PRIO not built"
	done
	ktap_finished
	exit "$KSFT_FAIL"
fi
tmpdir=$(mktemp -d) || exit "$KSFT_FAIL"
trap cleanup EXIT
if ! setup_log=$(setup 2>&1); then
	ktap_print_msg "$setup_log"
	for c in "${CASES[@]}"; do
		ktap_result "$c" 1 "setup failed"
	done
	ktap_finished
	exit "$KSFT_FAIL"
fi
seg=$(ip netns exec ns_ps "$PRIO" segsize --to "$D")
ktap_print_msg "$setup_log"

for c in "${CASES[@]}"; do
	start=$SECONDS
	run_case "$c" "case_$c"
	echo "# $c: $((SECONDS - start)) s"
	reset_all
done
ktap_finished
