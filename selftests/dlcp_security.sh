#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DLCP security properties, checked by selftests/dlcp_sec:
#
#  - delivery: a message reaches only the socket bound to its destination
#    address and port (not one on another address or port, not a wildcard
#    socket of another port), and nobody when nobody bound them;
#  - namespaces: sockets on the same address and port in two namespaces
#    each get only their own namespace's traffic; a raw socket in one never
#    sees the other's packets; /proc/net/dlcp/sockets and
#    /proc/net/dlcp/snmp show only the namespace's own; sysctls are per
#    namespace (a write in one leaves the other's value; UDP mode, i.e. the
#    UDP port, can be on in both at once);
#  - the wire: every packet of transfers (with loss: REPORTs with gaps and
#    retransmissions), PROBEs and ABORTs, native and inside UDP, captured
#    with a raw socket, has the exact length its headers say, a valid
#    checksum (natively, or the pseudo-header sum that checksum offload
#    leaves for the device), reserved fields zero and, for DATA, exactly the
#    application's bytes: nothing uninitialised leaves the host;
#  - user space: recvmsg() data, msg_name, DLCP_CMSG_RECV/LOST, the error
#    queue's completions, getsockopt() and getsockname()/getpeername(),
#    all into buffers pre-filled with 0xAA: reserved fields and sin_zero
#    zero, nothing written past what the kernel reports.
#
# Each case runs in namespaces of its own (lo only).

# cleanup, setup and case_* are called by name from ktap_main:
# shellcheck disable=SC2317
true

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

SEC=$SELFTEST_DIR/dlcp_sec
tmpdir=

cleanup()
{
	ns_delete ns_sec1 ns_sec2
	return 0
}

setup()
{
	need_exec "$SEC" || return 1
	modprobe -q sch_netem 2> /dev/null
	ns_create ns_sec1 ns_sec2 || return 1
	# lo's 64 KiB MTU would make every message a few packets
	ip -n ns_sec1 link set lo mtu 1500
}

in1() { ip netns exec ns_sec1 "$@"; }

case_delivery_by_port_and_address()
{
	in1 "$SEC" deliver
}

case_netns_isolation()
{
	local rc=0 a b

	"$SEC" nsiso ns_sec1 ns_sec2 || rc=1
	# sysctls: a write in one namespace leaves the other's value
	a=$(ip netns exec ns_sec1 sysctl -n net.dlcp.msg_timeout_ms) || return 1
	ip netns exec ns_sec2 sysctl -qw net.dlcp.msg_timeout_ms=$((a + 1234)) ||
		return 1
	b=$(ip netns exec ns_sec1 sysctl -n net.dlcp.msg_timeout_ms)
	echo "msg_timeout_ms: ns_sec1 $a -> $b after ns_sec2 wrote $((a + 1234))"
	[ "$a" = "$b" ] || { echo "FAIL: ns_sec2's write changed ns_sec1's value"; rc=1; }
	[ "$(ip netns exec ns_sec2 sysctl -n net.dlcp.msg_timeout_ms)" = $((a + 1234)) ] ||
		{ echo "FAIL: ns_sec2's write did not stick"; rc=1; }
	# UDP mode on in both: each namespace has its own UDP port
	for n in ns_sec1 ns_sec2; do
		ip netns exec "$n" sysctl -qw net.dlcp.encap=1 ||
			{ echo "FAIL: net.dlcp.encap=1 in $n"; rc=1; }
	done
	for n in ns_sec1 ns_sec2; do
		ip netns exec "$n" sysctl -qw net.dlcp.encap=0
	done
	return "$rc"
}

# wire_case MODE [LOSS%]: MODE native or --udp
wire_case()
{
	local mode=$1 loss=${2:-} rc=0 timeout noport
	local -a udp=()

	[ "$mode" = --udp ] && udp=(--udp)
	[ -n "$loss" ] && udp+=(--lossy)
	# ABORTs within the case's time: a short message timeout, and no STOP
	# for the port nobody bound, which would end the message at once;
	# both restored
	timeout=$(in1 sysctl -n net.dlcp.msg_timeout_ms) || return 1
	noport=$(in1 sysctl -n net.dlcp.noport_rate) || return 1
	in1 sysctl -qw net.dlcp.msg_timeout_ms=3000 || return 1
	in1 sysctl -qw net.dlcp.noport_rate=0 || return 1
	if [ -n "$loss" ]; then
		in1 tc qdisc add dev lo root netem loss "$loss%" || return 1
	fi
	in1 timeout 120 "$SEC" wire "${udp[@]}" || rc=1
	[ -z "$loss" ] || in1 tc qdisc del dev lo root
	in1 sysctl -qw net.dlcp.msg_timeout_ms="$timeout"
	in1 sysctl -qw net.dlcp.noport_rate="$noport"
	return "$rc"
}

case_wire_native_clean() { wire_case native; }
case_wire_native_lossy() { wire_case native 10; }
case_wire_udp_lossy() { wire_case --udp 10; }

case_user_buffers()
{
	local rc=0

	# loss, so that some messages arrive lossy (DLCP_CMSG_LOST)
	in1 tc qdisc add dev lo root netem loss 10% || return 1
	in1 timeout 120 "$SEC" user || rc=1
	in1 tc qdisc del dev lo root
	return "$rc"
}

CASES=(
	delivery_by_port_and_address
	netns_isolation
	wire_native_clean
	wire_native_lossy
	wire_udp_lossy
	user_buffers
)

ktap_main "${CASES[@]}"
