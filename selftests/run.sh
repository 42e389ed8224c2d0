#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host side of the DLCP selftests: builds the test programs (on the host:
# the guest shares this root but compiling under TCG is slow), boots the
# test VM with tools/vm-run and runs selftests/run_vm.sh there, which
# loads kmod/dlcp.ko and prints one KTAP stream.
#
# usage: selftests/run.sh [--log FILE] [run_vm.sh ARGS...]
#   --log FILE   also write the KTAP output to FILE (for ktap-totals)
#   e.g. selftests/run.sh dlcp_api dlcp_api_msg dlcp_api_cmsg   the API tests
#
# Exit status: that of run_vm.sh in the VM (0: all passed), or vm-run's
# (124 timeout, 125 kernel warning, ...). Environment: DLCP_VM_TIMEOUT
# (seconds, default 3600), KSFT_DIR (kselftest harness, see Makefile);
# passed to the guest: DLCP_SLOW=1 (every case of dlcp_loss_udp.sh and
# dlcp_loss6.sh, not their short subset),
# DLCP_BIG (big message of dlcp_netns.sh, default 16m), DLCP_XFER_TIMEOUT,
# DLCP_TORCH_LOSS=0 (dlcp_torch.sh without its lossy pass), DLCP_LOSS_CORE=1
# (dlcp_loss.sh's short subset).

set -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd -P)
TOP=$(cd "$HERE/.." && pwd -P)
log=/dev/null

if [ "${1:-}" = --log ]; then
	log=$2
	shift 2
fi

if [ ! -f "$TOP/kmod/dlcp.ko" ]; then
	echo "run.sh: $TOP/kmod/dlcp.ko not built (make -C kmod)" >&2
	exit 2
fi
make -s -C "$HERE" all || exit 2
# dlcp_dissector.sh uses the userspace tools; build them here, not in TCG.
if [ -f "$TOP/userspace/tools/Makefile" ]; then
	make -s -C "$TOP/userspace/tools" || exit 2
fi

# Knobs of the in-guest scripts, passed on when set.
envs=()
for v in DLCP_SLOW DLCP_BIG DLCP_XFER_TIMEOUT DLCP_TORCH_LOSS DLCP_LOSS_CORE; do
	[ -n "${!v:-}" ] && envs+=(--env "$v=${!v}")
done

# init_on_alloc=0: Debian's kernels zero every page they allocate, which
# would hide a read of a page that the module did not write first (a lost
# byte must read as zero, and never as a page's earlier contents).
cd "$TOP" || exit 2
tools/vm-run --timeout "${DLCP_VM_TIMEOUT:-3600}" --append init_on_alloc=0 \
	"${envs[@]}" -- \
	selftests/run_vm.sh "$@" | tee "$log"
