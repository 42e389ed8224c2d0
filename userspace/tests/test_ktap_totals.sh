#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of selftests/ktap-totals, the aggregator behind `make check`'s final
# "N passed, N failed, N skipped" line. TAP output.

TOTALS=$(cd "$(dirname "$0")/../../selftests" && pwd -P)/ktap-totals
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0

# expect NAME WANT_LINE WANT_RC [ktap-totals ARGS...] < input
expect()
{
	local name=$1 want=$2 want_rc=$3 got rc
	shift 3

	"$TOTALS" "$@" < "$tmp/in" > "$tmp/out"
	rc=$?
	got=$(tail -n 1 "$tmp/out")
	n=$((n + 1))
	if [ "$got" = "$want" ] && [ "$rc" = "$want_rc" ]; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
		echo "# want '$want' (exit $want_rc), got '$got' (exit $rc)"
		failed=$((failed + 1))
	fi
}

input() { printf '%b' "$1" > "$tmp/in"; }

echo "TAP version 13"
echo "1..15"

input 'TAP version 13\n1..3\nok 1 a\nok 2 b # SKIP why\nnot ok 3 c\n'
expect "pass, skip and fail" "1 passed, 1 failed, 1 skipped" 1

input 'TAP version 13\n1..2\nok 1 a\nok 2 b\n'
expect "all pass, exit 0" "2 passed, 0 failed, 0 skipped" 0

input '1..2\r\nok 1 - a\r\nnot ok 2 - b\r\n'
expect "carriage returns" "1 passed, 1 failed, 0 skipped" 1

input 'TAP version 13\n1..5\nok 1 a\nok 2 b\n'
expect "missing planned results fail" "2 passed, 3 failed, 0 skipped" 1

input 'TAP version 13\nok 1 a\nok 2 b\n1..2\n'
expect "plan at the end" "2 passed, 0 failed, 0 skipped" 0

input 'KTAP version 1\n1..1\n    KTAP version 1\n    1..2\n    ok 1 x\n    not ok 2 y\nnot ok 1 parent\n'
expect "nested subtests count via parent" "0 passed, 1 failed, 0 skipped" 1

input '1..2\nok 1 - a\nnot ok 2 # SKIP b\n# not ok - group\n'
expect "cmocka skip and group line" "1 passed, 0 failed, 1 skipped" 0

input 'TAP version 13\n1..2\nok 1 a\nBail out! broken\n'
expect "bail out" "1 passed, 2 failed, 0 skipped" 1

input 'no tap here\n'
expect "no results at all fails" "0 passed, 1 failed, 0 skipped" 1

input '1..0 # SKIP not here\n'
expect "empty skipped plan" "0 passed, 0 failed, 0 skipped" 0

input 'not ok 1 t # TODO later\nok 2 u # todo\n1..2\n'
expect "TODO" "1 passed, 0 failed, 1 skipped" 0

input 'TAP version 13\nok 1 a\nnot ok 2 b\n# cut off here\n'
expect "results without a plan: cut off" "1 passed, 2 failed, 0 skipped" 1

printf '1..1\nok 1 a\n' > "$tmp/a.log"
printf '1..1\nnot ok 1 b\n' > "$tmp/b.log"
input ''
expect "several files add up" "1 passed, 1 failed, 0 skipped" 1 \
	"$tmp/a.log" "$tmp/b.log"

# expect_out NAME CHECK: ktap-totals' whole output for the input passes
# the function CHECK (which reads $tmp/out)
expect_out()
{
	"$TOTALS" < "$tmp/in" > "$tmp/out"
	n=$((n + 1))
	if "$2"; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1"
		sed 's/^/# got: /' "$tmp/out"
		failed=$((failed + 1))
	fi
}

# the failed results are named, so that a log's last lines say what failed
failed_named()
{
	[ "$(grep -c '^# -: not ok' "$tmp/out")" = 1 ] &&
	grep -qx '# -: not ok 1 first' "$tmp/out"
}
input '1..3\nnot ok 1 first\nok 2 second\nnot ok 3 third # TODO later\n'
expect_out "failed results named" failed_named

# and why: the last lines that said FAIL before each failed result
failed_why()
{
	[ "$(grep -c '^#   # FAIL: ' "$tmp/out")" = 4 ] &&
	grep -A4 -x '# -: not ok 2 b' "$tmp/out" | tail -n 1 |
		grep -qx '#   # FAIL: x 5' &&
	! grep -q 'FAIL: old' "$tmp/out"
}
input '1..2\n# FAIL: old\nok 1 a\n# FAIL: x 1\n# FAIL: x 2\n# FAIL: x 3\n# FAIL: x 4\n# FAIL: x 5\nnot ok 2 b\n'
expect_out "why a result failed" failed_why

[ "$failed" -eq 0 ]
