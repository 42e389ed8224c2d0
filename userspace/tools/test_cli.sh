#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test of the command-line tools' common options: -h/--help and
# -V/--version exit 0 and print something (help on stdout), the version is
# the one of the top-level VERSION file, and dkms.conf packages that same
# version; and of their numbers: each numeric option given a value that is
# not a number, is out of range or overflows makes the tool exit with
# status 2 and name the option and the value ("OPTION: 'VALUE'") before it
# does anything (none of these command lines is valid, none opens a socket
# or touches a device). TAP on stdout; exit status 1 if anything failed.
#
# Usage: test_cli.sh   (the tools built in userspace/{tools,perf,demo})

TOP=$(cd "$(dirname "$0")/../.." && pwd -P)
VERSION=$(cat "$TOP/VERSION")
TOOLS=(
	userspace/tools/dlcpstat
	userspace/tools/dlcp-cat
	userspace/perf/dlcp-perf
	userspace/demo/dlcp-demo
	tc-scripts/dlcp-qos
)
n=0
failed=0

result()
{
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - cli: $2"
	else
		echo "not ok $n - cli: $2"
		failed=$((failed + 1))
	fi
}

# bad OPTION VALUE TOOL ARGS...: TOOL ARGS exits with status 2 and says
# "OPTION: 'VALUE'" on stderr
bad()
{
	local opt=$1 val=$2 tool=$3 err rc

	shift 3
	err=$(timeout 10 "$TOP/$tool" "$@" 2>&1 > /dev/null)
	rc=$?
	[ $rc = 2 ] && grep -qF -- "$opt: '$val'" <<< "$err"
	result $? "${tool##*/} $*: status 2, names $opt: '$val'"
	[ $rc = 2 ] || echo "# exit status $rc"
	grep -qF -- "$opt: '$val'" <<< "$err" || echo "# stderr: ${err%%$'\n'*}"
}

# good TOOL ARGS...: valid numbers: TOOL ARGS does not exit with status 2
# (it may fail later, without the module)
good()
{
	local tool=$1 rc

	shift
	timeout 5 "$TOP/$tool" "$@" > /dev/null 2>&1
	rc=$?
	[ $rc != 2 ]
	result $? "${tool##*/} $*: numbers accepted"
	[ $rc != 2 ] || echo "# exit status $rc"
}

