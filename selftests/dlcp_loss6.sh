#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The loss-budget suite (dlcp_loss.sh; its short subset, all of it with
# DLCP_SLOW=1) over IPv6 inside UDP: AF_INET6 sockets, the IPv6 UDP
# encapsulation socket, the UDP cases.
DLCP_FAMILY=6 DLCP_ENCAP=udp exec "$(dirname "$0")/dlcp_loss.sh" "$@"
