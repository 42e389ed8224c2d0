#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DLCP observability: every trace event of TRACE_SYSTEM dlcp fires during
# a lossy transfer (and a drop), and /proc/net/dlcp/sockets lists a bound
# socket with its port and queued memory.
#
# Topology: ns_s (10.77.2.2) <-- veth, netem loss 5% --> ns_r (10.77.2.1)

# cleanup, setup and case_* are called by name from ktap_main:
# shellcheck disable=SC2317
true

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

LOSS=$SELFTEST_DIR/dlcp_loss
TRACING=/sys/kernel/tracing
EVENTS=(dlcp_msg_send dlcp_msg_complete dlcp_msg_done dlcp_pkt_send
	dlcp_pkt_recv dlcp_retransmit dlcp_drop dlcp_stop dlcp_cwnd)
tmpdir=

cleanup()
{
	if [ -e "$TRACING/events/dlcp/enable" ]; then
		echo 0 > "$TRACING/events/dlcp/enable"
	fi
	ns_delete ns_s ns_r
}

setup()
{
	need_exec "$LOSS" || return 1
	[ -e "$TRACING/events/dlcp/enable" ] || fail "no $TRACING" || return 1
	modprobe -q veth 2> /dev/null
	modprobe -q sch_netem 2> /dev/null
	ns_create ns_s ns_r || return 1
	ip -n ns_s link add eth0 type veth peer name eth0 netns ns_r || return 1
	ip -n ns_s addr add 10.77.2.2/24 dev eth0 || return 1
	ip -n ns_r addr add 10.77.2.1/24 dev eth0 || return 1
	ip -n ns_s link set eth0 up && ip -n ns_r link set eth0 up || return 1
	tc -n ns_s qdisc add dev eth0 root netem loss 5% &&
	tc -n ns_r qdisc add dev eth0 root netem loss 5% &&
	run_traced
}

# A lossy transfer with the trace events on; a send to a port nobody bound.
run_traced()
{
	local rpid

	echo > "$TRACING/trace"
	echo 1 > "$TRACING/events/dlcp/enable" || return 1
	ip netns exec ns_r timeout 60 "$LOSS" recv --port 7300 --count 2 \
		--size 262144 --budget 0 --ready "$tmpdir/ready" &
	rpid=$!
	wait_for_file "$tmpdir/ready" 20 "$rpid" || return 1
	# the socket table shows the bound receiver: port 7300 = 0x1C84
	ip netns exec ns_r cat /proc/net/dlcp/sockets > "$tmpdir/sockets"
	ip netns exec ns_s timeout 60 "$LOSS" send --to 10.77.2.1 --port 7300 \
		--count 2 --size 262144 --budget 0 --expect-completion exact ||
		return 1
	wait "$rpid" || return 1
	# nobody listens on 7301: the receiver drops it (DlcpDropNoSocket)
	ip netns exec ns_s timeout 10 "$LOSS" send --to 10.77.2.1 --port 7301 \
		--count 1 --size 100 --budget 0 > /dev/null 2>&1 &
	sleep 1
	echo 0 > "$TRACING/events/dlcp/enable"
	cp "$TRACING/trace" "$tmpdir/trace"
	kill %% 2> /dev/null
	wait
	return 0
}

case_events_fire()
{
	local e rc=0

	for e in "${EVENTS[@]}"; do
		if grep -q " $e: " "$tmpdir/trace"; then
			echo "$e: $(grep -c " $e: " "$tmpdir/trace") events," \
				"e.g. $(grep -m1 " $e: " "$tmpdir/trace" |
					sed 's/.* '"$e"': //')"
		else
			echo "FAIL: no $e event"
			rc=1
		fi
	done
	grep -q 'dlcp_drop: reason=DlcpDropNoSocket' "$tmpdir/trace" ||
		{ echo "FAIL: no drop event with reason DlcpDropNoSocket"; rc=1; }
	return "$rc"
}

case_socket_table()
{
	cat "$tmpdir/sockets"
	head -1 "$tmpdir/sockets" | grep -q 'local_address' ||
		fail "no header line" || return 1
	grep -qE '^ +[0-9]+: 00000000:1C84 00000000:0000 07 ' \
		"$tmpdir/sockets" || fail "bound socket on port 7300 not listed"
}

CASES=(events_fire socket_table)

ktap_main "${CASES[@]}"
