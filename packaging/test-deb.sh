#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-deb.sh: build the Debian packages of debian/ with
# "dpkg-buildpackage -us -uc -b" in a temporary copy of the tree, and test
# them without installing anything into the system: the packages are
# extracted (dpkg-deb -x) into a temporary root, a program is compiled and
# linked against libdlcp-dev and libdlcp0 from there, the tools and the
# Python package run from there, each file is checked to be in its package
# (dlcp(7) in libdlcp-dev, the dissector in Wireshark's Lua plugin folder,
# dlcp-run in dlcp-run, which depends on python3-torch), the kernels the
# packages name checked against dkms.conf, dkms builds dlcp-dkms's module
# for the 6.1 and the 6.12 kernel installed (in a temporary DKMS tree),
# apt-get --simulate resolves the packages' dependencies and lintian checks
# them.
# The source tree stays as it is (the last test checks that).
#
# Usage: packaging/test-deb.sh [--build-only] [--out DIR] [--kver KVER] [--keep]
#
#   --build-only  only build (one test); with --out, keep the packages
#   --out DIR     copy the .debs, .changes and .buildinfo into DIR
#   --kver KVER   kernel for the module build, may repeat (default: of
#                 each series dkms.conf's BUILD_EXCLUSIVE_KERNEL accepts,
#                 6.1 and 6.12, the newest with headers in /lib/modules,
#                 e.g. 6.1.0-56-amd64 and 6.12.117+deb12-amd64)
#   --keep        keep the temporary directory (its name is printed)
#
# TAP on stdout; the build's, dkms's and lintian's logs stay in the
# temporary directory, their last lines are printed as "#" comments when a
# test fails. Exit status 1 if a test failed. Needs the build dependencies
# of debian/control, lintian and, for the module, dkms or the kernel's
# headers (tools/install-deps installs them); dkms runs only as root (with
# --dkmstree, --sourcetree and --installtree in the temporary directory and
# a throw-away signing key), else kmod/ is built with make as dkms would.
# Takes 1.5 to 3.5 minutes on 2 cores (the build 30-50 s, dkms 35-60 s
# per kernel).

set -uo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
# Debian's toolchain and python3, not another one earlier in PATH
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export LC_ALL=C.UTF-8

build_only=0
out=
kvers=()
keep=0

usage()
{
	sed -n '/^# Usage:/,/^#   --keep/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
	exit "${1:-0}"
}

while [ $# -gt 0 ]; do
	case $1 in
	--build-only) build_only=1 ;;
	--out) out=$2; shift ;;
	--kver) kvers+=("$2"); shift ;;
	--keep) keep=1 ;;
	-h|--help) usage 0 ;;
	*) usage 2 >&2 ;;
	esac
	shift
done

VERSION=$(cat "$TOP/VERSION")
PKGS=(dlcp-dkms libdlcp0 libdlcp-dev dlcp-tools python3-dlcp dlcp-run)
MULTIARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)

n=0
failed=0
tmp=

