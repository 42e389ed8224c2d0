#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dlcp-perf, the benchmark tool of make bench (docs/bench.md): DLCP in
# native and UDP mode, TCP, incast (--senders), a server read by several
# threads and DLCP without ACK messages (--no-ack) each move every message
# and report it in their JSON; bad options, a refused TCP connection and a
# DLCP server that never answers end with their documented exit status
# and a hint.
#
#   ns_pa 10.77.30.1 --veth-- 10.77.30.2 ns_pb

# cleanup, setup and case_* are called by name from ktap_main:
# shellcheck disable=SC2317
true

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

PERF=$REPO_DIR/userspace/perf/dlcp-perf
PY=/usr/bin/python3
B=10.77.30.2
tmpdir=

# stop_servers: kill the servers the cases started and wait until they
# are gone: a live server holds its DLCP socket, and with it the module
stop_servers()
{
	[ -n "$tmpdir" ] && kill_pidfile "$tmpdir/servers"
	return 0
}

cleanup()
{
	stop_servers
	ns_delete ns_pa ns_pb
	[ -n "$tmpdir" ] && rm -rf "$tmpdir"
	return 0
}

setup()
{
	need_exec "$PERF" || return 1
	need_exec "$PY" || return 1
	tmpdir=$(mktemp -d) || return 1
	modprobe -q veth 2> /dev/null
	ns_create ns_pa ns_pb || return 1
	ip -n ns_pa link add eth0 type veth peer name eth0 netns ns_pb &&
	ip -n ns_pa addr add 10.77.30.1/24 dev eth0 &&
	ip -n ns_pb addr add "$B/24" dev eth0 &&
	ip -n ns_pa link set eth0 up && ip -n ns_pb link set eth0 up
}

after_case()
{
	stop_servers
}

# server PORT ARGS...: dlcp-perf server in ns_pb, in the background
server()
{
	local port=$1 spid

	shift
	ip netns exec ns_pb "$PERF" server --port "$port" "$@" \
		> "$tmpdir/server.out" 2>&1 &
	spid=$!
	echo "$spid" >> "$tmpdir/servers"
	sleep 0.5
	kill -0 "$spid" 2> /dev/null || {
		cat "$tmpdir/server.out"
		fail "the server did not start"
	}
}

# check_json FILE LINES MESSAGES SIZE IDS: FILE holds LINES client reports
# of MESSAGES messages of SIZE bytes each, nothing lost, ids as listed
check_json()
{
	"$PY" - "$@" << 'EOF'
import json, sys
path, lines, msgs, size, ids = sys.argv[1:6]
reps = [json.loads(l) for l in open(path) if l.strip()]
assert len(reps) == int(lines), f"{len(reps)} reports, want {lines}"
for r in reps:
    assert r["role"] == "client", r
    assert r["messages"] == int(msgs), f"id {r['id']}: {r['messages']} messages"
    assert r["bytes"] == int(msgs) * int(size), f"id {r['id']}: {r['bytes']} bytes"
    assert r["bytes_lost"] == 0 and r["failed_msgs"] == 0, r
    assert r["goodput_mbps"] > 0, r
    ct = r["ct_ms"]
    assert 0 < ct["p50"] <= ct["p99"] <= ct["max"], ct
got = sorted(r["id"] for r in reps)
want = sorted(int(i) for i in ids.split(","))
assert got == want, f"ids {got}, want {want}"
print(f"{len(reps)} report(s): " + ", ".join(
    f"id {r['id']} {r['messages']} msgs p50 {r['ct_ms']['p50']:.1f} ms"
    for r in reps))
EOF
}

# client ARGS...: dlcp-perf client in ns_pa, reports in $tmpdir/c.json
client()
{
	ip netns exec ns_pa timeout 60 "$PERF" client "$B" --json "$@" \
		> "$tmpdir/c.json" 2> "$tmpdir/c.err"
	local rc=$?

	[ "$rc" -eq 0 ] || { cat "$tmpdir/c.err"; echo "client exit $rc"; }
	return "$rc"
}

