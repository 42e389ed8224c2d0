#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DLCP path MTU: the sender's link has MTU 1500 but the router's link to
# the receiver only 1280. The first full-size segments draw ICMP
# "fragmentation needed" (DLCP sends with DF); the module lowers the path
# MTU, re-cuts the messages in flight, and the transfer completes
# byte-identical. No packet over the MTU is ever sent.
#
#   ns_s 10.77.3.2 --(1500)-- 10.77.3.1 ns_rt 10.77.4.1 --(1280)-- 10.77.4.2 ns_r

# cleanup, setup and case_* are called by name from ktap_main:
# shellcheck disable=SC2317
true

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

LOSS=$SELFTEST_DIR/dlcp_loss
tmpdir=

cleanup()
{
	ns_delete ns_s ns_rt ns_r
	return 0
}

setup()
{
	need_exec "$LOSS" || return 1
	modprobe -q veth 2> /dev/null
	ns_create ns_s ns_rt ns_r || return 1
	ip -n ns_s link add eth0 type veth peer name s0 netns ns_rt &&
	ip -n ns_r link add eth0 type veth peer name r0 netns ns_rt || return 1
	ip -n ns_s addr add 10.77.3.2/24 dev eth0 &&
	ip -n ns_rt addr add 10.77.3.1/24 dev s0 &&
	ip -n ns_rt addr add 10.77.4.1/24 dev r0 &&
	ip -n ns_r addr add 10.77.4.2/24 dev eth0 || return 1
	ip -n ns_rt link set r0 mtu 1280 && ip -n ns_r link set eth0 mtu 1280 ||
		return 1
	for l in "ns_s eth0" "ns_rt s0" "ns_rt r0" "ns_r eth0"; do
		read -r ns dev <<< "$l"
		ip -n "$ns" link set "$dev" up || return 1
	done
	ip -n ns_s route add default via 10.77.3.1 &&
	ip -n ns_r route add default via 10.77.4.1 &&
	ip netns exec ns_rt sysctl -qw net.ipv4.ip_forward=1
}

case_pmtu_lowers_segments()
{
	local rpid pmtu reseg rc=0

	pmtu=$(snmp ns_s DlcpPmtuUpdates)
	reseg=$(snmp ns_s DlcpResegmented)
	ip netns exec ns_r timeout 120 "$LOSS" recv --port 7400 --count 3 \
		--size 1048576 --budget 0 --expect exact \
		--ready "$tmpdir/ready" &
	rpid=$!
	wait_for_file "$tmpdir/ready" 20 "$rpid" || return 1
	ip netns exec ns_s timeout 120 "$LOSS" send --to 10.77.4.2 \
		--port 7400 --count 3 --size 1048576 --budget 0 \
		--expect-completion exact || { echo "FAIL: sender"; rc=1; }
	wait "$rpid" || { echo "FAIL: receiver"; rc=1; }
	echo "DlcpPmtuUpdates +$(($(snmp ns_s DlcpPmtuUpdates) - pmtu))," \
		"DlcpResegmented +$(($(snmp ns_s DlcpResegmented) - reseg))"
	ip -n ns_s route get 10.77.4.2 | head -2
	[ $(($(snmp ns_s DlcpPmtuUpdates) - pmtu)) -ge 1 ] ||
		{ echo "FAIL: no ICMP fragmentation needed handled"; rc=1; }
	ip -n ns_s route get 10.77.4.2 | grep -q 'mtu 1280' ||
		{ echo "FAIL: the route's PMTU was not lowered"; rc=1; }
	return "$rc"
}

CASES=(pmtu_lowers_segments)

ktap_main "${CASES[@]}"
