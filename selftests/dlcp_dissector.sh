#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The Wireshark dissector tools/wireshark/dlcp.lua against real traffic:
# two network namespaces joined by a veth pair exchange DLCP messages with
# userspace/tools/dlcp-cat (on a clean link, then with netem loss so that
# reports carry gaps and segments are retransmitted) while tcpdump captures
# the link; tshark with the Lua dissector must then decode every packet
# with the fields the senders used. Packets crafted with bad fields check
# the expert info, and dlcpstat -N reads the receiver namespace's counters.
#
#   dd_snd  veth0 10.78.0.2/24 <----> veth0 10.78.0.1/24  dd_rcv
#
# Runs as root in the test VM:
#   make module && make -C userspace/tools
#   tools/vm-run --insmod kmod/dlcp.ko -- selftests/dlcp_dissector.sh
# (it loads kmod/dlcp.ko itself when DLCP is not loaded, and builds
# userspace/tools when dlcp-cat is missing). KTAP on stdout; exit status 0
# only if every check passed.
#
# "--offline" runs only the crafted-packet check (no module, no root): it
# works on the host.

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

LUA=$REPO_DIR/tools/wireshark/dlcp.lua
TOOLS=$REPO_DIR/userspace/tools
CAT=$TOOLS/dlcp-cat
DLCPSTAT=$TOOLS/dlcpstat
RCV_ADDR=10.78.0.1
PORT=7000
NR_TESTS=16

# message sizes of the clean phase and of the lossy phase
SMALL=100
MEDIUM=65536
BUDGETED=20000
LOSSY=200000

export HOME=${HOME:-/tmp} TMPDIR=${TMPDIR:-/tmp}
tmpdir=
tcpdump_pid=

cleanup()
{
	[ -n "$tcpdump_pid" ] && kill "$tcpdump_pid" 2> /dev/null
	ns_delete dd_snd dd_rcv
	[ -n "$tmpdir" ] && rm -rf "$tmpdir"
}

# tshark_fields PCAP FIELD...: one tab-separated line per packet; several
# occurrences of a field are joined with ','.
tshark_fields()
{
	local pcap=$1 args=() fld
	shift

	for fld in "$@"; do
		args+=(-e "$fld")
	done
	tshark -n -X "lua_script:$LUA" -o udp.check_checksum:TRUE -r "$pcap" \
		-Y dlcp -T fields -E separator=/t -E occurrence=a -E aggregator=, "${args[@]}" \
		2> "$tmpdir/tshark.err"
}

# ------------------------------------------------------------------ offline

# Write a pcap (raw IPv4) of crafted packets, built from the wire format's
# header by dlcp_craft: 4 good ones, one of each fault, and the first in
# UDP. dlcp_craft checks each against the module's validator; the expected
# verdicts of the dissector are in check_crafted.
craft_pcap()
{
	"$SELFTEST_DIR/dlcp_craft" "$1" > "$tmpdir/craft.out" || {
		cat "$tmpdir/craft.out"
		return 1
	}
}

