# SPDX-License-Identifier: GPL-2.0
#
# DLCP top-level build.
#
#   make              build dlcp.ko and the userspace parts (needs only a C
#                     compiler, make and the kernel's headers; installs nothing)
#   make check        all tests: unit tests, static checks, the VM selftests
#                     on Linux 6.1 and their core on 6.12 (Debian 12's two
#                     kernels)
#   make check-6.12   the VM selftests on 6.12 alone
#   make check-kernels  the core VM selftests (API, loss, UDP, KUnit) on the
#                     oldest and newest Debian kernels: 5.10 (Debian 11)
#                     and unstable's (TEST_KERNELS)
#   make demo         the main job: DDP training over gloo/TCP and over DLCP on
#                     lossy links, side by side, in the VM
#   make demo-ps      parameter-server gradient exchange with dlcp-demo, in the VM
#   make bench        DLCP against TCP on emulated links (QUICK=1: a subset)
#   make debug-check  selftests + fuzzers on a KASAN/lockdep/kmemleak kernel
#                     (builds it once per machine, ~30-45 min; not in check)
#   make check-torch2 the torch.distributed backend's Python tests against
#                     Debian 13's torch 2.x, in a chroot made once under
#                     $DLCP_CACHE (tools/torch2-check, as root; not in check)
#   make install      install module, header, man pages, library, tools
#                     (dlcpstat, dlcp-cat, dlcp-perf, dlcp-qos) and the dlcp
#                     Python package with dlcp-run on a real node
#                     (install-module, install-userspace, install-python:
#                     one part each)
#   make uninstall    remove what install installed (uninstall-module,
#                     uninstall-userspace, uninstall-python); both run
#                     ldconfig when installing for real (root, no DESTDIR)
#   make deb          Debian packages into build/deb (debian/; needs
#                     debhelper, dh-dkms, dh-python: tools/install-deps)
#   make deb-check    build and test them (TAP; also part of unit-tests)
#   make deps         install the Debian packages of the tests and the VM
#                     (deps-6.12: and Debian's 6.12 kernel, image and headers)
#
# Building (all, module, userspace, install, dkms-install) never installs
# packages. The test targets (check, check-6.12, unit-tests, static-checks,
# selftests, vm-tests, demo*, bench, debug-*, fuzz-long, sparse, checkpatch)
# first run tools/install-deps, which apt-get installs what they need (Debian
# 12, as root); DLCP_NO_DEPS=1 skips that for all of them but check and
# check-6.12, which always install everything first (6.12 too).
#
# The module builds against /lib/modules/$(uname -r)/build where that exists
# (a real cluster node), else against the headers of the Debian kernel the
# test VM boots: 6.1 (Debian 12's linux-image-amd64), whatever else is
# installed. DLCP_KVER= (a series, 6.1 or 6.12, or a release such as
# 6.12.117+deb12-amd64) picks another test kernel, for both: the module
# builds against its headers and tools/vm-run, which reads DLCP_KVER too,
# boots it (tools/test-kernel resolves the name). KDIR= overrides the
# headers alone.

SHELL := /bin/bash
TOP := $(CURDIR)

# KDIR = $(eval KDIR := ...)$(KDIR): looked up once, when first used, so
# after tools/install-deps installed the headers
ifeq ($(origin KDIR), undefined)
  ifneq ($(DLCP_KVER),)
    KDIR = $(eval KDIR := $(shell $(TOP)/tools/test-kernel --headers $(DLCP_KVER)))$(KDIR)
  else ifneq ($(wildcard /lib/modules/$(shell uname -r)/build/Makefile),)
    KDIR := /lib/modules/$(shell uname -r)/build
  else
    KDIR = $(eval KDIR := $(shell $(TOP)/tools/test-kernel --headers))$(KDIR)
  endif
endif
export DLCP_KVER
# The kernels of other Debian releases (DLCP_KVER=5.10, sid) build in the
# chroot that has their compiler (tools/kernel-root); the others here.
KBUILD_RUN = $(TOP)/tools/kernel-root exec $(KDIR) --
# the release dlcp.ko was built for, from its vermagic (a distribution's
# headers may report another kernelrelease than the one modules_install uses)
KVER = $(or $(word 1,$(shell modinfo -F vermagic $(TOP)/kmod/dlcp.ko 2>/dev/null)),$(shell $(MAKE) -s -C $(KDIR) kernelrelease 2>/dev/null))

