#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dlcpstat -S and -P: during a transfer over a path delayed 50 ms each way,
# the sockets and destinations of each namespace as sock_diag lists them
# (the sender's message, segments in flight, window, round-trip time; the
# receiver's bound socket), the same sockets from /proc/net/dlcp, no
# socket of the other namespace, JSON; after the transfer, no socket.
#
# Topology: dstat_s (10.77.9.2) <-- veth, netem delay 50ms --> dstat_r
# (10.77.9.1); the receiver binds port 7390 (any address).

# cleanup, setup and case_* are called by name from ktap_main:
# shellcheck disable=SC2317
true

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

LOSS=$SELFTEST_DIR/dlcp_loss
DLCPSTAT=$REPO_DIR/userspace/tools/dlcpstat
# long enough for the six snapshots below, on a slow (debug) kernel too
SIZE=$(($(tscale 8) << 20))
tmpdir=

cleanup()
{
	kill_pidfile "$tmpdir/pids" 2> /dev/null
	ns_delete dstat_s dstat_r
}

# dstat NS ARGS...: dlcpstat in namespace NS
dstat()
{
	local ns=$1
	shift
	"$DLCPSTAT" -N "$ns" "$@"
}

# The sender's destination once a round trip was measured with segments in
# flight: a line of dlcpstat -P with Inflight and Srtt not zero.
in_flight()
{
	dstat dstat_s -P --netlink 2> /dev/null |
		awk 'NR > 1 && $4 > 0 && $7 != "-" { ok = 1 } END { exit !ok }'
}

setup()
{
	local i

	need_exec "$LOSS" || return 1
	need_exec "$DLCPSTAT" || return 1
	modprobe -q veth 2> /dev/null
	modprobe -q sch_netem 2> /dev/null
	ns_create dstat_s dstat_r || return 1
	ip -n dstat_s link add eth0 type veth peer name eth0 netns dstat_r ||
		return 1
	ip -n dstat_s addr add 10.77.9.2/24 dev eth0 || return 1
	ip -n dstat_r addr add 10.77.9.1/24 dev eth0 || return 1
	ip -n dstat_s link set eth0 up && ip -n dstat_r link set eth0 up ||
		return 1
	tc -n dstat_s qdisc add dev eth0 root netem delay 50ms limit 100000 &&
	tc -n dstat_r qdisc add dev eth0 root netem delay 50ms limit 100000 ||
		return 1

	ip netns exec dstat_r timeout "$(tscale 120)" "$LOSS" recv --port 7390 \
		--count 1 --size "$SIZE" --budget 0 --ready "$tmpdir/ready" \
		> "$tmpdir/recv.log" 2>&1 &
	echo $! >> "$tmpdir/pids"
	wait_for_file "$tmpdir/ready" 20 || fail "receiver not ready" ||
		return 1
	ip netns exec dstat_s timeout "$(tscale 120)" "$LOSS" send \
		--to 10.77.9.1 --port 7390 --count 1 --size "$SIZE" --budget 0 \
		--expect-completion exact --timeout "$(tscale 100)" \
		> "$tmpdir/send.log" 2>&1 &
	echo $! > "$tmpdir/sender.pid"
	echo $! >> "$tmpdir/pids"
	for ((i = 0; i < 300; i++)); do
		in_flight && break
		sleep 0.1
	done
	in_flight || fail "no segments in flight with an RTT: $(dstat dstat_s -P)" ||
		return 1

	# one snapshot of everything, taken while the message is on its way
	dstat dstat_s -S --netlink > "$tmpdir/s.nl" &&
	dstat dstat_s -P --netlink > "$tmpdir/s.peers" &&
	dstat dstat_s -S --proc > "$tmpdir/s.proc" &&
	dstat dstat_s -S -j > "$tmpdir/s.json" &&
	dstat dstat_r -S --netlink > "$tmpdir/r.nl" &&
	dstat dstat_r -S --proc > "$tmpdir/r.proc" || return 1

	# then the end of the transfer
	wait "$(cat "$tmpdir/sender.pid")" ||
		fail "transfer failed: $(cat "$tmpdir/send.log")" || return 1
	dstat dstat_s -S --netlink > "$tmpdir/s.after" || return 1
	return 0
}

# inodes FILE: the Inode column of a dlcpstat -S output, sorted
inodes()
{
	awk 'NR > 1 { print $NF }' "$1" | sort
}