# Good packets must carry no expert info of warning level or above, each bad
# one an error (warning for the element alignment) with the right message.
check_crafted()
{
	local pcap=$tmpdir/crafted.pcap out want got i rc=0

	craft_pcap "$pcap" || return 1
	out=$(tshark_fields "$pcap" frame.number dlcp.type \
		_ws.expert.severity _ws.expert.message dlcp.checksum.status \
		dlcp.payload_len dlcp.gso_segs) || {
		cat "$tmpdir/tshark.err"
		return 1
	}
	echo "$out"
	want=(
		[5]="Bad checksum"
		[6]="Unknown DLCP version"
		[7]="Unknown packet type"
		[8]="Unknown header flags"
		[9]="Payload empty or past the end of the message"
		[10]="Report gaps malformed"
		[11]="Header words too small"
		[12]="Length field disagrees"
		[13]="Message length zero"
		[14]="Segment does not hold whole elements"
	)
	[ "$(wc -l <<< "$out")" -eq 16 ] || {
		echo "expected 16 decoded packets"
		return 1
	}
	for i in 1 2 3 4 15 16; do
		got=$(awk -F'\t' -v n="$i" '$1 == n { print $3 }' <<< "$out")
		# 6291456 = warning, 8388608 = error
		if grep -qE '6291456|8388608' <<< "$got"; then
			echo "good packet $i has expert info: $got"
			rc=1
		fi
	done
	# the UDP-encapsulated packet decodes like packet 1, checksum and all
	got=$(awk -F'\t' '$1 == 15 { print $2, $5, $6 }' <<< "$out")
	if [ "$got" != "1 1 1428" ]; then
		echo "UDP-encapsulated packet: type, checksum status, payload: $got"
		rc=1
	fi
	# the super-packet: 3 packets of 100 bytes, its sum left unverified
	# (the pseudo-header's, for the device to complete)
	got=$(awk -F'\t' '$1 == 16 { print $2, $5, $6, $7 }' <<< "$out")
	if [ "$got" != "1 2 300 3" ]; then
		echo "super-packet: type, checksum status, payload, packets: $got"
		rc=1
	fi
	for i in "${!want[@]}"; do
		got=$(awk -F'\t' -v n="$i" '$1 == n { print $4 }' <<< "$out")
		if ! grep -qF "${want[$i]}" <<< "$got"; then
			echo "packet $i: expected \"${want[$i]}\", got \"$got\""
			rc=1
		fi
	done
	return $rc
}

if [ "${1:-}" = --offline ]; then
	trap cleanup EXIT
	tmpdir=$(mktemp -d) || exit 1
	ktap_header 1
	run_case "dissector.crafted_packets_expert_info" check_crafted
	ktap_finished
	exit $?
fi

# ---------------------------------------------------------------- the VM

require_root

setup()
{
	if ! dlcp_loaded; then
		insmod "${DLCP_KO:-$REPO_DIR/kmod/dlcp.ko}" || return 1
	fi
	if [ ! -x "$CAT" ] || [ ! -x "$DLCPSTAT" ]; then
		make -s -C "$TOOLS" > /dev/null || return 1
	fi
	command -v tshark > /dev/null || { echo "no tshark"; return 1; }
	command -v tcpdump > /dev/null || { echo "no tcpdump"; return 1; }
	modprobe -q veth 2> /dev/null
	modprobe -q sch_netem 2> /dev/null
	ns_create dd_snd dd_rcv || return 1
	ip -n dd_rcv link add veth0 type veth peer name veth0 netns dd_snd ||
		return 1
	ip -n dd_rcv addr add "$RCV_ADDR/24" dev veth0 || return 1
	ip -n dd_snd addr add 10.78.0.2/24 dev veth0 || return 1
	ip -n dd_rcv link set veth0 up || return 1
	ip -n dd_snd link set veth0 up || return 1
	# the checksums the dissector verifies: without the offload a veth
	# carries them unfilled, as it does TCP's
	ip netns exec dd_rcv ethtool -K veth0 tx off > /dev/null &&
	ip netns exec dd_snd ethtool -K veth0 tx off > /dev/null
}

# start_capture PCAP [FILTER]: tcpdump on the receiver's veth (native DLCP
# unless FILTER says otherwise) until stop_capture PCAP.
start_capture()
{
	ip netns exec dd_rcv tcpdump -i veth0 -s 2048 -B 16384 -U --immediate-mode -Z root -w "$1" \
		"${2:-ip proto 253}" 2> "$tmpdir/tcpdump.err" &
	tcpdump_pid=$!
	capture_ready "$tmpdir/tcpdump.err" "$tcpdump_pid"
}

stop_capture()
{
	local size=-1

	# let the last STOPs through, and tcpdump write what it has read: a
	# loaded emulator lags (received by filter > captured otherwise)
	for _ in $(seq 1 40); do
		sleep 0.5
		[ "$(stat -c %s "$1" 2> /dev/null)" = "$size" ] && break
		size=$(stat -c %s "$1" 2> /dev/null)
	done
	kill -INT "$tcpdump_pid" 2> /dev/null
	wait "$tcpdump_pid" 2> /dev/null
	tcpdump_pid=
	cat "$tmpdir/tcpdump.err"
}

# send ARGS...: dlcp-cat from the sender namespace, waiting for completions.
send()
{
	timeout 60 ip netns exec dd_snd "$CAT" -w -t 20 "$@" "$RCV_ADDR" "$PORT"
}