CC ?= cc
USER_CFLAGS := -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -I$(TOP)/uapi
export USER_CFLAGS

# the one version of the module, the tools and the packages
DLCP_RELEASE := $(shell cat $(TOP)/VERSION)
export DLCP_RELEASE

PREFIX ?= /usr/local
MANDIR ?= $(PREFIX)/share/man
INCDIR ?= $(PREFIX)/include
LIBDIR ?= $(PREFIX)/lib
# <linux/dlcp.h> goes to $(UAPI_INCDIR)/linux/dlcp.h; another directory than
# INCDIR (the Debian packages: /usr/include/dlcp) is named in libdlcp.pc
UAPI_INCDIR ?= $(INCDIR)
DESTDIR ?=
# the dlcp package goes where this python3 imports from under PREFIX
# (Debian: /usr/lib/python3/dist-packages for /usr, else
# PREFIX/lib/python3.X/dist-packages)
PYTHON ?= python3
PYTHON_SITE ?= $(shell $(PYTHON) $(TOP)/tools/python-site $(PREFIX) 2>/dev/null)
# dlcp(7), dlcpstat(8), dlcp-cat(1), dlcp-perf(1), dlcp-qos(8), libdlcp(3);
# dlcp-run(1) goes with dlcp-run (install-python)
MANPAGES := $(filter-out docs/man/dlcp-run.1,$(wildcard docs/man/*.[1-9]))
# Wireshark loads Lua plugins from its global folder ("Global Lua Plugins"
# of tshark -G folders): /usr/lib/<multiarch>/wireshark/plugins on Debian,
# where PREFIX=/usr puts dlcp.lua (and the dlcp-tools package). Wireshark
# does not look under /usr/local: there, or for one user, set
# WIRESHARK_LUADIR (~/.local/lib/wireshark/plugins for a user).
MULTIARCH ?= $(shell $(CC) -print-multiarch 2>/dev/null)
WIRESHARK_LUADIR ?= $(PREFIX)/lib/$(if $(MULTIARCH),$(MULTIARCH)/)wireshark/plugins

# The goals that need the test packages (tools/install-deps). When one of them
# is asked for, the build targets depend on deps too, so that the packages are
# there before anything is built (also under make -j); a plain build never runs
# apt-get. DLCP_NO_DEPS=1 skips the package check (a machine set up by hand);
# make check ignores it.
TEST_GOALS := deps deps-6.12 deps-kernels check check-6.12 check-kernels unit-tests static-checks selftests \
	vm-tests kunit-module demo demo-train demo-coll demo-ps bench fuzz-long \
	debug-kernel debug-module debug-check sparse checkpatch deb-check
DEPS_STAMP := $(if $(DLCP_NO_DEPS),,$(if $(filter $(TEST_GOALS),$(MAKECMDGOALS)),deps))

.PHONY: all deps deps-6.12 deps-kernels check-kernels deps-source module userspace test-progs selftests \
	check check-6.12 unit-tests static-checks vm-tests demo demo-coll demo-ps \
	install install-module install-userspace install-python uninstall \
	uninstall-module uninstall-userspace uninstall-python clean checkpatch sparse \
	dlcpstat dkms-install dkms-uninstall deb deb-check bench perf demo-train fuzz-long \
	debug-kernel debug-module debug-check kunit-module check-torch2 kernels-tests

all: module userspace

deps:
	@tools/install-deps

# the second test kernel (make check, check-6.12)
deps-6.12:
	@tools/install-deps --kernel 6.12

deps-source:
	@tools/install-deps --source

# The kernels of other Debian releases that make check-kernels tests on,
# each in a chroot of its release (tools/kernel-root): the oldest DLCP
# supports and the newest Debian publishes.
TEST_KERNELS := bullseye sid
deps-kernels:
	@tools/install-deps $(addprefix --kernel ,$(TEST_KERNELS))

# (with DLCP_KVER, tools/test-kernel has said which headers are missing)
module: $(DEPS_STAMP)
	@[ -n "$(KDIR)" ] && [ -f "$(KDIR)/Makefile" ] || { [ -n "$(DLCP_KVER)" ] || \
		echo "no kernel headers found: install those of the running kernel" \
		     "(Debian/Ubuntu: apt-get install linux-headers-$$(uname -r))" \
		     "or set KDIR= (or DLCP_KVER=: tools/test-kernel --list)" >&2; exit 1; }
	$(KBUILD_RUN) $(MAKE) -C kmod KDIR=$(KDIR) W=1

# what a node runs: tools, library, demo and benchmark programs (libc only)
userspace: $(DEPS_STAMP)
	$(MAKE) -C userspace/demo
	$(MAKE) -C userspace/tools
	$(MAKE) -C userspace/lib
	$(MAKE) -C userspace/perf

# the test programs (cmocka): host unit tests, libdlcp's tests in the VM
test-progs: $(DEPS_STAMP) userspace
	$(MAKE) -C userspace/tests
	$(MAKE) -C userspace/lib/tests

dlcpstat:
	$(MAKE) -C userspace/tools dlcpstat

perf: $(DEPS_STAMP)
	$(MAKE) -C userspace/perf

# DLCP against TCP in the VM (docs/bench.md); QUICK=1 for the short subset
bench: $(DEPS_STAMP) module perf
	QUICK=$(QUICK) bench/run

selftests: $(DEPS_STAMP) deps-source
	$(MAKE) -C selftests

# ---------------------------------------------------------------------------
# Tests. Each part writes TAP/KTAP into build/; selftests/ktap-totals adds
# them up into the one closing line "N passed, N failed".
# ---------------------------------------------------------------------------
# The whole VM suite runs on 6.1, then CHECK_612_COMPONENTS on 6.12 (kmod/
# and build/kunit/ are rebuilt for it, and stay so): the API, the hostile
# peers, the loss suites' short subset natively and in UDP mode, KUnit and
# unloading, where the kernels differ; the rest is the same code on both,
# and the whole suite on both would take make check past CI's 90 minutes
# (make check-6.12 runs all of it on 6.12).
CHECK_612_COMPONENTS := dlcp_api dlcp_api_msg dlcp_api_cmsg dlcp_raw \
	dlcp_hostile dlcp_hostile_users dlcp_hostile_mem dlcp_loss.sh \
	dlcp_loss_udp.sh dlcp_kunit.sh dlcp_module.sh
check: deps-6.12 deps-source
	@mkdir -p build
	@rm -f build/*.tap
	@rc=0; \
	$(MAKE) --no-print-directory unit-tests || rc=1; \
	$(MAKE) --no-print-directory static-checks || rc=1; \
	$(MAKE) --no-print-directory vm-tests || rc=1; \
	DLCP_LOSS_CORE=1 $(MAKE) --no-print-directory vm-tests \
		DLCP_KVER=6.12 COMPONENTS="$(CHECK_612_COMPONENTS)" || rc=1; \
	selftests/ktap-totals build/*.tap || rc=1; \
	exit $$rc

unit-tests: $(DEPS_STAMP) test-progs
	@mkdir -p build
	$(MAKE) -s -C userspace/tests run 2>&1 | tee build/unit.tap
	$(MAKE) -s -C userspace/tools check 2>&1 | tee build/tools.tap
	$(MAKE) -s -C userspace/lib/tests run 2>&1 | tee build/libdlcp.tap
	$(MAKE) -s -C fuzz check 2>&1 | tee build/fuzz.tap
	{ /usr/bin/python3 userspace/python/test_layout.py; \
	  userspace/python/test_install.sh; } 2>&1 | tee build/python.tap
	packaging/test-deb.sh 2>&1 | tee build/deb.tap
	/usr/bin/python3 bench/tests/test_report.py 2>&1 | tee build/plots.tap

static-checks: $(DEPS_STAMP) deps-source
	@mkdir -p build
	tools/static-checks $(KDIR) 2>&1 | tee build/static.tap
	tools/check-man 2>&1 | tee build/man.tap

# build_kmod_copy KDIR,DIR,MAKEVARS: dlcp.ko (and what MAKEVARS add) from a
# copy of kmod/ in DIR/kmod, so that the kmod/ build stays as it is
define build_kmod_copy
	rm -rf $(2)/kmod $(2)/uapi
	mkdir -p $(2)/kmod $(2)/uapi/linux
	cp kmod/*.c kmod/*.h kmod/Kbuild kmod/Makefile $(2)/kmod/
	cp uapi/linux/*.h $(2)/uapi/linux/
	cp VERSION $(2)/
	$(TOP)/tools/kernel-root exec $(1) -- $(MAKE) -C $(2)/kmod KDIR=$(1) $(3) W=1
endef

# The KUnit tests (kmod/dlcp_*_test.c): dlcp_test.ko, with a dlcp.ko that
# exports what they call, in build/kunit/kmod (selftests/dlcp_kunit.sh)
kunit-module: $(DEPS_STAMP)
	$(call build_kmod_copy,$(KDIR),$(TOP)/build/kunit,DLCP_KUNIT=1)

# the VM selftests on the test kernel: build/vm.tap, build/vm-KVER.tap
# when DLCP_KVER names one; COMPONENTS="dlcp_api ..." runs those alone
# (selftests/run_vm.sh)
vm-tests: module kunit-module userspace test-progs selftests
	@mkdir -p build
	selftests/run.sh $(COMPONENTS) 2>&1 | tee build/vm$(if $(DLCP_KVER),-$(DLCP_KVER)).tap

# The VM selftests on Debian's 6.12 (tools/install-deps --kernel 6.12
# installs its image and headers): kmod/dlcp.ko and the KUnit module are
# rebuilt for it and tools/vm-run boots it; build/vm-6.12.tap
check-6.12: deps-6.12
	@mkdir -p build
	@rm -f build/vm-6.12.tap
	@rc=0; \
	$(MAKE) --no-print-directory vm-tests DLCP_KVER=6.12 || rc=1; \
	selftests/ktap-totals build/vm-6.12.tap || rc=1; \
	exit $$rc

# The core VM selftests on each of TEST_KERNELS (build/vm-SUITE.tap): the
# module and the KUnit module are built against it, in its chroot, and it
# is booted; dlcp_loss.sh and dlcp_loss_udp.sh run their short subset
# (DLCP_LOSS_CORE=1). The rest of the suite runs on 6.1 and 6.12.
# dlcp_torch.sh is not among them: its whole run takes over 10 minutes under
# TCG, past make check's budget; CORE_COMPONENTS="... dlcp_torch.sh" adds it.
CORE_COMPONENTS := dlcp_api dlcp_loss.sh dlcp_loss_udp.sh dlcp_kunit.sh
kernels-tests:
	@rc=0; \
	for k in $(TEST_KERNELS); do \
		echo "# core VM selftests on Debian $$k's kernel" \
			"$$(tools/test-kernel --release $$k)"; \
		DLCP_TORCH_LOSS=0 DLCP_LOSS_CORE=1 $(MAKE) --no-print-directory \
			vm-tests DLCP_KVER=$$k COMPONENTS="$(CORE_COMPONENTS)" || rc=1; \
	done; \
	exit $$rc

check-kernels: deps-kernels
	@mkdir -p build
	@rm -f $(TEST_KERNELS:%=build/vm-%.tap)
	@rc=0; \
	$(MAKE) --no-print-directory kernels-tests || rc=1; \
	selftests/ktap-totals $(TEST_KERNELS:%=build/vm-%.tap) || rc=1; \
	exit $$rc

checkpatch: $(DEPS_STAMP) deps-source
	$$(tools/install-deps --print-source-dir)/scripts/checkpatch.pl --strict \
		--no-tree -f kmod/dlcp_*.c kmod/dlcp_af.h kmod/dlcp_impl.h \
		kmod/dlcp_mib.h kmod/dlcp_msg.h kmod/dlcp_wire.h uapi/linux/dlcp.h
	$$(tools/install-deps --print-source-dir)/scripts/checkpatch.pl \
		--no-tree -f kmod/dlcp_trace.h
	$$(tools/install-deps --print-source-dir)/scripts/checkpatch.pl --strict \
		--no-tree --ignore LINUX_VERSION_CODE,MACRO_WITH_FLOW_CONTROL -f kmod/dlcp_compat.h

sparse: $(DEPS_STAMP)
	$(MAKE) -C $(KDIR) M=$(TOP)/kmod CONFIG_DLCP=m C=2 CHECK=sparse modules

# DDP training of a small model over gloo/TCP and over DLCP on the same
# lossy links, plus a lossless reference (userspace/python/demo_train.sh)
demo: $(DEPS_STAMP) module userspace test-progs
	tools/vm-run --timeout 2400 -- userspace/python/demo_train.sh

demo-train: demo

# the demo's all-reduce alone (no model): TCP and DLCP, ring and direct
demo-coll: $(DEPS_STAMP) module userspace test-progs
	tools/vm-run --timeout 1800 --env WORKLOAD=coll -- userspace/python/demo_train.sh

# a parameter server and 3 workers exchange gradients with dlcp-demo
demo-ps: $(DEPS_STAMP) module userspace test-progs
	tools/vm-run --timeout 900 -- tools/demo

# the long fuzz and soak runs (not part of make check)
fuzz-long: module selftests
	@mkdir -p build
	$(MAKE) -C fuzz run-long FUZZ_LONG_TIME=3600
	tools/vm-run --timeout 3600 --insmod kmod/dlcp.ko \
		--env DLCP_FUZZ_LONG=1 -- \
		selftests/dlcp_fuzz.sh 2>&1 | tee build/fuzz-long.tap
	tools/vm-run --timeout 3600 --insmod kmod/dlcp.ko \
		--env DLCP_STRESS_CYCLES=100 -- \
		selftests/dlcp_stress.sh 2>&1 | tee build/stress-long.tap

# ---------------------------------------------------------------------------
# The debug kernel (docs/debug-kernel.md): Debian's linux-source-6.1 with
# KASAN, lockdep, kmemleak, KFENCE, UBSAN, DEBUG_ATOMIC_SLEEP, built once
# into $(DLCP_CACHE)/debug-kernel; dlcp.ko for it is built from a copy of
# kmod/ in build/debug/ (the normal kmod/ build stays as it is).
# ---------------------------------------------------------------------------
DEBUG_KDIR = $(shell tools/build-debug-kernel --print-dir)
DEBUG_MOD := $(TOP)/build/debug

debug-kernel: deps deps-source
	tools/build-debug-kernel

debug-module: debug-kernel
	$(call build_kmod_copy,$(DEBUG_KDIR),$(DEBUG_MOD),)
	$(call build_kmod_copy,$(DEBUG_KDIR),$(DEBUG_MOD)/kunit,DLCP_KUNIT=1)

debug-check: debug-module userspace test-progs selftests
	$(MAKE) -C fuzz vm
	@mkdir -p build
	tools/debug-check --log build/debug.tap; rc=$$?; \
	selftests/ktap-totals build/debug.tap || rc=1; exit $$rc

# the Python tests of dlcp.backend on torch 2.x (Debian 13's): a chroot
# under $DLCP_CACHE (default /var/cache/dlcp), made once; builds libdlcp
check-torch2:
	tools/torch2-check

# ---------------------------------------------------------------------------
# Installation on a real node
# ---------------------------------------------------------------------------
install: install-module install-userspace install-python

install-module: module
	$(MAKE) -C $(KDIR) M=$(TOP)/kmod INSTALL_MOD_DIR=extra \
		INSTALL_MOD_PATH=$(DESTDIR) modules_install
	[ -n "$(DESTDIR)" ] || depmod -a $(KVER)

# everything but the module (debian/rules installs this part)
install-userspace: userspace
	install -D -m 0644 uapi/linux/dlcp.h $(DESTDIR)$(UAPI_INCDIR)/linux/dlcp.h
	for p in $(MANPAGES); do \
		install -D -m 0644 $$p $(DESTDIR)$(MANDIR)/man$${p##*.}/$${p##*/} || exit 1; \
	done
	$(MAKE) -C userspace/tools install DESTDIR=$(DESTDIR) PREFIX=$(PREFIX)
	install -D -m 0755 userspace/perf/dlcp-perf $(DESTDIR)$(PREFIX)/bin/dlcp-perf
	install -d $(DESTDIR)$(PREFIX)/sbin
	sed 's|^DLCP_RELEASE=@DLCP_RELEASE@$$|DLCP_RELEASE=$(DLCP_RELEASE)|' \
		tc-scripts/dlcp-qos > $(DESTDIR)$(PREFIX)/sbin/dlcp-qos
	chmod 0755 $(DESTDIR)$(PREFIX)/sbin/dlcp-qos
	$(MAKE) -C userspace/lib install DESTDIR=$(DESTDIR) PREFIX=$(PREFIX) \
		LIBDIR=$(LIBDIR) INCDIR=$(INCDIR) UAPI_INCDIR=$(UAPI_INCDIR)
	install -D -m 0644 tools/wireshark/dlcp.lua \
		$(DESTDIR)$(WIRESHARK_LUADIR)/dlcp.lua

# the dlcp package (what pip installs from userspace/python, less the
# library: it loads the one install-userspace put into LIBDIR, which its
# dlcp/_build.py names) and dlcp-run
install-python:
	@[ -n "$(PYTHON_SITE)" ] || { echo "install-python: no $(PYTHON) to ask" \
		"where packages go; set PYTHON_SITE=" >&2; exit 1; }
	install -d $(DESTDIR)$(PYTHON_SITE)/dlcp $(DESTDIR)$(PREFIX)/bin
	install -m 0644 userspace/python/dlcp/*.py userspace/python/dlcp/py.typed \
		$(DESTDIR)$(PYTHON_SITE)/dlcp/
	sed -e 's|@VERSION@|$(DLCP_RELEASE)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		userspace/python/dlcp/_build.py.in > $(DESTDIR)$(PYTHON_SITE)/dlcp/_build.py
	{ echo "#!$$($(PYTHON) -c 'import sys; print(sys.executable)')"; \
	  echo '# torchrun with the fix for torch 1.13 on Python 3.11 (dlcp.run)'; \
	  echo 'import sys'; echo 'from dlcp.run import main'; echo 'sys.exit(main())'; \
	} > $(DESTDIR)$(PREFIX)/bin/dlcp-run
	chmod 0755 $(DESTDIR)$(PREFIX)/bin/dlcp-run
	install -D -m 0644 docs/man/dlcp-run.1 $(DESTDIR)$(MANDIR)/man1/dlcp-run.1

uninstall: uninstall-python uninstall-module uninstall-userspace

uninstall-python:
	[ -z "$(PYTHON_SITE)" ] || rm -rf $(DESTDIR)$(PYTHON_SITE)/dlcp
	rm -f $(DESTDIR)$(PREFIX)/bin/dlcp-run $(DESTDIR)$(MANDIR)/man1/dlcp-run.1

uninstall-module:
	rm -f $(DESTDIR)/lib/modules/$(KVER)/extra/dlcp.ko*
	[ -n "$(DESTDIR)" ] || depmod -a $(KVER)

uninstall-userspace:
	rm -f $(DESTDIR)$(UAPI_INCDIR)/linux/dlcp.h
	for p in $(MANPAGES); do \
		rm -f $(DESTDIR)$(MANDIR)/man$${p##*.}/$${p##*/}; \
	done
	$(MAKE) -C userspace/tools uninstall DESTDIR=$(DESTDIR) PREFIX=$(PREFIX)
	rm -f $(DESTDIR)$(PREFIX)/bin/dlcp-perf $(DESTDIR)$(PREFIX)/sbin/dlcp-qos
	$(MAKE) -C userspace/lib uninstall DESTDIR=$(DESTDIR) PREFIX=$(PREFIX) \
		LIBDIR=$(LIBDIR) INCDIR=$(INCDIR)
	rm -f $(DESTDIR)$(WIRESHARK_LUADIR)/dlcp.lua

