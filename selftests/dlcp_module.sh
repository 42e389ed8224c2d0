#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DLCP module life cycle: the module cannot be unloaded while a DLCP socket
# is open (in any network namespace), unloads once they are closed, also
# right after sockets died with messages in flight, loads again (with its
# per-netns state set up in namespaces that already exist), honours the
# ipproto module parameter, and is loaded on demand by the first
# socket(AF_INET or AF_INET6, SOCK_DLCP, 0) through its module aliases.
#
# Unloads and reloads the module: run it last, with no other DLCP user.
# Leaves the module loaded (from $DLCP_KO, default kmod/dlcp.ko).

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

KO=${DLCP_KO:-$REPO_DIR/kmod/dlcp.ko}
tmpdir=

cleanup()
{
	release_holders
	ns_delete ns_mod
	[ -n "$tmpdir" ] && rm -rf "$tmpdir"
	# Never leave the module unloaded for whoever comes next.
	dlcp_loaded || dlcp_insmod "$KO" 2> /dev/null
}

# hold NAME [NETNS]: a process holding a bound DLCP socket open. The
# cases run in subshells, so the pids go to a file.
hold()
{
	local name=$1 ns=${2:-} ready=$tmpdir/$1.ready

	if [ -n "$ns" ]; then
		ip netns exec "$ns" "$XFER" hold --ready-file "$ready" &
	else
		"$XFER" hold --ready-file "$ready" &
	fi
	echo $! >> "$tmpdir/holders"
	wait_for_file "$ready" 20 "$!" || fail "holder $name did not start"
}

release_holders()
{
	[ -z "$tmpdir" ] || kill_pidfile "$tmpdir/holders"
}

loopback_xfer()
{
	local ns=$1 port=$2 ready=$tmpdir/xfer.$2 rpid rc=0

	ip netns exec "$ns" timeout 60 "$XFER" recv --port "$port" \
		--sizes 1,3000,200000 --timeout 30 --ready-file "$ready" &
	rpid=$!
	wait_for_file "$ready" 20 "$rpid" ||
		{ kill "$rpid"; wait "$rpid"; return 1; }
	ip netns exec "$ns" timeout 60 "$XFER" send --to 127.0.0.1 \
		--port "$port" --sizes 1,3000,200000 --timeout 30 || rc=1
	wait "$rpid" || rc=1
	return $rc
}

# ------------------------------------------------------------------ cases

case_loaded()
{
	local f

	for f in /proc/net/dlcp/snmp /proc/sys/net/dlcp/max_msg_size; do
		[ -e "$f" ] || { fail "$f missing"; return 1; }
	done
	echo "sysctls: $(cd /proc/sys/net/dlcp && echo ./*)"
	[ "$(cat /proc/sys/net/dlcp/max_msg_size)" = 67108864 ] ||
		fail "max_msg_size is not 64 MiB"
	ip netns exec ns_mod test -e /proc/net/dlcp/snmp ||
		fail "/proc/net/dlcp/snmp missing in a new netns"
}

case_rmmod_busy()
{
	local rc=0

	hold init || return 1
	if rmmod dlcp 2> "$tmpdir/err"; then
		fail "rmmod succeeded with a DLCP socket open"
		dlcp_insmod "$KO"
		return 1
	fi
	echo "rmmod: $(cat "$tmpdir/err")"
	grep -qiE 'in use|busy' "$tmpdir/err" ||
		{ fail "unexpected rmmod error"; rc=1; }
	dlcp_loaded || { fail "module gone after failed rmmod"; rc=1; }
	echo "refcount: $(cat /sys/module/dlcp/refcnt 2> /dev/null)"
	release_holders || rc=1
	return $rc
}

case_rmmod_busy_netns()
{
	hold netns ns_mod || return 1
	if rmmod dlcp 2> /dev/null; then
		fail "rmmod succeeded with a DLCP socket open in ns_mod"
		dlcp_insmod "$KO"
		return 1
	fi
	release_holders
}

case_rmmod_after_close()
{
	local rc=0

	hold init && hold netns ns_mod || return 1
	release_holders || return 1
	rmmod_retry dlcp 5 || { fail "rmmod after close failed"; return 1; }
	[ ! -e /proc/net/dlcp ] || { fail "/proc/net/dlcp still there"; rc=1; }
	[ ! -e /proc/sys/net/dlcp ] ||
		{ fail "/proc/sys/net/dlcp still there"; rc=1; }
	if "$XFER" hold --no-wait 2> /dev/null; then
		fail "DLCP socket created with the module unloaded"
		rc=1
	fi
	dlcp_insmod "$KO" || { fail "insmod $KO failed"; return 1; }
	return $rc
}

case_reload_existing_netns()
{
	# ns_mod existed before this load: its per-netns state must be set up.
	ip netns exec ns_mod test -e /proc/net/dlcp/snmp ||
		{ fail "/proc/net/dlcp/snmp missing in ns_mod"; return 1; }
	ip netns exec ns_mod test -e /proc/sys/net/dlcp/max_msg_size ||
		{ fail "net.dlcp sysctls missing in ns_mod"; return 1; }
	loopback_xfer ns_mod 7100
}

