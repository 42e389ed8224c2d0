#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The loss-budget suite (its short subset; all of it with DLCP_SLOW=1) with
# DLCP inside UDP (net.dlcp.encap=1), plus the UDP cases: source-port
# entropy, a port in use, malformed payloads.
DLCP_ENCAP=udp exec "$(dirname "$0")/dlcp_loss.sh" "$@"