dkms-install:
	packaging/dkms-install.sh

dkms-uninstall:
	packaging/dkms-install.sh --remove

# ---------------------------------------------------------------------------
# Debian packages (debian/): dpkg-buildpackage -us -uc -b in a temporary copy
# of the tree, which stays as it is. deb puts the .debs, .changes and
# .buildinfo into build/deb/; deb-check also tests them (TAP: extracted
# packages, a program built against libdlcp-dev, dkms build of dlcp-dkms
# for the 6.1 headers, lintian).
# ---------------------------------------------------------------------------
deb:
	packaging/test-deb.sh --build-only --out $(TOP)/build/deb

deb-check: $(DEPS_STAMP)
	@mkdir -p build
	@set -o pipefail; packaging/test-deb.sh 2>&1 | tee build/deb.tap

clean:
	$(MAKE) -C kmod KDIR=$(KDIR) clean
	-$(MAKE) -C userspace/tests clean
	-$(MAKE) -C userspace/demo clean
	-$(MAKE) -C userspace/tools clean
	-$(MAKE) -C userspace/perf clean
	-$(MAKE) -C userspace/lib clean
	-$(MAKE) -C userspace/lib/tests clean
	-$(MAKE) -C fuzz clean
	-$(MAKE) -C selftests clean
	rm -rf build