case_sender_socket()
{
	cat "$tmpdir/s.nl"
	[ "$(awk 'NR > 1' "$tmpdir/s.nl" | wc -l)" = 1 ] ||
		fail "not one socket in the sender's namespace" || return 1
	# State Recv-Q Send-Q Local Peer Out In Flight Cwnd Srtt Peers Uid Inode
	awk -v size="$SIZE" 'NR == 2 {
		bad = ""
		if ($3 < size) bad = bad " Send-Q<" size
		if ($6 != 1) bad = bad " Out!=1"
		if ($8 <= 0) bad = bad " Flight=0"
		if ($9 <= 0) bad = bad " Cwnd=0"
		if ($10 == "-" || $10 < 90 || $10 > 5000) bad = bad " Srtt"
		if ($11 != 1) bad = bad " Peers!=1"
		if (bad != "") { print "FAIL:" bad; exit 1 }
	}' "$tmpdir/s.nl"
}

case_sender_peer()
{
	cat "$tmpdir/s.peers"
	# Local Peer Msgs Inflight Cwnd Ssthresh Srtt Rttvar MinRtt Rto Reo
	awk 'NR > 1 && $2 == "10.77.9.1" {
		found = 1
		bad = ""
		if ($3 != 1) bad = bad " Msgs!=1"
		if ($4 <= 0) bad = bad " Inflight=0"
		if ($5 <= 0) bad = bad " Cwnd=0"
		if ($7 < 90 || $7 > 5000) bad = bad " Srtt"
		if ($9 == "-" || $9 < 90) bad = bad " MinRtt"
		if ($10 < $7) bad = bad " Rto<Srtt"
		if (bad != "") { print "FAIL:" bad; exit 1 }
	}
	END { if (!found) { print "FAIL: no line for 10.77.9.1"; exit 1 } }' \
		"$tmpdir/s.peers"
}

case_receiver_socket()
{
	cat "$tmpdir/r.nl"
	grep -qE '^UNCONN +[0-9]+ +0 +\*:7390 +\*:\* ' "$tmpdir/r.nl" ||
		fail "receiver bound to port 7390 not listed"
}

# /proc/net/dlcp lists the same sockets; its columns are fewer
case_proc_same_sockets()
{
	local f

	cat "$tmpdir/s.proc"
	for f in s r; do
		[ "$(inodes "$tmpdir/$f.nl")" = "$(inodes "$tmpdir/$f.proc")" ] ||
			fail "$f: sock_diag and /proc disagree" || return 1
	done
	awk 'NR == 2 && $8 != "-" { exit 1 }' "$tmpdir/s.proc" ||
		fail "a Flight column from /proc"
}

case_namespaces_apart()
{
	local s r

	s=$(inodes "$tmpdir/s.nl")
	r=$(inodes "$tmpdir/r.nl")
	[ -n "$s" ] && [ -n "$r" ] || fail "a namespace without sockets" ||
		return 1
	[ -z "$(comm -12 <(echo "$s") <(echo "$r"))" ] ||
		fail "a socket listed in both namespaces"
}

case_json()
{
	cat "$tmpdir/s.json"
	python3 - "$tmpdir/s.json" "$SIZE" <<'EOF'
import json, sys

d = json.load(open(sys.argv[1]))
assert d["source"] == "netlink", d["source"]
(s,) = d["sockets"]
assert s["family"] == "inet" and s["out_msgs"] == 1, s
assert s["snd_mem"] >= int(sys.argv[2]), s["snd_mem"]
(p,) = s["peers"]
assert p["peer"] == "10.77.9.1" and p["srtt_us"] >= 90000, p
assert p["cwnd"] > 0 and p["rto_us"] >= p["srtt_us"], p
EOF
}

case_gone_after_close()
{
	cat "$tmpdir/s.after"
	[ "$(wc -l < "$tmpdir/s.after")" = 1 ] ||
		fail "the sender's socket is still listed after it exited"
}

CASES=(sender_socket sender_peer receiver_socket proc_same_sockets
       namespaces_apart json gone_after_close)

# The cases read sock_diag (--netlink): none can run on a kernel without it.
if dlcp_loaded && ! have_inet_diag; then
	require_root
	ktap_header "${#CASES[@]}"
	ktap_skip_all "kernel without inet_diag (CONFIG_INET_DIAG)" "${CASES[@]}"
fi

ktap_main "${CASES[@]}"