# Phase 1, clean link: three messages (one segment; 64 KiB of fp32 with
# metadata; a message with a loss budget, which sends a PROBE after its
# last new segment). Phase 2, 20% loss on the data path: 200000 bytes,
# packet by packet (GSO off: netem would drop a super-packet whole).
traffic()
{
	local rcv_pid rc=0

	start_capture "$tmpdir/dlcp.pcap" || return 1
	timeout 90 ip netns exec dd_rcv "$CAT" -l -p "$PORT" -c 4 -t 60 \
		> "$tmpdir/recv.txt" &
	rcv_pid=$!
	sleep 0.3
	send -s "$SMALL" -T 1 || rc=1
	send -s "$MEDIUM" -y fp32 -T 42 -I 7 -L 3 || rc=1
	send -s "$BUDGETED" -B 10000 -T 2 || rc=1
	ip netns exec dd_snd ethtool -K veth0 gso off > /dev/null || rc=1
	tc -n dd_snd qdisc add dev veth0 root netem loss 20% || rc=1
	send -s "$LOSSY" -T 3 || rc=1
	tc -n dd_snd qdisc del dev veth0 root
	ip netns exec dd_snd ethtool -K veth0 gso on > /dev/null
	wait "$rcv_pid" || rc=1
	stop_capture "$tmpdir/dlcp.pcap"
	echo "receiver:"
	cat "$tmpdir/recv.txt"
	tshark_fields "$tmpdir/dlcp.pcap" frame.number ip.src dlcp.type \
		dlcp.msg_id dlcp.msg_len dlcp.offset dlcp.payload_len \
		dlcp.flags dlcp.flags.retrans dlcp.checksum.status \
		dlcp.tensor_id dlcp.iteration dlcp.layer dlcp.dtype \
		dlcp.budget_ppm dlcp.report.ngaps dlcp.report.gap.start \
		dlcp.report.gap.end dlcp.report.scan_end _ws.expert.severity \
		_ws.expert.message > "$tmpdir/fields.tsv" || {
		cat "$tmpdir/tshark.err"
		return 1
	}
	echo "$(wc -l < "$tmpdir/fields.tsv") packets decoded"
	[ -s "$tmpdir/fields.tsv" ] || rc=1
	return $rc
}

# Columns of fields.tsv
#  1 frame  2 ip.src  3 type  4 msg_id  5 msg_len  6 offset  7 payload_len
#  8 flags  9 retrans  10 csum status  11 tensor  12 iteration  13 layer
#  14 dtype  15 budget  16 ngaps  17 gap starts  18 gap ends  19 scan_end
#  20 expert severities  21 expert messages
fields() { cat "$tmpdir/fields.tsv"; }

check_all_decoded()
{
	local total

	total=$(tshark -n -r "$tmpdir/dlcp.pcap" 2> /dev/null | wc -l)
	echo "captured $total packets, decoded $(fields | wc -l)"
	[ "$total" -gt 0 ] && [ "$(fields | wc -l)" -eq "$total" ] &&
	fields | awk -F'\t' '$3 < 1 || $3 > 5 { print "bad type:", $0; bad = 1 }
		END { exit bad }'
}

check_types()
{
	local t missing=0

	for t in 1:DATA 2:REPORT 3:STOP 4:PROBE; do
		if fields | awk -F'\t' -v t="${t%%:*}" '$3 == t { f = 1 }
				END { exit !f }'; then
			echo "${t#*:} present"
		else
			echo "${t#*:} missing"
			missing=1
		fi
	done
	return $missing
}

check_checksums()
{
	fields | awk -F'\t' '$10 != 1 { print "checksum status", $10, "in", $1;
		bad = 1 } END { exit bad }'
}

check_no_expert()
{
	# real traffic: at most notes (retransmissions), no warnings or errors
	fields | awk -F'\t' '$20 ~ /6291456|8388608/ { print; bad = 1 }
		END { exit bad }'
}

check_msg_len()
{
	local got want

	want=$(printf '%s\n' "$SMALL" "$MEDIUM" "$BUDGETED" "$LOSSY" | sort -n)
	got=$(fields | awk -F'\t' '$3 == 1 { print $5 }' | sort -nu)
	echo "message lengths in DATA packets: $(tr '\n' ' ' <<< "$got")"
	[ "$got" = "$want" ]
}

