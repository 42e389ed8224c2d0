#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The KUnit suites of the module's pure parts (kmod/dlcp_*_test.c): swaps
# in the dlcp.ko built for them (it exports what they call), loads
# dlcp_test.ko, which runs them and logs KUnit's KTAP, and reports one
# result per test case ("ok N suite.case"). Then puts the usual module
# back ($DLCP_KO, default kmod/dlcp.ko).
#
# The modules come from build/kunit/kmod (make kunit-module), or
# build/debug/kunit/kmod when $DLCP_KO is the debug kernel's (make
# debug-module); DLCP_KUNIT_DIR overrides. Unloads the module: needs no
# other DLCP user.

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

KO=${DLCP_KO:-$REPO_DIR/kmod/dlcp.ko}
case $KO in
*/build/debug/*) dir=$REPO_DIR/build/debug/kunit/kmod ;;
*) dir=$REPO_DIR/build/kunit/kmod ;;
esac
dir=${DLCP_KUNIT_DIR:-$dir}

echo "TAP version 13"

restore()
{
	grep -q "^dlcp_test " /proc/modules && rmmod_retry dlcp_test 5 2> /dev/null
	rmmod_retry dlcp 5 2> /dev/null
	dlcp_insmod "$KO" 2> /dev/null
}

bail()
{
	echo "1..1"
	echo "not ok 1 kunit # $1"
	exit 1
}

if [ ! -f "$dir/dlcp.ko" ] || [ ! -f "$dir/dlcp_test.ko" ]; then
	bail "no $dir/dlcp_test.ko (make kunit-module)"
fi
rmmod_retry dlcp 5 || bail "cannot unload dlcp"
trap restore EXIT
dlcp_insmod "$dir/dlcp.ko" || bail "cannot load $dir/dlcp.ko"
k0=$(dmesg | wc -l)
insmod "$dir/dlcp_test.ko" || bail "cannot load $dir/dlcp_test.ko"

# KTAP of KUnit, one suite per subtest:
#     # Subtest: SUITE
#     ok N CASE            (or "not ok"; diagnostics "# ..." between)
# ok N SUITE
dmesg -t | tail -n +$((k0 + 1)) | awk '
	/^    # Subtest: / { suite = $NF; next }
	/^    (not ok|ok) [0-9]+ / {
		ok = ($1 == "ok") ? "ok" : "not ok"
		name = (ok == "ok") ? $3 : $4
		for (i = (ok == "ok") ? 4 : 5; i <= NF; i++)
			name = name " " $i
		n++
		printf "%s %d %s.%s\n", ok, n, suite, name
		next
	}
	/^        / { sub(/^ +/, ""); print "# " $0; next }
	/^(not ok|ok) [0-9]+ / { suites++; next }
	/^1\.\.[0-9]+$/ { planned = substr($0, 4); next }
	END {
		if (!suites || suites != planned)
			printf "not ok %d kunit # %d of %d suites reported\n",
			       ++n, suites, planned
		printf "1..%d\n", n
	}'
