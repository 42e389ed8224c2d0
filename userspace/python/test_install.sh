#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# test_install.sh: the dlcp package installed as users install it, then
# used from outside the tree with no DLCP_LIB, LD_LIBRARY_PATH or the like.
# TAP on stdout.
#
#   1. pip install ./userspace/python (from the top of a copy of the tree,
#      which is removed afterwards) into a fresh virtualenv of Debian's
#      python3: the package carries libdlcp, dlcp.__version__ is VERSION,
#      two ranks (two processes, ports the kernel chooses) all-reduce over
#      libdlcp's TCP transport, and (with torch) dlcp.backend, dlcp.ddp,
#      dlcp.dear, dlcp.run import.
#   2. make install-userspace install-python PREFIX=<a temporary directory>
#      (no DESTDIR): the package finds the libdlcp of its PREFIX, which is
#      not one of the loader's directories; ldconfig runs as root without
#      DESTDIR only; make uninstall-userspace uninstall-python leaves no
#      file and no directory of DLCP's behind.
#
# Needs python3-pip, python3-setuptools, python3-wheel, python3-numpy and
# a C compiler; uses the userspace build of the tree (make userspace).

set -uo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
PY=/usr/bin/python3
VERSION=$(cat "$TOP/VERSION")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# as a user's shell would have it: no variables of the job or the tests
clean_env=(env -i PATH=/usr/bin:/bin HOME="$tmp" LC_ALL=C.UTF-8)

n=0
failed=0
result() {	# status, name, log
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		failed=$((failed + 1))
		echo "not ok $n - $2"
		tail -n 30 "$3" | sed 's/^/# /'
	fi
}

echo "TAP version 13"

# ------------------------------------------------------------------ pip

# One rank of a group of two: the ranks meet through files in a directory.
cat > "$tmp/rank.py" <<'EOF'
import sys

import numpy as np

import dlcp

rank = int(sys.argv[1])
g = dlcp.Group.from_env(rank=rank, world_size=2, store=dlcp.DirStore(sys.argv[2], 20),
                        addr="127.0.0.1", transport=dlcp.TRANSPORT_TCP, timeout_ms=10000)
a = np.arange(100000, dtype=np.float32) * (rank + 1)
g.allreduce(a, reduce=dlcp.REDUCE_SUM)
ok = np.array_equal(a, np.arange(100000, dtype=np.float32) * 3)
g.close()
print(rank, dlcp.__version__, dlcp._lib._name, "sum-ok" if ok else "sum-wrong")
EOF

(
	set -e
	mkdir -p "$tmp/tree" "$tmp/rdzv" "$tmp/run"
	# the sources pip needs, without the build products of the tree
	tar -C "$TOP" --exclude=build --exclude='*.egg-info' --exclude=__pycache__ \
		--exclude='*.o' --exclude='*.so' --exclude='*.a' --exclude=tests \
		-cf - VERSION uapi userspace/lib userspace/python | tar -C "$tmp/tree" -xf -
	# Debian's pip (python3-pip) runs in it and installs into it
	"$PY" -m venv --without-pip --system-site-packages "$tmp/venv"
	(cd "$tmp/tree" && "${clean_env[@]}" "$tmp/venv/bin/python" -m pip install -q \
		--no-build-isolation --no-index ./userspace/python)
	rm -rf "$tmp/tree"
	cd "$tmp/run"
	"${clean_env[@]}" "$tmp/venv/bin/python" "$tmp/rank.py" 0 "$tmp/rdzv" > r0.out &
	"${clean_env[@]}" "$tmp/venv/bin/python" "$tmp/rank.py" 1 "$tmp/rdzv" > r1.out
	wait $!
	cat r0.out r1.out
	site=$("$tmp/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
	for r in 0 1; do
		read -r rank version lib sum < "r$r.out"
		[ "$rank $version $lib $sum" = "$r $VERSION $site/dlcp/libdlcp.so.0 sum-ok" ]
	done
	[ -f "$site/dlcp/py.typed" ]
	# the modules of torch, where it is
	if "$PY" -c 'import torch.distributed' 2> /dev/null; then
		"${clean_env[@]}" "$tmp/venv/bin/python" -c '
import sys
import dlcp, dlcp.backend, dlcp.ddp, dlcp.dear, dlcp.rendezvous, dlcp.run
assert dlcp.__file__.startswith(sys.argv[1]), dlcp.__file__
' "$site/dlcp/"
	fi
) > "$tmp/pip.log" 2>&1
result $? "python: pip install ./userspace/python into a virtualenv: dlcp $VERSION loads its own libdlcp.so.0, 2 ranks all-reduce over TCP" \
	"$tmp/pip.log"

# ------------------------------------------------------------------ make install

prefix=$tmp/prefix
# records its calls, instead of changing the machine's loader cache
printf '#!/bin/sh\necho ldconfig >> %s/ldconfig.log\n' "$tmp" > "$tmp/ldconfig"
chmod +x "$tmp/ldconfig"
ldconfig_calls() {
	if [ -f "$tmp/ldconfig.log" ]; then wc -l < "$tmp/ldconfig.log"; else echo 0; fi
}
make_vars=(PREFIX="$prefix" DESTDIR= PYTHON="$PY" LDCONFIG="$tmp/ldconfig")
# not what the make running this test was given (DESTDIR=, -j)
unset MAKEFLAGS MFLAGS MAKELEVEL
want_ldconfig=0
[ "$(id -u)" != 0 ] || want_ldconfig=1
(
	set -e
	make -s -C "$TOP" install-userspace install-python "${make_vars[@]}"
	[ "$(ldconfig_calls)" = "$want_ldconfig" ]
	site=$("$PY" "$TOP/tools/python-site" "$prefix")
	cd "$tmp/run"
	"${clean_env[@]}" PYTHONPATH="$site" "$PY" -c '
import sys
import dlcp
assert dlcp.__file__.startswith(sys.argv[1]), dlcp.__file__
assert dlcp._lib._name == sys.argv[2], dlcp._lib._name
assert dlcp.__version__ == sys.argv[3], dlcp.__version__
assert dlcp._lib.dlcp_dtype_size(dlcp.DTYPE_FP32) == 4
print(dlcp.__file__, dlcp._lib._name, dlcp.__version__)
' "$site/dlcp/" "$prefix/lib/libdlcp.so.0" "$VERSION"
	[ -f "$site/dlcp/py.typed" ]
	make -s -C "$TOP" uninstall-userspace uninstall-python "${make_vars[@]}"
	[ "$(ldconfig_calls)" = $((2 * want_ldconfig)) ]
	find "$prefix" ! -type d -o -name dlcp > "$tmp/left"
	cat "$tmp/left"
	[ ! -s "$tmp/left" ]
	# with DESTDIR, never
	rm -f "$tmp/ldconfig.log"
	make -s -C "$TOP" install-userspace "${make_vars[@]}" DESTDIR="$tmp/dest"
	make -s -C "$TOP" uninstall-userspace "${make_vars[@]}" DESTDIR="$tmp/dest"
	[ "$(ldconfig_calls)" = 0 ]
) > "$tmp/install.log" 2>&1
result $? "python: make install-userspace install-python PREFIX=tmp: dlcp loads \$PREFIX/lib/libdlcp.so.0 without the loader's help; ldconfig as root without DESTDIR; uninstall leaves nothing of DLCP's" \
	"$tmp/install.log"

echo "1..$n"
exit $((failed > 0))