# The message ids in the capture are those the receiver reported.
check_msg_ids()
{
	local id ids rc=0

	ids=$(sed -n 's/.* msg_id=\([0-9]*\) .*/\1/p' "$tmpdir/recv.txt")
	[ "$(wc -w <<< "$ids")" -eq 4 ] || { echo "receiver: $ids"; return 1; }
	for id in $ids; do
		if ! fields | awk -F'\t' -v id="$id" '$3 == 1 {
				split($4, h, "x"); v = 0
				for (i = 1; i <= length(h[2]); i++)
					v = v * 16 + index("0123456789abcdef",
						substr(tolower(h[2]), i, 1)) - 1
				if (v == id) f = 1 } END { exit !f }'; then
			echo "msg_id $id not in the capture"
			rc=1
		fi
	done
	return $rc
}

# Every DATA offset is a multiple of the message's segment size (its largest
# payload), every segment but the one ending the message is full, and the
# distinct segments cover the message.
check_offsets()
{
	fields | awk -F'\t' '
		$3 == 1 {
			id = $4; len[id] = $5
			if ($7 > seg[id]) seg[id] = $7
			n[id]++; off[id, n[id]] = $6; pl[id, n[id]] = $7
		}
		END {
			for (id in len) {
				s = seg[id]; nseg = int((len[id] + s - 1) / s)
				split("", seen); cnt = 0
				for (i = 1; i <= n[id]; i++) {
					o = off[id, i]; p = pl[id, i]
					if (o % s) { print id, "offset", o, "not a multiple of", s; bad = 1 }
					if (p != s && o + p != len[id]) { print id, "short segment at", o; bad = 1 }
					if (!((o) in seen)) { seen[o] = 1; cnt++ }
				}
				printf "msg %s len %d seg %d: %d segments, %d packets\n", id, len[id], s, cnt, n[id]
				if (cnt != nseg) { print id, "covers", cnt, "of", nseg, "segments"; bad = 1 }
			}
			exit bad
		}'
}

check_metadata()
{
	fields | awk -F'\t' -v m="$MEDIUM" -v b="$BUDGETED" '
		$3 == 1 && $5 == m {
			if ($11 != 42 || $12 != 7 || $13 != 3 || $14 != 1 || $15 != 0) {
				print "64 KiB message:", $0; bad = 1 }
			seen_m = 1 }
		$3 == 1 && $5 == b {
			if ($15 != 10000 || $11 != 2) { print "budgeted:", $0; bad = 1 }
			seen_b = 1 }
		END { exit bad || !seen_m || !seen_b }'
}

# Under loss the reports carry gaps: well ordered, inside [0, scan_end),
# on segment boundaries.
check_gaps()
{
	fields | awk -F'\t' -v L="$LOSSY" '
		$3 == 1 && $5 == L && $7 > seg { seg = $7 }
		$3 == 2 && $5 == L && $16 > 0 { r[++n] = $0 }
		END {
			for (i = 1; i <= n; i++) {
				split(r[i], c, "\t")
				k = split(c[17], s, ","); split(c[18], e, ",")
				if (k != c[16]) { print "ngaps", c[16], "but", k, "gaps"; bad = 1 }
				prev = 0
				for (j = 1; j <= k; j++) {
					if (s[j] + 0 < prev || e[j] + 0 <= s[j] + 0 || e[j] + 0 > c[19] + 0) {
						print "bad gap", s[j], e[j], "in", r[i]; bad = 1 }
					if (s[j] % seg || (e[j] % seg && e[j] != L)) {
						print "gap off segment boundary", s[j], e[j]; bad = 1 }
					prev = e[j]; gaps++
				}
			}
			printf "%d reports with gaps, %d gaps\n", n, gaps
			exit bad || !n
		}'
}

check_retrans()
{
	fields | awk -F'\t' -v L="$LOSSY" '
		$3 == 1 && $5 == L && $9 == 1 { n++ }
		END { printf "%d retransmitted segments\n", n; exit !n }'
}