case_dlcp_native()
{
	local udp

	udp=$(snmp ns_pa DlcpUdpOutPkts)
	server 5401 --proto dlcp || return 1
	client --port 5401 --proto dlcp --size 64k --count 20 --encap native --id 5 ||
		return 1
	check_json "$tmpdir/c.json" 1 20 65536 5 || return 1
	[ "$(snmp ns_pa DlcpUdpOutPkts)" -eq "$udp" ] ||
		fail "--encap native sent UDP packets"
}

case_dlcp_udp()
{
	local udp

	udp=$(snmp ns_pa DlcpUdpOutPkts)
	server 5402 --proto dlcp --encap udp || return 1
	client --port 5402 --proto dlcp --size 64k --count 20 --encap udp --id 5 ||
		return 1
	check_json "$tmpdir/c.json" 1 20 65536 5 || return 1
	# 20 x 64 KiB at MTU 1500: at least 900 data packets inside UDP
	[ $(($(snmp ns_pa DlcpUdpOutPkts) - udp)) -ge 900 ] ||
		fail "--encap udp: $(($(snmp ns_pa DlcpUdpOutPkts) - udp)) UDP packets"
}

case_tcp()
{
	server 5403 --proto tcp || return 1
	client --port 5403 --proto tcp --size 64k --count 20 --id 5 || return 1
	check_json "$tmpdir/c.json" 1 20 65536 5
}

case_incast_senders()
{
	server 5404 --proto dlcp || return 1
	client --port 5404 --proto dlcp --size 32k --count 10 --senders 3 \
		--id 7 || return 1
	check_json "$tmpdir/c.json" 3 10 32768 7,8,9
}

case_incast_senders_tcp()
{
	server 5405 --proto tcp || return 1
	client --port 5405 --proto tcp --size 32k --count 10 --senders 3 \
		--id 1 || return 1
	check_json "$tmpdir/c.json" 3 10 32768 1,2,3
}

# --threads: four threads read the server's one socket (as the TCP server
# has a thread a connection, for make bench's cases of four sockets);
# every message of four senders arrives once, and the summary that
# SIGTERM prints counts them all
case_server_threads()
{
	local spid

	server 5407 --proto dlcp --threads 4 || return 1
	spid=$(tail -1 "$tmpdir/servers")
	client --port 5407 --proto dlcp --size 256k --concurrency 4 \
		--count 40 --senders 4 --id 1 || return 1
	check_json "$tmpdir/c.json" 4 40 262144 1,2,3,4 || return 1
	kill -TERM "$spid"
	wait "$spid"
	cat "$tmpdir/server.out"
	grep -q "^server: 160 messages, 41943040 bytes" "$tmpdir/server.out" ||
		fail "the server's summary does not count 160 messages"
	if ip netns exec ns_pb "$PERF" server --proto tcp --threads 2 \
		> /dev/null 2> "$tmpdir/err"; then
		fail "server --proto tcp --threads 2 started"
	fi
	grep -q "DLCP option" "$tmpdir/err" ||
		fail "server --proto tcp --threads: $(head -1 "$tmpdir/err")"
}

# --no-ack: the server sends no ACK messages and the client counts each
# message done at its completion; a client that waits for ACKs from such
# a server gives up with a hint
case_no_ack()
{
	local in0 spid

	in0=$(snmp ns_pa DlcpInMsgs)
	server 5408 --proto dlcp --no-ack || return 1
	spid=$(tail -1 "$tmpdir/servers")
	client --port 5408 --proto dlcp --no-ack --size 64k --concurrency 8 \
		--count 50 --id 3 || return 1
	check_json "$tmpdir/c.json" 1 50 65536 3 || return 1
	grep -q '"ct_mode":"completion"' "$tmpdir/c.json" ||
		fail "no ct_mode completion in the report" || return 1
	[ "$(snmp ns_pa DlcpInMsgs)" -eq "$in0" ] ||
		fail "the client received $(($(snmp ns_pa DlcpInMsgs) - in0)) messages" ||
		return 1
	kill -TERM "$spid"
	wait "$spid"
	grep -q "^server: 50 messages" "$tmpdir/server.out" ||
		fail "server: $(cat "$tmpdir/server.out")" || return 1
	server 5408 --proto dlcp --no-ack || return 1
	expect_exit 1 "no ACK" "$B" --port 5408 --proto dlcp --size 1k \
		--count 1 --timeout 2 || return 1
	expect_exit 2 "DLCP options" "$B" --proto tcp --size 1k --count 1 \
		--no-ack
}