echo "TAP version 13"
for t in "${TOOLS[@]}"; do
	name=${t##*/}
	for o in -h --help; do
		out=$("$TOP/$t" "$o" 2> /dev/null)
		rc=$?
		[ $rc = 0 ] && [ -n "$out" ]
		result $? "$name $o exits 0 with help on stdout"
		[ $rc = 0 ] || echo "# exit status $rc"
	done
	for o in -V --version; do
		out=$("$TOP/$t" "$o" 2> /dev/null)
		rc=$?
		[ $rc = 0 ] && [ "$out" = "$name (DLCP) $VERSION" ]
		result $? "$name $o prints version $VERSION"
		[ $rc = 0 ] || echo "# exit status $rc"
		[ "$out" = "$name (DLCP) $VERSION" ] || echo "# got '$out'"
	done
done
dkms=$(sed -n 's/^PACKAGE_VERSION="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$TOP/dkms.conf")
[ "$dkms" = "$VERSION" ]
result $? "dkms.conf PACKAGE_VERSION is VERSION ($VERSION)"
[ "$dkms" = "$VERSION" ] || echo "# dkms.conf has '$dkms'"

cat=userspace/tools/dlcp-cat
dst=(127.0.0.1 9)
bad -p abc $cat -l -p abc
bad -p 0 $cat -l -p 0
bad -p 65536 $cat -l -p 65536
bad -P 1x $cat -P 1x "${dst[@]}"
bad -c -1 $cat -c -1 "${dst[@]}"
bad -c 0 $cat -c 0 "${dst[@]}"
bad -t nan $cat -t nan "${dst[@]}"
bad -t 0 $cat -l -p 9 -t 0
bad -t 1e9 $cat -t 1e9 "${dst[@]}"
bad -s 5x $cat -s 5x "${dst[@]}"
bad -s 2g $cat -s 2g "${dst[@]}"
bad -s 18446744073709551616 $cat -s 18446744073709551616 "${dst[@]}"
bad -s 18014398509481984k $cat -s 18014398509481984k "${dst[@]}"
bad -B abc $cat -B abc "${dst[@]}"
bad -B 1000001 $cat -B 1000001 "${dst[@]}"
bad -B " 5" $cat -B " 5" "${dst[@]}"
bad -D 4294967296 $cat -D 4294967296 "${dst[@]}"
bad -D 1.5 $cat -D 1.5 "${dst[@]}"
bad -T -1 $cat -T -1 "${dst[@]}"
bad -I 0x $cat -I 0x "${dst[@]}"
bad -L 65536 $cat -L 65536 "${dst[@]}"
bad -C :5 $cat -C :5 "${dst[@]}"
bad -C 1:0 $cat -C 1:0 "${dst[@]}"
bad -C 1:2x $cat -C 1:2x "${dst[@]}"
bad PORT 12abc $cat 127.0.0.1 12abc
bad PORT 99999 $cat 127.0.0.1 99999
good $cat -s 1k -c 2 -B 1000000 -D 4294967295 -T 0x10 -I 7 -L 65535 \
	-C 0:16 -C 0x20:1 -P 65535 -t 0.5 127.0.0.1 65535

stat=(userspace/tools/dlcpstat -f /dev/null)
bad INTERVAL 1x "${stat[@]}" 1x
bad INTERVAL 0 "${stat[@]}" 0
bad INTERVAL 1e9 "${stat[@]}" 1e9
bad COUNT 2.5 "${stat[@]}" 1 2.5
bad COUNT 0 "${stat[@]}" 1 0
bad COUNT 99999999999999999999 "${stat[@]}" 1 99999999999999999999
good "${stat[@]}" .01 2 'Drop*'

perf=userspace/perf/dlcp-perf
client=(client 127.0.0.1 --proto dlcp)
bad --port abc $perf server --port abc
bad --port 0x $perf server --port 0x
bad --threads 257 $perf server --threads 257
bad --size 1x $perf "${client[@]}" --size 1x --count 1
bad --size 2g $perf "${client[@]}" --size 2g --count 1
bad --sizes -1 $perf "${client[@]}" --sizes 1k,-1 --count 1
bad --count 0 $perf "${client[@]}" --size 1k --count 0
bad --count " 5" $perf "${client[@]}" --size 1k --count " 5"
bad --duration nan $perf "${client[@]}" --size 1k --duration nan
bad --duration inf $perf "${client[@]}" --size 1k --duration inf
bad --concurrency 1025 $perf "${client[@]}" --size 1k --count 1 --concurrency 1025
bad --layer 65536 $perf "${client[@]}" --size 1k --count 1 --layer 65536
bad --budget 1e6 $perf "${client[@]}" --size 1k --count 1 --budget 1e6
bad --prio 8 $perf "${client[@]}" --size 1k --count 1 --prio 8
bad --id -1 $perf "${client[@]}" --size 1k --count 1 --id -1
bad --senders 0 $perf "${client[@]}" --size 1k --count 1 --senders 0
bad --timeout -1 $perf "${client[@]}" --size 1k --count 1 --timeout -1
good $perf "${client[@]}" --sizes 1,64k,0x10,1m --count 1 --duration 0.5 \
	--timeout 1e-1 --concurrency 1024 --layer 0 --budget 1000000 --id 0x10

demo=userspace/demo/dlcp-demo
bad --port abc $demo ps --port abc
bad --workers 65 $demo ps --workers 65
bad --iters 0 $demo ps --iters 0
bad --iters 4294967297 $demo ps --iters 4294967297
bad --rank 0 $demo worker --ps 127.0.0.1 --rank 0
bad --rank 3 $demo worker --ps 127.0.0.1 --workers 2 --rank 3
bad --push-budget 1000001 $demo worker --ps 127.0.0.1 --push-budget 1000001
bad --pull-budget -5 $demo ps --pull-budget -5
bad --sizes 6 $demo ps --sizes 4,6
bad --sizes "" $demo ps --sizes 4,,8
sizes=4$(printf ',4%.0s' {1..16})
bad --sizes "$sizes" $demo ps --sizes "$sizes"
good $demo worker --ps 127.0.0.1 --port 65535 --workers 64 --rank 64 \
	--iters 1 --push-budget 0 --sizes 4,1k,0x100

# a device that does not exist: nothing to touch if validation is missed
qos=(tc-scripts/dlcp-qos setup dlcp-nodev0)
bad --bands 9 "${qos[@]}" --bands 9
bad --bands 1x "${qos[@]}" --bands 1x
bad --limit 1e9 "${qos[@]}" --limit 1e9
bad --limit 99999999999999999999 "${qos[@]}" --limit 99999999999999999999
bad --ipproto 0x10 "${qos[@]}" --ipproto 0x10
bad --ipproto 255 "${qos[@]}" --ipproto 255
bad "--dscp-map (class 7)" 64 "${qos[@]}" --dscp-map "1 2 3 4 5 6 7 64"
bad --rate 10xbit "${qos[@]}" --rate 10xbit
bad --rate 99999999999999999999gbit "${qos[@]}" --rate 99999999999999999999gbit

echo "1..$n"
[ $failed = 0 ]