check_stops()
{
	fields | awk -F'\t' '
		$3 == 1 { data[$4] = 1 }
		$3 == 3 { stop[$4] = 1 }
		END { for (id in data) if (!(id in stop)) { print "no STOP for", id; bad = 1 }
		      exit bad }'
}

check_dlcpstat()
{
	local out

	out=$("$DLCPSTAT" -N dd_rcv -j DlcpInMsgs) || return 1
	echo "$out"
	[ "$out" = '{"dlcp":{"DlcpInMsgs":4}}' ] || return 1
	out=$(DLCPSTAT_HISTORY=$tmpdir/hist "$DLCPSTAT" -N dd_snd -d OutMsgs) ||
		return 1
	echo "$out"
	grep -qE '^DlcpOutMsgs +4$' <<< "$out" || return 1
	out=$(DLCPSTAT_HISTORY=$tmpdir/hist "$DLCPSTAT" -N dd_snd -d -z OutMsgs)
	echo "$out"
	grep -qE '^DlcpOutMsgs +0$' <<< "$out"
}

# UDP mode (net.dlcp.encap=1 at both ends), the checksums filled in on the
# way out (tx off, in setup): every packet has a UDP checksum, over IPv4
# too, and it is right, as is the DLCP checksum it was derived from.
check_udp_checksums()
{
	local pcap=$tmpdir/udp.pcap rcv_pid rc=0 out

	ip netns exec dd_snd sysctl -qw net.dlcp.encap=1 &&
	ip netns exec dd_rcv sysctl -qw net.dlcp.encap=1 || return 1
	start_capture "$pcap" "udp port 9253" || return 1
	timeout 60 ip netns exec dd_rcv "$CAT" -l -p "$PORT" -c 1 -t 30 \
		> /dev/null &
	rcv_pid=$!
	sleep 0.3
	send -s "$MEDIUM" || rc=1
	wait "$rcv_pid" || rc=1
	stop_capture "$pcap"
	out=$(tshark_fields "$pcap" frame.number dlcp.type udp.checksum \
		udp.checksum.status dlcp.checksum.status) || {
		cat "$tmpdir/tshark.err"
		return 1
	}
	awk -F'\t' '{ n[$2]++ } END { for (t in n) printf "type %s: %d packets\n", t, n[t] }' \
		<<< "$out"
	[ -n "$out" ] || { echo "no DLCP packet in UDP captured"; return 1; }
	awk -F'\t' '$3 == "0x0000" || $4 != 1 || $5 != 1 {
		print "frame", $1, "type", $2, "UDP checksum", $3, "status", $4,
		      "DLCP checksum status", $5; bad = 1 } END { exit bad }' \
		<<< "$out" || rc=1
	return $rc
}

trap cleanup EXIT
tmpdir=$(mktemp -d) || exit 1
ktap_header "$NR_TESTS"
run_case "dissector.crafted_packets_expert_info" check_crafted
if ! run_case "dissector.setup" setup ||
   ! run_case "dissector.traffic_captured" traffic; then
	for name in all_decoded types checksums no_expert msg_len msg_ids \
		    offsets metadata gaps retrans stops; do
		ktap_result "dissector.$name" "$KSFT_SKIP" "no capture"
	done
	ktap_result "dlcpstat.netns_and_delta" "$KSFT_SKIP" "no traffic"
	ktap_result "dissector.udp_checksums_good" "$KSFT_SKIP" "no capture"
	ktap_finished
	exit 1
fi
run_case "dissector.all_decoded" check_all_decoded
run_case "dissector.types_data_report_stop_probe" check_types
run_case "dissector.checksums_good" check_checksums
run_case "dissector.no_expert_warnings" check_no_expert
run_case "dissector.msg_len" check_msg_len
run_case "dissector.msg_ids_match_receiver" check_msg_ids
run_case "dissector.offsets_segment_multiples" check_offsets
run_case "dissector.metadata" check_metadata
run_case "dissector.report_gaps" check_gaps
run_case "dissector.retrans_flagged" check_retrans
run_case "dissector.stop_per_message" check_stops
run_case "dlcpstat.netns_and_delta" check_dlcpstat
run_case "dissector.udp_checksums_good" check_udp_checksums
ktap_finished
