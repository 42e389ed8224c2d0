#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# libdlcp collectives over DLCP, inside the test VM (module built):
#   tools/vm-run --timeout 300 -- userspace/lib/tests/run_vm.sh
# 1. exact: every collective and bad case over 127.0.0.1 in a fresh netns;
# 2. lossy: netem loss on lo of another netns, budget 10%: every element of
#    the result must be the mean over the contributions that arrived.
# With DLCP_TEST_TORCH=1 also the torch.distributed backend's test
# (userspace/python/test_backend.py: torchrun jobs of 2 and 3 ranks) over
# DLCP, in both namespaces; with DLCP_TEST_TORCH=only that test alone
# (selftests/dlcp_torch.sh); DLCP_TORCH_LOSS=0 leaves out its lossy pass
# (make check's second kernel: the backend is the same userspace, and the
# module's loss recovery has suites of its own on both kernels). torch is
# slow to import in the VM, give it
#   tools/vm-run --timeout 3600 --insmod kmod/dlcp.ko --env DLCP_TEST_TORCH=1 \
#       -- userspace/lib/tests/run_vm.sh
# TAP on stdout.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../../.." && pwd)
LOSS=${DLCP_TEST_LOSS:-2%}

if ! grep -q '^dlcp ' /proc/modules; then
	insmod "$TOP/kmod/dlcp.ko" || { echo "not ok 1 - insmod dlcp.ko"; exit 1; }
fi
modprobe sch_netem 2>/dev/null
TORCH=${DLCP_TEST_TORCH:-0}
rc=0
ip netns del lx 2>/dev/null; ip netns add lx
ip -n lx link set lo up
if [ "$TORCH" != only ]; then
	ip netns exec lx "$HERE/test_coll" dlcp || rc=1
	ip netns exec lx "$HERE/test_moves" dlcp || rc=1
	ip netns exec lx "$HERE/test_qcoll" dlcp || rc=1
	# the Python bindings over DLCP (torch import is slow in the VM: skipped)
	ip netns exec lx /usr/bin/python3 "$TOP/userspace/python/test_dlcp.py" dlcp --no-torch || rc=1
fi
if [ "$TORCH" != 0 ]; then
	ip netns exec lx timeout 1500 /usr/bin/python3 \
		"$TOP/userspace/python/test_backend.py" dlcp || rc=1
fi
ip netns del lx

ip netns add ll
ip -n ll link set lo up
# Ethernet-sized segments, so that a loss is a small part of a message,
# sent packet by packet (GSO off): netem drops a super-packet whole
ip -n ll link set lo mtu 1500
ip netns exec ll ethtool -K lo gso off > /dev/null || rc=1
ip netns exec ll tc qdisc add dev lo root netem loss random "$LOSS"
echo "# lo: netem loss $LOSS"
if [ "$TORCH" != only ]; then
	ip netns exec ll "$HERE/test_coll" dlcp --loss || rc=1
	ip netns exec ll "$HERE/test_moves" dlcp --loss || rc=1
	ip netns exec ll "$HERE/test_qcoll" dlcp --loss || rc=1
fi
if [ "$TORCH" != 0 ] && [ "${DLCP_TORCH_LOSS:-1}" = 0 ]; then
	printf 'TAP version 13\n1..1\nok 1 - torch backend under loss # SKIP %s\n' \
		"DLCP_TORCH_LOSS=0: make check runs it on the first kernel only"
elif [ "$TORCH" != 0 ]; then
	ip netns exec ll timeout 1500 /usr/bin/python3 \
		"$TOP/userspace/python/test_backend.py" dlcp --loss || rc=1
fi
ip netns exec ll cat /proc/net/dlcp/snmp 2>/dev/null | sed 's/^/# /' | head -40
ip netns del ll
exit $rc
