#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The foundation transfer suite (dlcp_netns.sh) over IPv6: AF_INET6
# sockets, addresses fd77::N, native encapsulation.
DLCP_FAMILY=6 exec "$(dirname "$0")/dlcp_netns.sh" "$@"
