#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test of the command-line tools' common options: -h/--help and
# -V/--version exit 0 and print something (help on stdout), the version is
# the one of the top-level VERSION file, and dkms.conf packages that same
# version. TAP on stdout; exit status 1 if anything failed.
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

echo "TAP version 13"
echo "1..$((${#TOOLS[@]} * 4 + 1))"
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
[ $failed = 0 ]
