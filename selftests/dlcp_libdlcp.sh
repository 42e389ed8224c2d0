#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# libdlcp's collectives and Python bindings over DLCP in the VM: exact
# results, and means over the contributions that arrived under netem loss
# (userspace/lib/tests/run_vm.sh; TAP).
exec "$(dirname "$0")/../userspace/lib/tests/run_vm.sh" "$@"