case_rmmod_after_inflight()
{
	local rpid spid ready=$tmpdir/inflight

	# Kill both ends in the middle of a 16 MiB message: close with
	# messages in flight, timers pending; then the module must unload
	# cleanly (the VM runner fails the run on any kernel warning).
	ip netns exec ns_mod "$XFER" recv --port 7200 --sizes 16m,16m \
		--timeout 30 --ready-file "$ready" --quiet > /dev/null 2>&1 &
	rpid=$!
	wait_for_file "$ready" 20 "$rpid" || { kill "$rpid"; return 1; }
	ip netns exec ns_mod "$XFER" send --to 127.0.0.1 --port 7200 \
		--sizes 16m,16m --timeout 30 > /dev/null 2>&1 &
	spid=$!
	sleep 0.5
	kill -9 "$spid" 2> /dev/null
	sleep 0.1
	kill -9 "$rpid" 2> /dev/null
	wait "$spid" "$rpid" 2> /dev/null
	rmmod_retry dlcp 10 || { fail "rmmod after killed transfer failed"; return 1; }
	dlcp_insmod "$KO" || { fail "insmod failed"; return 1; }
	dlcp_loaded
}

case_ipproto_param()
{
	local rc=0 proto

	rmmod_retry dlcp 5 || return 1
	dlcp_insmod "$KO" ipproto=252 || { fail "insmod ipproto=252"; return 1; }
	proto=$(cat /sys/module/dlcp/parameters/ipproto 2> /dev/null)
	echo "ipproto parameter: $proto"
	[ "$proto" = 252 ] || { fail "ipproto is not 252"; rc=1; }
	loopback_xfer ns_mod 7300 || rc=1
	rmmod_retry dlcp 5 || { fail "rmmod"; rc=1; }
	dlcp_insmod "$KO" || { fail "insmod without parameter"; return 1; }
	proto=$(cat /sys/module/dlcp/parameters/ipproto 2> /dev/null)
	[ "$proto" = 253 ] || { fail "ipproto is $proto after reload"; rc=1; }
	return $rc
}

# socket(AF_INET or AF_INET6, SOCK_DLCP, 0) with the module unloaded: the
# kernel asks modprobe for net-pf-FAMILY-proto-0-type-4, which dlcp.ko's
# aliases must answer. kernel.modprobe points for the time of the call at
# a wrapper that logs the request and runs the real modprobe on a module
# tree of the test's own holding only $KO (depmod indexes its aliases;
# the modules it depends on stay loaded from before).
case_autoload()
{
	local rel tree wrapper old fam pf rc=0

	rel=$(uname -r)
	tree=$tmpdir/modroot
	wrapper=$tmpdir/modprobe
	mkdir -p "$tree/lib/modules/$rel/extra"
	cp "$KO" "$tree/lib/modules/$rel/extra/dlcp.ko"
	# the kernel's own lists, empty here (depmod warns when they are missing)
	touch "$tree/lib/modules/$rel/"modules.{order,builtin,builtin.modinfo}
	depmod -b "$tree" "$rel" || { fail "depmod -b $tree"; return 1; }
	printf '#!/bin/sh\necho "$*" >> %s/requests\nexec %s -d %s "$@"\n' \
		"$tmpdir" "$(command -v modprobe)" "$tree" > "$wrapper"
	chmod 755 "$wrapper"
	old=$(cat /proc/sys/kernel/modprobe)

	for fam in 4 6; do
		pf=2
		[ $fam = 6 ] && pf=10
		rm -f "$tmpdir/requests"
		rmmod_retry dlcp 5 || { fail "rmmod"; return 1; }
		echo "$wrapper" > /proc/sys/kernel/modprobe
		"$XFER" hold --family $fam --no-wait ||
			{ fail "IPv$fam: socket() did not load the module"; rc=1; }
		echo "$old" > /proc/sys/kernel/modprobe
		echo "IPv$fam: modprobe asked for: $(cat "$tmpdir/requests" 2> /dev/null)"
		grep -q -- "-- net-pf-$pf-proto-0-type-4\$" "$tmpdir/requests" ||
			{ fail "no request for net-pf-$pf-proto-0-type-4"; rc=1; }
		dlcp_loaded || { fail "IPv$fam: dlcp not loaded"; rc=1; continue; }
		[ "$(cat /sys/module/dlcp/srcversion)" = \
		  "$(modinfo -F srcversion "$KO")" ] ||
			{ fail "the module loaded is not $KO"; rc=1; }
	done
	return $rc
}

# ------------------------------------------------------------------- main

CASES=(
	loaded
	rmmod_busy
	rmmod_busy_netns
	rmmod_after_close
	reload_existing_netns
	rmmod_after_inflight
	ipproto_param
	autoload
)

require_root
require_vm
ktap_header "${#CASES[@]}"

if ! dlcp_loaded && ! dlcp_insmod "$KO"; then
	ktap_skip_all "cannot load $KO" "${CASES[@]}"
fi

tmpdir=$(mktemp -d)
trap cleanup EXIT
ns_create ns_mod

for c in "${CASES[@]}"; do
	run_case "$c" "case_$c"
	release_holders
	# Whatever happened, go on with the module loaded.
	dlcp_loaded || dlcp_insmod "$KO" > /dev/null 2>&1
done

ktap_finished