# Incast of first messages: 8 fresh sockets send 256 KiB each at once
# through a 30 Mbit/s bottleneck with a 128 KB queue (make bench's
# scenario 5). Their first windows (8 x 32 segments) overflow the queue;
# a sender whose whole window was lost has no round-trip sample yet.
# Every message must finish near the 560 ms the link needs for all eight:
# the receiver answers the first packet of a message at once (an RTT
# sample), and a timeout presumes the whole window lost, not one segment
# per doubling RTO (which kept such a message 2.5-3 s, in about half of
# the runs).
case_incast_first_messages()
{
	local i max worst=0 rc=0

	ip netns exec ns_pa ethtool -K eth0 tso off gso off > /dev/null 2>&1
	tc -n ns_pa qdisc replace dev eth0 root handle 1: netem delay 0.5ms &&
	tc -n ns_pa qdisc add dev eth0 parent 1:1 handle 10: tbf rate 30mbit \
		burst 64k limit 128k || return 1
	server 5406 --proto dlcp || rc=1
	for i in 1 2 3 4; do
		[ "$rc" -eq 0 ] || break
		client --port 5406 --proto dlcp --size 256k --count 1 \
			--senders 8 || { rc=1; break; }
		max=$("$PY" -c 'import json, sys
print(int(max(json.loads(l)["ct_ms"]["max"] for l in open(sys.argv[1]) if l.strip())))' "$tmpdir/c.json") || { rc=1; break; }
		echo "round $i: the last of 8 first messages after $max ms"
		((max > worst)) && worst=$max
	done
	tc -n ns_pa qdisc del dev eth0 root
	[ "$rc" -eq 0 ] || return 1
	[ "$worst" -lt "$(tscale 1500)" ] ||
		fail "a first message took $worst ms (bound 560 ms)"
}

# expect_exit RC PATTERN ARGS...: the client exits RC saying PATTERN
expect_exit()
{
	local want=$1 pat=$2 rc

	shift 2
	ip netns exec ns_pa timeout 60 "$PERF" client "$@" \
		> /dev/null 2> "$tmpdir/err"
	rc=$?
	echo "dlcp-perf client $*: exit $rc: $(head -1 "$tmpdir/err")"
	[ "$rc" -eq "$want" ] || fail "exit $rc, want $want"
	grep -q -- "$pat" "$tmpdir/err" || fail "no \"$pat\" in the message"
}

case_errors()
{
	expect_exit 2 "bad --encap" "$B" --proto dlcp --size 1k --count 1 \
		--encap gre || return 1
	expect_exit 2 "DLCP options" "$B" --proto tcp --size 1k --count 1 \
		--encap udp || return 1
	expect_exit 2 "--senders: '0' is not" "$B" --proto dlcp --size 1k --count 1 \
		--senders 0 || return 1
	expect_exit 1 "refused" "$B" --port 5409 --proto tcp --size 1k \
		--count 1 || return 1
	# nobody on the DLCP port: no ACK within --timeout
	expect_exit 1 "dlcp-perf server" "$B" --port 5409 --proto dlcp \
		--size 1k --count 1 --timeout 2
}

CASES=(dlcp_native dlcp_udp tcp incast_senders incast_senders_tcp
       server_threads no_ack incast_first_messages errors)

ktap_main "${CASES[@]}"
