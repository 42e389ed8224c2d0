#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The torch.distributed backend (dlcp.backend) over DLCP in the VM:
# torchrun jobs of 2 and 3 ranks, every operation and dtype exact on a
# clean lo, then within the loss budget on a lossy one
# (userspace/python/test_backend.py via userspace/lib/tests/run_vm.sh;
# TAP). Skipped where /usr/bin/python3 cannot import torch.distributed.
exec env DLCP_TEST_TORCH=only \
	"$(dirname "$0")/../userspace/lib/tests/run_vm.sh" "$@"