cleanup()
{
	[ -n "$tmp" ] || return
	if [ "$keep" = 1 ]; then
		echo "# kept $tmp"
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT

# result STATUS DESCRIPTION [LOG]: one TAP line; on failure the last lines
# of LOG as comments
result()
{
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - deb: $2"
	else
		echo "not ok $n - deb: $2"
		failed=$((failed + 1))
		if [ -n "${3:-}" ] && [ -s "$3" ]; then
			tail -n 25 "$3" | sed 's/^/# /'
		fi
	fi
}

skip()
{
	n=$((n + 1))
	echo "ok $n - deb: $1 # SKIP $2"
}

# the tree's state as git sees it, build/ left out (make deb-check writes
# build/deb.tap while this runs); empty where the tree is no git checkout
tree_state()
{
	git -C "$TOP" rev-parse --is-inside-work-tree > /dev/null 2>&1 || return 0
	git -C "$TOP" status --porcelain --ignored --untracked-files=all |
		grep -v -e ' build/' || true
}

# copy the tree: git's files (tracked and untracked, not ignored) where it
# is a checkout, else everything but .git and build/
copy_tree()
{
	local dst=$1

	mkdir -p "$dst"
	if git -C "$TOP" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
		git -C "$TOP" ls-files -z --cached --others --exclude-standard |
			while IFS= read -r -d '' f; do
				[ -e "$TOP/$f" ] || [ -L "$TOP/$f" ] || continue
				printf '%s\0' "$f"
			done |
			tar -C "$TOP" --null -T - -cf - | tar -C "$dst" -xf -
	else
		tar -C "$TOP" --exclude-vcs --exclude=./build -cf - . |
			tar -C "$dst" -xf -
	fi
}

# the kernels with headers that dkms.conf's BUILD_EXCLUSIVE_KERNEL
# accepts, the newest of each series installed here (6.1, 6.12), one a line
pick_kernels()
{
	local re k
	local -A best=()
	re=$(sed -n 's/^BUILD_EXCLUSIVE_KERNEL="\(.*\)"$/\1/p' "$TOP/dkms.conf")
	while IFS= read -r k; do
		[[ -z $re || $k =~ $re ]] || continue
		[[ $k =~ ^[0-9]+\.[0-9]+ ]] || continue
		best[${BASH_REMATCH[0]}]=$k
	done < <(for k in /lib/modules/*/build/Makefile; do
			[ -f "$k" ] || continue
			k=${k#/lib/modules/}
			echo "${k%/build/Makefile}"
		done | sort -V)
	for k in "${best[@]}"; do
		echo "$k"
	done | sort -V
}
[ ${#kvers[@]} -gt 0 ] || mapfile -t kvers < <(pick_kernels)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dlcp-deb.XXXXXX") || exit 1
src=$tmp/dlcp-$VERSION
root=$tmp/root
state_before=$(tree_state)

echo "TAP version 13"
if [ "$build_only" = 1 ]; then
	plan=1
else
	# one dkms build per kernel, one skip without any
	plan=$((19 + (${#kvers[@]} > 0 ? ${#kvers[@]} : 1)))
fi
echo "1..$plan"

# ------------------------------------------------------------------ build

copy_tree "$src"
built=0
if ! (cd "$src" && dpkg-checkbuilddeps) > "$tmp/builddeps.log" 2>&1; then
	result 1 "build dependencies of debian/control are installed (tools/install-deps)" \
		"$tmp/builddeps.log"
else
	start=$SECONDS
	(cd "$src" && dpkg-buildpackage -us -uc -b -J2) > "$tmp/build.log" 2>&1
	rc=$?
	missing=
	for p in "${PKGS[@]}"; do
		compgen -G "$tmp/${p}_${VERSION}_*.deb" > /dev/null || missing="$missing $p"
	done
	[ "$rc" = 0 ] && [ -z "$missing" ] && built=1
	result $((1 - built)) "dpkg-buildpackage -us -uc -b builds ${PKGS[*]} ($((SECONDS - start)) s)" \
		"$tmp/build.log"
	[ -z "$missing" ] || echo "# missing:$missing"
fi

if [ "$built" = 1 ] && [ -n "$out" ]; then
	mkdir -p "$out" &&
		cp "$tmp"/*.deb "$tmp"/*.changes "$tmp"/*.buildinfo "$out"/ &&
		echo "# packages in $out"
fi

if [ "$build_only" = 1 ]; then
	[ "$failed" = 0 ]
	exit
fi

if [ "$built" = 0 ]; then
	while [ "$n" -lt "$plan" ]; do
		skip "package test $((n + 1))" "no packages"
	done
	exit 1
fi

mkdir -p "$root"
for p in "${PKGS[@]}"; do
	dpkg-deb -x "$tmp/${p}_${VERSION}"_*.deb "$root" || exit 1
done
libdir=$root/usr/lib/$MULTIARCH

# ------------------------------------------------------------------ versions

{
	v_changelog=$(cd "$src" && dpkg-parsechangelog -S Version)
	v_dkms=$(sed -n 's/^PACKAGE_VERSION="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$TOP/dkms.conf")
	v_py=$(sed -n 's/^Version: //p' "$root"/usr/lib/python3/dist-packages/dlcp-*.dist-info/METADATA)
	v_libmk=$(sed -n 's/^VERSION[[:space:]]*:= *//p' "$TOP/userspace/lib/Makefile")
	v_libh=$(sed -n 's/^#define LIBDLCP_VERSION[[:space:]]*"\(.*\)"$/\1/p' "$TOP/userspace/lib/libdlcp.h")
	v_pc=$(sed -n 's/^Version: //p' "$libdir/pkgconfig/libdlcp.pc")
	v_debs=$(for p in "${PKGS[@]}"; do dpkg-deb -f "$tmp/${p}_${VERSION}"_*.deb Version; done | sort -u)
	for v in "$v_changelog" "$v_dkms" "$v_py" "$v_libmk" "$v_libh" "$v_pc" "$v_debs"; do
		[ "$v" = "$VERSION" ] || echo "# VERSION $VERSION, found '$v'"
	done
} > "$tmp/versions.log"
[ ! -s "$tmp/versions.log" ]
result $? "debian/changelog, dkms.conf, the Python package, libdlcp, .pc and the packages have VERSION ($VERSION)" \
	"$tmp/versions.log"

# ------------------------------------------------------------------ libdlcp

so=$libdir/libdlcp.so.$VERSION
{
	soname=$(objdump -p "$so" | awk '$1 == "SONAME" { print $2 }')
	[ "$soname" = libdlcp.so.0 ] || echo "SONAME '$soname'"
	[ "$(readlink "$libdir/libdlcp.so.0")" = "libdlcp.so.$VERSION" ] ||
		echo "libdlcp.so.0 is not a link to libdlcp.so.$VERSION"
	[ "$(readlink "$libdir/libdlcp.so")" = libdlcp.so.0 ] ||
		echo "libdlcp.so (libdlcp-dev) is not a link to libdlcp.so.0"
	dpkg-deb -c "$tmp/libdlcp0_${VERSION}"_*.deb | grep -q 'libdlcp\.so$' &&
		echo "libdlcp0 ships libdlcp.so"
	dpkg-deb -I "$tmp/libdlcp0_${VERSION}"_*.deb shlibs | grep -qx "libdlcp 0 libdlcp0 (>= $VERSION)" ||
		echo "no shlibs line for libdlcp 0"
	dpkg-deb -I "$tmp/libdlcp0_${VERSION}"_*.deb symbols | grep -q '@LIBDLCP_0 ' ||
		echo "no symbols file with LIBDLCP_0"
	# every dynamic symbol the library defines carries the version node
	readelf --dyn-syms -W "$so" |
		awk '$7 != "UND" && $8 ~ /^dlcp/ && $8 !~ /@@LIBDLCP_0$/ { print "unversioned: " $8 }'
} > "$tmp/soname.log" 2>&1
[ ! -s "$tmp/soname.log" ]
result $? "libdlcp0: SONAME libdlcp.so.0, symbol version LIBDLCP_0, shlibs and symbols files" \
	"$tmp/soname.log"

# exported functions = the functions libdlcp.h declares (as gcc sees them)
{
	gcc -std=c11 -D_GNU_SOURCE -fsyntax-only -aux-info "$tmp/aux.txt" \
		-I"$root/usr/include/dlcp" -x c "$root/usr/include/libdlcp.h" &&
		sed -n 's|^/\* [^ ]*/usr/include/libdlcp\.h:[0-9]*:[A-Z]* \*/ .*\b\(dlcp_[a-z0-9_]*\) (.*|\1|p' \
			"$tmp/aux.txt" | sort -u > "$tmp/declared" &&
		objdump -T "$so" | awk '$2 == "g" && $4 != "*UND*" && $4 != "*ABS*" { print $NF }' |
		sort -u > "$tmp/exported" &&
		[ -s "$tmp/declared" ] &&
		diff "$tmp/declared" "$tmp/exported" > "$tmp/api.diff"
} > "$tmp/api.log" 2>&1
rc=$?
[ -s "$tmp/api.diff" ] && sed 's/^</declared, not exported:/; s/^>/exported, not declared:/' \
	"$tmp/api.diff" >> "$tmp/api.log"
result $rc "libdlcp0 exports exactly the $(wc -l < "$tmp/declared" 2>/dev/null || echo 0) functions of libdlcp.h" \
	"$tmp/api.log"

cat > "$tmp/prog.c" <<'EOF'
#include <libdlcp.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>

int main(void)
{
	struct sockaddr_in a;
	struct dlcp_ep *ep;
	int rc;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (dlcp_dtype_size(DLCP_DTYPE_FP32) != 4)
		return 1;
	/* the TCP transport: no kernel module needed */
	rc = dlcp_ep_open(&ep, &a, DLCP_TRANSPORT_TCP);
	if (rc)
		return fprintf(stderr, "dlcp_ep_open: %s\n", strerror(-rc)), 1;
	printf("%s %d %d\n", LIBDLCP_VERSION, SOCK_DLCP, dlcp_ep_fd(ep) >= 0);
	return dlcp_ep_close(ep, 0) ? 1 : 0;
}
EOF

# pkg-config as on the installed system: the extracted root is the sysroot
pc()
{
	PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$libdir/pkgconfig \
		PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1 \
		pkg-config "$@"
}

# the program against libdlcp.so.0, C11 and C++
build_prog()
{
	local cflags libs got

	read -ra cflags <<< "$(pc --cflags libdlcp)" &&
		read -ra libs <<< "$(pc --libs libdlcp)" &&
		echo "cflags: ${cflags[*]}; libs: ${libs[*]}" || return 1
	gcc -std=c11 -Wall -Wextra -Werror -pedantic "${cflags[@]}" \
		-o "$tmp/prog" "$tmp/prog.c" "${libs[@]}" || return 1
	objdump -p "$tmp/prog" | grep -q 'NEEDED *libdlcp\.so\.0$' || return 1
	got=$(LD_LIBRARY_PATH=$libdir "$tmp/prog") || return 1
	echo "prog: $got"
	[ "${got%% *}" = "$VERSION" ] || return 1
	g++ -Wall -Wextra -Werror "${cflags[@]}" -fsyntax-only -x c++ "$tmp/prog.c"
}

# the same program against libdlcp.a
build_prog_static()
{
	local cflags libs

	read -ra cflags <<< "$(pc --cflags libdlcp)" &&
		read -ra libs <<< "$(pc --static --libs libdlcp)" || return 1
	libs=("${libs[@]/#-ldlcp/-l:libdlcp.a}")
	echo "libs: ${libs[*]}"
	gcc -std=c11 "${cflags[@]}" -o "$tmp/prog-static" "$tmp/prog.c" "${libs[@]}" || return 1
	! objdump -p "$tmp/prog-static" | grep -q 'NEEDED *libdlcp' || return 1
	"$tmp/prog-static"
}

build_prog > "$tmp/prog.log" 2>&1
result $? "libdlcp-dev: #include <libdlcp.h> compiles (C11 and C++) with pkg-config's flags, links and runs against libdlcp.so.0" \
	"$tmp/prog.log"

build_prog_static > "$tmp/static.log" 2>&1
result $? "libdlcp-dev: links statically with libdlcp.a and pkg-config --static" "$tmp/static.log"

{
	# <linux/dlcp.h> in libdlcp-dev's own directory, not in linux-libc-dev's
	[ -f "$root/usr/include/dlcp/linux/dlcp.h" ] || echo "no /usr/include/dlcp/linux/dlcp.h"
	[ ! -e "$root/usr/include/linux" ] || echo "the packages install into /usr/include/linux"
	cmp "$root/usr/include/dlcp/linux/dlcp.h" "$TOP/uapi/linux/dlcp.h" ||
		echo "/usr/include/dlcp/linux/dlcp.h is not uapi/linux/dlcp.h"
	# shellcheck disable=SC2016  # pkg-config's variables, not the shell's
	grep -qx 'Cflags: -I${includedir} -I${includedir}/dlcp' "$libdir/pkgconfig/libdlcp.pc" ||
		grep Cflags "$libdir/pkgconfig/libdlcp.pc"
	grep -qx 'libdir=/usr/lib/'"$MULTIARCH" "$libdir/pkgconfig/libdlcp.pc" ||
		grep libdir= "$libdir/pkgconfig/libdlcp.pc"
	[ -f "$root/usr/share/man/man3/libdlcp.3.gz" ] || echo "no libdlcp(3)"
} > "$tmp/dev.log" 2>&1
[ ! -s "$tmp/dev.log" ]
result $? "libdlcp-dev: <linux/dlcp.h> as /usr/include/dlcp/linux/dlcp.h, libdlcp.pc names it, libdlcp(3)" \
	"$tmp/dev.log"

# ------------------------------------------------------------------ tools

{
	for t in usr/bin/dlcpstat usr/bin/dlcp-cat usr/bin/dlcp-perf usr/sbin/dlcp-qos; do
		name=${t##*/}
		got=$("$root/$t" --version 2>&1)
		[ "$got" = "$name (DLCP) $VERSION" ] || echo "$t --version: '$got'"
		"$root/$t" --help > /dev/null 2>&1 || echo "$t --help failed"
	done
	for m in man1/dlcp-cat.1 man1/dlcp-perf.1 man8/dlcpstat.8 man8/dlcp-qos.8; do
		[ -f "$root/usr/share/man/$m.gz" ] || echo "no $m"
	done
} > "$tmp/tools.log" 2>&1
[ ! -s "$tmp/tools.log" ]
result $? "dlcp-tools: dlcpstat, dlcp-cat, dlcp-perf, dlcp-qos run (--version $VERSION, --help), man pages" \
	"$tmp/tools.log"

# has PACKAGE PATH: the package has the file PATH (grep -x pattern);
# PACKAGE.contents is its dpkg-deb --contents
for p in "${PKGS[@]}"; do
	dpkg-deb -c "$tmp/${p}_${VERSION}"_*.deb | awk '{ print $6 }' > "$tmp/$p.contents"
done
has() { grep -qx "\.$2" "$tmp/$1.contents"; }

# dlcp(7), the socket API's page, with the development files
{
	has libdlcp-dev '/usr/share/man/man7/dlcp\.7\.gz' || echo "libdlcp-dev has no dlcp.7"
	for p in "${PKGS[@]}"; do
		[ "$p" = libdlcp-dev ] && continue
		! grep -q 'man7/dlcp\.7' "$tmp/$p.contents" || echo "$p has dlcp.7 too"
	done
} > "$tmp/man7.log" 2>&1
[ ! -s "$tmp/man7.log" ]
result $? "libdlcp-dev has dlcp(7), with libdlcp.h and <linux/dlcp.h>; no other package has it" \
	"$tmp/man7.log"

# the dissector in the folder Wireshark loads Lua plugins from: the one
# tshark names where it is installed, else Debian's
{
	luadir=/usr/lib/$MULTIARCH/wireshark/plugins
	if command -v tshark > /dev/null; then
		luadir=$(tshark -G folders 2> /dev/null |
			sed -n 's/^Global Lua Plugins:[[:space:]]*//p')
		echo "tshark: Global Lua Plugins: $luadir"
	fi
	has dlcp-tools "$luadir/dlcp\\.lua" || echo "dlcp-tools has no $luadir/dlcp.lua"
	if command -v tshark > /dev/null; then
		tshark -G protocols -X "lua_script:$root$luadir/dlcp.lua" 2> /dev/null |
			awk -F '\t' '$3 == "dlcp" { f = 1 } END { exit !f }' ||
			echo "tshark does not load it"
	fi
} > "$tmp/lua.log" 2>&1
! grep -qv '^tshark: ' "$tmp/lua.log"
result $? "dlcp-tools: the dissector in Wireshark's Lua plugin folder (tshark -G folders), and it loads" \
	"$tmp/lua.log"

# ------------------------------------------------------------------ python

{
	env -u DLCP_LIB PYTHONPATH="$root/usr/lib/python3/dist-packages" \
		LD_LIBRARY_PATH="$libdir" /usr/bin/python3 -c '
import sys
import dlcp, dlcp.rendezvous
assert dlcp.__file__.startswith(sys.argv[1]), dlcp.__file__
assert dlcp._lib._name == "libdlcp.so.0", dlcp._lib._name
assert dlcp._lib.dlcp_dtype_size(dlcp.DTYPE_FP32) == 4
assert dlcp.__version__ == sys.argv[2], dlcp.__version__
print(dlcp.__file__, dlcp._lib._name)
' "$root/" "$VERSION" &&
		dpkg-deb -f "$tmp/python3-dlcp_${VERSION}"_all.deb Depends | tee /dev/stderr |
		grep -q 'libdlcp0 (>= '"$VERSION"').*python3-numpy'
} > "$tmp/python.log" 2>&1
result $? "python3-dlcp: imports dlcp, which loads libdlcp.so.0 of libdlcp0; depends on libdlcp0, python3-numpy" \
	"$tmp/python.log"

# dlcp-run runs torchrun: its package depends on python3-torch
{
	deb=$tmp/dlcp-run_${VERSION}_all.deb
	has dlcp-run /usr/bin/dlcp-run || echo "dlcp-run has no /usr/bin/dlcp-run"
	has dlcp-run '/usr/share/man/man1/dlcp-run\.1\.gz' || echo "dlcp-run has no dlcp-run.1"
	head -n 1 "$root/usr/bin/dlcp-run" | grep -qx '#! */usr/bin/python3' || echo "dlcp-run: not #!/usr/bin/python3"
	deps=$(dpkg-deb -f "$deb" Depends)
	echo "Depends: $deps"
	grep -qE '(^|, )python3-torch(,|$| )' <<< "$deps" || echo "dlcp-run does not depend on python3-torch"
	grep -qF "python3-dlcp (= $VERSION)" <<< "$deps" || echo "dlcp-run does not depend on python3-dlcp (= $VERSION)"
	! grep -q 'dlcp-run' "$tmp/python3-dlcp.contents" || echo "python3-dlcp has dlcp-run too"
} > "$tmp/run.log" 2>&1
! grep -qv '^Depends: ' "$tmp/run.log"
result $? "dlcp-run: /usr/bin/dlcp-run and dlcp-run(1), depends on python3-torch and python3-dlcp" \
	"$tmp/run.log"

# ------------------------------------------------------------------ dkms

# the kernels the packages name are dkms.conf's: dlcp-dkms's description
# (from packaging/dkms-kernels), and the changelog names them all or none
# the N.N in a text (not 0.1.0), sorted, on one line
series() { tr -c '0-9.' '\n' | sed 's/\.$//' | grep -xE '[0-9]+\.[0-9]+' | sort -uV | paste -sd ' '; }
{
	want=$("$TOP/packaging/dkms-kernels" "$TOP/dkms.conf" | series)
	desc=$(dpkg-deb -f "$tmp/dlcp-dkms_${VERSION}_all.deb" Description | series)
	chl=$(cd "$src" && dpkg-parsechangelog -S Changes | series)
	echo "dkms.conf: $want"
	[ -n "$want" ] && [ "$desc" = "$want" ] || echo "dlcp-dkms's description names $desc"
	[ -z "$chl" ] || [ "$chl" = "$want" ] || echo "debian/changelog names $chl"
} > "$tmp/kernels.log" 2>&1
! grep -qv '^dkms.conf: ' "$tmp/kernels.log"
result $? "dlcp-dkms's description and debian/changelog name the kernels of dkms.conf" \
	"$tmp/kernels.log"

dsrc=$root/usr/src/dlcp-$VERSION
{
	for f in dkms.conf VERSION kmod/Kbuild kmod/Makefile kmod/dlcp_main.c uapi/linux/dlcp.h; do
		[ -f "$dsrc/$f" ] || echo "no /usr/src/dlcp-$VERSION/$f"
	done
	cmp "$dsrc/dkms.conf" "$TOP/dkms.conf" || echo "dkms.conf differs"
	ctl=$tmp/dkms-control
	dpkg-deb -e "$tmp/dlcp-dkms_${VERSION}_all.deb" "$ctl" &&
		grep -q 'common.postinst' "$ctl/postinst" ||
		echo "postinst does not run dkms"
	grep -q 'dkms remove' "$ctl/prerm" || echo "prerm does not remove the module"
	dpkg-deb -f "$tmp/dlcp-dkms_${VERSION}_all.deb" Depends | grep -q dkms ||
		echo "dlcp-dkms does not depend on dkms"
} > "$tmp/dkms-pkg.log" 2>&1
[ ! -s "$tmp/dkms-pkg.log" ]
result $? "dlcp-dkms: the module's sources and dkms.conf in /usr/src/dlcp-$VERSION, dkms in postinst and prerm" \
	"$tmp/dkms-pkg.log"

dkms_args=(--dkmstree "$tmp/dkms" --sourcetree "$root/usr/src" --installtree "$tmp/dkms-install")
use_dkms=0
command -v dkms > /dev/null && [ "$(id -u)" = 0 ] && use_dkms=1
mkdir -p "$tmp/dkms" "$tmp/dkms-install"
if [ ${#kvers[@]} = 0 ]; then
	skip "dlcp-dkms: the module builds" \
		"no headers of a kernel dkms.conf accepts (linux-headers-6.1*, linux-headers-6.12*)"
elif [ "$use_dkms" = 1 ]; then
	# a throw-away signing key, not /var/lib/dkms/mok.key
	mok_signing_key=$tmp/mok.key mok_certificate=$tmp/mok.pub \
		dkms add -m dlcp -v "$VERSION" "${dkms_args[@]}" > "$tmp/dkms-add.log" 2>&1
fi
for kver in "${kvers[@]}"; do
	log=$tmp/dkms-$kver.log
	start=$SECONDS
	if [ ! -f "/lib/modules/$kver/build/Makefile" ]; then
		echo "no /lib/modules/$kver/build/Makefile" > "$log"
		rc=1
		how="the module builds"
	elif [ "$use_dkms" = 1 ]; then
		how="dkms build"
		cat "$tmp/dkms-add.log" > "$log"
		mok_signing_key=$tmp/mok.key mok_certificate=$tmp/mok.pub \
			dkms build -m dlcp -v "$VERSION" -k "$kver" -j 2 "${dkms_args[@]}" \
			>> "$log" 2>&1
		rc=$?
		# compressed as the kernel's own modules (6.12: dlcp.ko.xz)
		ko=$tmp/dkms/dlcp/$VERSION/$kver/$(uname -m)/module/dlcp.ko
		[ -f "$ko" ] || ko=$(compgen -G "$ko.*" | head -n 1)
	else
		how="make -C kmod, as dkms.conf says (no dkms or not root)"
		cp -a "$dsrc" "$tmp/dkms/src-$kver"
		make -C "$tmp/dkms/src-$kver/kmod" KDIR="/lib/modules/$kver/build" -j2 \
			> "$log" 2>&1
		rc=$?
		ko=$tmp/dkms/src-$kver/kmod/dlcp.ko
	fi
	if [ "$rc" = 0 ]; then
		{
			ls -l "$ko" && modinfo "$ko" | grep -E '^(version|vermagic|signer):' &&
				[ "$(modinfo -F version "$ko")" = "$VERSION" ] &&
				[ "$(modinfo -F vermagic "$ko" | awk '{ print $1 }')" = "$kver" ]
		} >> "$log" 2>&1
		rc=$?
	fi
	result $rc "dlcp-dkms: $how makes dlcp.ko $VERSION for $kver ($((SECONDS - start)) s)" \
		"$log"
done

# kernels the module is not built for, older than 5.10 and newer than the
# newest tested: skipped, not failed
for other in 5.4.0-0-amd64 7.3.0-0-amd64; do
	if [ "$use_dkms" = 0 ] || [ ! -d "$tmp/dkms/dlcp" ]; then
		skip "dlcp-dkms: dkms skips kernel $other (BUILD_EXCLUSIVE_KERNEL)" "dkms did not run"
		continue
	fi
	dkms build -m dlcp -v "$VERSION" -k "$other" "${dkms_args[@]}" > "$tmp/dkms-other.log" 2>&1
	rc=$?
	echo "dkms build exit status $rc" >> "$tmp/dkms-other.log"
	[ "$rc" = 77 ]
	result $? "dlcp-dkms: dkms skips kernel $other (BUILD_EXCLUSIVE_KERNEL, exit 77)" \
		"$tmp/dkms-other.log"
done

# ------------------------------------------------------------------ install

debs=()
for p in "${PKGS[@]}"; do
	debs+=("$(compgen -G "$tmp/${p}_${VERSION}_*.deb")")
done
apt-get -s -q -o Debug::NoLocking=1 install "${debs[@]}" > "$tmp/apt.log" 2>&1 &&
	[ "$(grep -c '^Conf ' "$tmp/apt.log")" -ge "${#PKGS[@]}" ]
result $? "the packages' dependencies resolve (apt-get --simulate install)" "$tmp/apt.log"

# ------------------------------------------------------------------ lintian

if ! command -v lintian > /dev/null; then
	skip "lintian: no errors or warnings" "no lintian"
else
	lintian -I --pedantic --show-overrides --fail-on error,warning \
		"$tmp/dlcp_${VERSION}"_*.changes > "$tmp/lintian.log" 2>&1
	rc=$?
	result $rc "lintian: no errors or warnings (overrides: debian/*.lintian-overrides)" \
		"$tmp/lintian.log"
	grep -E '^[EWIPOX]:' "$tmp/lintian.log" | sed 's/^/# /'
fi

# ------------------------------------------------------------------ tree

state_after=$(tree_state)
if ! git -C "$TOP" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
	skip "the source tree is unchanged" "not a git checkout"
else
	diff <(echo "$state_before") <(echo "$state_after") > "$tmp/tree.log"
	result $? "the source tree is unchanged (git status, build/ aside)" "$tmp/tree.log"
fi

[ "$failed" = 0 ]
