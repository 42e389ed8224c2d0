/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DLCP's counters: the per network namespace MIB behind
 * /proc/net/dlcp/snmp (dlcpstat). Each field is shown under the name
 * dlcp_mib_names[] gives it (DlcpDropShort, ...), the names dlcp(7)
 * documents; the comment of each says what it counts. Incremented with
 * DLCP_INC_STATS() and DLCP_ADD_STATS() (dlcp_impl.h).
 */
#ifndef _DLCP_MIB_H
#define _DLCP_MIB_H

#include "dlcp_wire.h"

/*
 * The drop reasons of the pure validator come first, in the order of
 * enum dlcp_drop_reason, so that a validator result indexes the MIB.
 */
enum dlcp_mib_field {
	DLCP_MIB_NONE = DLCP_DROP_NONE,		/* unused slot */
	DLCP_MIB_DROP_SHORT = DLCP_DROP_SHORT,	/* shorter than a header */
	DLCP_MIB_DROP_VERSION,		/* unknown version */
	DLCP_MIB_DROP_TYPE,		/* unknown packet type */
	DLCP_MIB_DROP_HDRLEN,		/* header words bad */
	DLCP_MIB_DROP_LEN,		/* length != IP payload */
	DLCP_MIB_DROP_FLAGS,		/* unknown flags */
	DLCP_MIB_DROP_MSGLEN,		/* 0 or over the max */
	DLCP_MIB_DROP_OFFSET,		/* empty or past end */
	DLCP_MIB_DROP_GAPS,		/* REPORT gaps malformed */
	DLCP_MIB_DROP_FIELD,		/* metadata out of range */
	/* bad checksum: the first counter past the validator's */
	DLCP_MIB_CSUM_ERRORS = __DLCP_DROP_PURE_MAX,
	DLCP_MIB_DROP_NOSOCKET,		/* no socket bound to the port */
	DLCP_MIB_DROP_RCVMEM,		/* receive memory limit reached */
	DLCP_MIB_DROP_NOMEM,		/* allocation failed */
	DLCP_MIB_DROP_RANGES,		/* too many disjoint ranges */
	DLCP_MIB_DROP_CLOSED,		/* socket closing */
	DLCP_MIB_DROP_MISMATCH,		/* packet disagrees with message state */
	DLCP_MIB_DROP_NOT_HOST,		/* not addressed to this host */
	DLCP_MIB_DROP_UNKNOWN_MSG,	/* report/stop for no outgoing message */
	DLCP_MIB_DROP_POLICY,		/* refused by IPsec policy */
	DLCP_MIB_DROP_FILTER,		/* socket filter, cgroup BPF or LSM */
	DLCP_MIB_DROP_ADDR,		/* IPv6 packet with a v4-mapped address */
	DLCP_MIB_DROP_PROTOMEM,		/* net.dlcp.mem or memory cgroup limit */
	DLCP_MIB_DROP_INMSGS,		/* net.dlcp.max_in_msgs being received */
	DLCP_MIB_DROP_PEERMSGS,		/* net.dlcp.max_in_msgs_peer from one */
	DLCP_MIB_DROP_GSO,		/* in a GSO packet not DLCP's making, or
					 * one that could not be cut
					 */
	DLCP_MIB_DROP_UDP_SPORT,	/* UDP mode: from a source port that an
					 * unprivileged user may bind
					 */
	DLCP_MIB_IN_ZOMBIES_EVICTED,	/* delivered messages forgotten early */
	DLCP_MIB_ICMP_IGNORED,		/* "too big" quoting no message of ours */
	DLCP_MIB_IN_PKTS,		/* received, before any validation */
	DLCP_MIB_OUT_PKTS,		/* transmitted, all types */
	DLCP_MIB_IN_DATA_PKTS,		/* valid DATA delivered to a socket */
	DLCP_MIB_OUT_DATA_PKTS,		/* DATA transmitted */
	DLCP_MIB_IN_DUP_PKTS,		/* data already held */
	DLCP_MIB_IN_LATE_PKTS,		/* data for a delivered message */
	DLCP_MIB_RETRANS_PKTS,		/* DATA retransmitted */
	DLCP_MIB_RETRANS_REPORTED,	/* retransmission: gap in a report */
	DLCP_MIB_RETRANS_TIMEOUT,	/* retransmission: guard timer */
	DLCP_MIB_RETRANS_UNDONE,	/* found lost, reported received
					 * before it was resent
					 */
	DLCP_MIB_LOSS_HELD,		/* not found lost yet: its CPU's
					 * backlog held packets
					 */
	DLCP_MIB_OUT_MSGS,		/* messages accepted by sendmsg */
	DLCP_MIB_OUT_PROTOMEM,		/* sendmsg refused: net.dlcp.mem or share */
	DLCP_MIB_OUT_MSGS_DONE,		/* STOP received */
	DLCP_MIB_OUT_MSGS_FAILED,	/* no answer within msg_timeout */
	DLCP_MIB_OUT_MSGS_LOSSY,	/* STOP reported bytes given up */
	DLCP_MIB_OUT_MSGS_DEADLINE,	/* STOP reported the deadline failure */
	DLCP_MIB_OUT_BYTES_GIVEN_UP,	/* bytes the receivers gave up on */
	DLCP_MIB_RETRANS_AVOIDED,	/* lost segments not resent: in budget */
	DLCP_MIB_COMPLETIONS_DROPPED,	/* error queue full */
	DLCP_MIB_IN_MSGS,		/* messages delivered to a socket */
	DLCP_MIB_IN_MSGS_EXACT,		/* of them, with every byte */
	DLCP_MIB_IN_MSGS_LOSSY,		/* delivered within the loss budget */
	DLCP_MIB_IN_BYTES_LOST,		/* bytes zero-filled at delivery */
	DLCP_MIB_IN_MSGS_FAILED,	/* dropped: deadline passed over budget */
	DLCP_MIB_IN_MSGS_TIMEOUT,	/* incomplete, freed after msg_timeout */
	DLCP_MIB_IN_MSGS_ABORTED,	/* freed on the sender's ABORT */
	DLCP_MIB_REPORTS_SENT,		/* REPORTs sent by receivers */
	DLCP_MIB_REPORTS_RCVD,		/* REPORTs received by senders */
	DLCP_MIB_STOPS_SENT,		/* STOPs: message delivered or failed */
	DLCP_MIB_STOPS_RCVD,		/* STOPs received */
	DLCP_MIB_PROBES_SENT,		/* PROBEs: the sender asks for a REPORT */
	DLCP_MIB_PROBES_RCVD,		/* PROBEs received */
	DLCP_MIB_TLP_PROBES,		/* of them, tail loss probes */
	DLCP_MIB_DUP_REPORTS,		/* REPORTs flagged DLCP_RF_DUP */
	DLCP_MIB_SPURIOUS_TIMEOUTS,	/* of them, for a timeout's resend */
	DLCP_MIB_ABORTS_SENT,		/* ABORTs: the sender gave a message up */
	DLCP_MIB_ABORTS_RCVD,		/* ABORTs received */
	DLCP_MIB_NOPORT_SENT,		/* STOPs flagged NOPORT: DATA or PROBE
					 * for a port no socket holds
					 */
	DLCP_MIB_NOPORT_LIMITED,	/* of those, not answered: over
					 * net.dlcp.noport_rate
					 */
	DLCP_MIB_NOPORT_RCVD,		/* STOPs flagged NOPORT received: the
					 * message failed with ECONNREFUSED
					 */
	DLCP_MIB_OUT_NO_ROUTE,		/* transmission failed: no route */
	DLCP_MIB_OUT_PATH_SKIPPED,	/* DLCP_PATHS path skipped: no route */
	DLCP_MIB_OUT_ERRORS,		/* transmission failed: other */
	DLCP_MIB_PMTU_UPDATES,		/* ICMP fragmentation needed */
	DLCP_MIB_RESEGMENTED,		/* messages re-cut to a smaller MTU */
	DLCP_MIB_UDP_IN_PKTS,		/* packets received inside UDP */
	DLCP_MIB_UDP_OUT_PKTS,		/* packets sent inside UDP */
	DLCP_MIB_UDP_GSO_OUT,		/* UDP GSO super-packets sent */
	DLCP_MIB_GSO_OUT,		/* native super-packets sent */
	DLCP_MIB_GSO_IN,		/* native super-packets received whole */
	DLCP_MIB_UDP_GSO_IN,		/* UDP GSO super-packets received whole */
	DLCP_MIB_UDP_GSO_CUT,		/* UDP GSO super-packets received and
					 * cut into their datagrams: not a
					 * run of DLCP_MIB_UDP_GSO_IN's shape
					 */
	DLCP_MIB_IN_DATA_KEPT,		/* DATA kept by reference, not copied
					 * until recvmsg (net.dlcp.rx_keep)
					 */
	DLCP_MIB_OUT_CLASS0,		/* packets sent in class 0 ... */
	DLCP_MIB_OUT_CLASS7 = DLCP_MIB_OUT_CLASS0 + 7,	/* ... and 7 */
	__DLCP_MIB_MAX
};

struct dlcp_mib {
	unsigned long	mibs[__DLCP_MIB_MAX];
};

extern const char * const dlcp_mib_names[__DLCP_MIB_MAX];

#endif /* _DLCP_MIB_H */
