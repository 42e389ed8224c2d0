// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/net/dlcp/snmp: the per-namespace counters, one "Name value" line
 * each, in the format of /proc/net/sctp/snmp.
 *
 * /proc/net/dlcp/sockets: the namespace's bound sockets, one line each,
 * in the manner of /proc/net/udp (addresses and ports in hex, as there):
 *   sl local_address rem_address st tx_mem rx_mem out_msgs in_msgs
 *   cwnd srtt_us uid inode
 * tx_mem is the bytes of outgoing messages held, rx_mem the receive
 * memory charged (partial and queued messages), out_msgs the messages
 * being sent, in_msgs the incoming messages being reassembled (and
 * remembered delivered ones), cwnd the sum of the windows of the
 * socket's destinations and srtt_us the largest of their smoothed RTTs.
 *
 * /proc/net/dlcp/peers: one line per destination of a socket (struct
 * dlcp_peer), its congestion state:
 *   sl local_address rem_address msgs inflight cwnd srtt_us rttvar_us
 *   alpha rto_shift inode
 * (rem_address without a port: the state is per host; alpha in 1/1024).
 *
 * The values are read without the socket's lock: a snapshot, as in
 * /proc/net/udp; peers are read under RCU. sock_diag (dlcp_diag.c)
 * reports the same, from the same helpers (dlcp_sock_info(),
 * dlcp_peer_info()).
 */
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <net/net_namespace.h>
#include "dlcp_impl.h"

const char * const dlcp_mib_names[__DLCP_MIB_MAX] = {
	[DLCP_MIB_DROP_SHORT]		= "DlcpDropShort",
	[DLCP_MIB_DROP_VERSION]		= "DlcpDropVersion",
	[DLCP_MIB_DROP_TYPE]		= "DlcpDropType",
	[DLCP_MIB_DROP_HDRLEN]		= "DlcpDropHdrLen",
	[DLCP_MIB_DROP_LEN]		= "DlcpDropLen",
	[DLCP_MIB_DROP_FLAGS]		= "DlcpDropFlags",
	[DLCP_MIB_DROP_MSGLEN]		= "DlcpDropMsgLen",
	[DLCP_MIB_DROP_OFFSET]		= "DlcpDropOffset",
	[DLCP_MIB_DROP_GAPS]		= "DlcpDropGaps",
	[DLCP_MIB_DROP_FIELD]		= "DlcpDropField",
	[DLCP_MIB_CSUM_ERRORS]		= "DlcpInCsumErrors",
	[DLCP_MIB_DROP_NOSOCKET]	= "DlcpDropNoSocket",
	[DLCP_MIB_DROP_RCVMEM]		= "DlcpDropRcvMem",
	[DLCP_MIB_DROP_NOMEM]		= "DlcpDropNoMem",
	[DLCP_MIB_DROP_RANGES]		= "DlcpDropRanges",
	[DLCP_MIB_DROP_CLOSED]		= "DlcpDropClosed",
	[DLCP_MIB_DROP_MISMATCH]	= "DlcpDropMismatch",
	[DLCP_MIB_DROP_NOT_HOST]	= "DlcpDropNotHost",
	[DLCP_MIB_DROP_UNKNOWN_MSG]	= "DlcpDropUnknownMsg",
	[DLCP_MIB_DROP_POLICY]		= "DlcpDropPolicy",
	[DLCP_MIB_DROP_FILTER]		= "DlcpDropFilter",
	[DLCP_MIB_DROP_ADDR]		= "DlcpDropAddr",
	[DLCP_MIB_DROP_PROTOMEM]	= "DlcpDropProtoMem",
	[DLCP_MIB_DROP_INMSGS]		= "DlcpDropInMsgs",
	[DLCP_MIB_DROP_PEERMSGS]	= "DlcpDropPeerMsgs",
	[DLCP_MIB_DROP_UDP_SPORT]	= "DlcpDropUdpSport",
	[DLCP_MIB_IN_ZOMBIES_EVICTED]	= "DlcpInZombiesEvicted",
	[DLCP_MIB_ICMP_IGNORED]		= "DlcpIcmpIgnored",
	[DLCP_MIB_IN_PKTS]		= "DlcpInPkts",
	[DLCP_MIB_OUT_PKTS]		= "DlcpOutPkts",
	[DLCP_MIB_IN_DATA_PKTS]		= "DlcpInDataPkts",
	[DLCP_MIB_OUT_DATA_PKTS]	= "DlcpOutDataPkts",
	[DLCP_MIB_IN_DUP_PKTS]		= "DlcpInDupPkts",
	[DLCP_MIB_IN_LATE_PKTS]		= "DlcpInLatePkts",
	[DLCP_MIB_RETRANS_PKTS]		= "DlcpRetransPkts",
	[DLCP_MIB_RETRANS_REPORTED]	= "DlcpRetransReported",
	[DLCP_MIB_RETRANS_TIMEOUT]	= "DlcpRetransTimeout",
	[DLCP_MIB_RETRANS_UNDONE]	= "DlcpRetransUndone",
	[DLCP_MIB_LOSS_HELD]		= "DlcpLossHeld",
	[DLCP_MIB_OUT_MSGS]		= "DlcpOutMsgs",
	[DLCP_MIB_OUT_PROTOMEM]		= "DlcpOutProtoMem",
	[DLCP_MIB_OUT_MSGS_DONE]	= "DlcpOutMsgsDone",
	[DLCP_MIB_OUT_MSGS_FAILED]	= "DlcpOutMsgsFailed",
	[DLCP_MIB_OUT_MSGS_LOSSY]	= "DlcpOutMsgsLossy",
	[DLCP_MIB_OUT_MSGS_DEADLINE]	= "DlcpOutMsgsDeadline",
	[DLCP_MIB_OUT_BYTES_GIVEN_UP]	= "DlcpOutBytesGivenUp",
	[DLCP_MIB_RETRANS_AVOIDED]	= "DlcpRetransAvoided",
	[DLCP_MIB_COMPLETIONS_DROPPED]	= "DlcpCompletionsDropped",
	[DLCP_MIB_IN_MSGS]		= "DlcpInMsgs",
	[DLCP_MIB_IN_MSGS_EXACT]	= "DlcpInMsgsExact",
	[DLCP_MIB_IN_MSGS_LOSSY]	= "DlcpInMsgsLossy",
	[DLCP_MIB_IN_BYTES_LOST]	= "DlcpInBytesLost",
	[DLCP_MIB_IN_MSGS_FAILED]	= "DlcpInMsgsFailed",
	[DLCP_MIB_IN_MSGS_TIMEOUT]	= "DlcpInMsgsTimeout",
	[DLCP_MIB_IN_MSGS_ABORTED]	= "DlcpInMsgsAborted",
	[DLCP_MIB_REPORTS_SENT]		= "DlcpReportsSent",
	[DLCP_MIB_REPORTS_RCVD]		= "DlcpReportsRcvd",
	[DLCP_MIB_STOPS_SENT]		= "DlcpStopsSent",
	[DLCP_MIB_STOPS_RCVD]		= "DlcpStopsRcvd",
	[DLCP_MIB_PROBES_SENT]		= "DlcpProbesSent",
	[DLCP_MIB_PROBES_RCVD]		= "DlcpProbesRcvd",
	[DLCP_MIB_TLP_PROBES]		= "DlcpTlpProbes",
	[DLCP_MIB_DUP_REPORTS]		= "DlcpDupReports",
	[DLCP_MIB_SPURIOUS_TIMEOUTS]	= "DlcpSpuriousTimeouts",
	[DLCP_MIB_ABORTS_SENT]		= "DlcpAbortsSent",
	[DLCP_MIB_ABORTS_RCVD]		= "DlcpAbortsRcvd",
	[DLCP_MIB_NOPORT_SENT]		= "DlcpNoPortSent",
	[DLCP_MIB_NOPORT_LIMITED]	= "DlcpNoPortLimited",
	[DLCP_MIB_NOPORT_RCVD]		= "DlcpNoPortRcvd",
	[DLCP_MIB_OUT_NO_ROUTE]		= "DlcpOutNoRoute",
	[DLCP_MIB_OUT_PATH_SKIPPED]	= "DlcpOutPathSkipped",
	[DLCP_MIB_OUT_ERRORS]		= "DlcpOutErrors",
	[DLCP_MIB_PMTU_UPDATES]		= "DlcpPmtuUpdates",
	[DLCP_MIB_RESEGMENTED]		= "DlcpResegmented",
	[DLCP_MIB_UDP_IN_PKTS]		= "DlcpUdpInPkts",
	[DLCP_MIB_UDP_OUT_PKTS]		= "DlcpUdpOutPkts",
	[DLCP_MIB_UDP_GSO_OUT]		= "DlcpUdpGsoOutPkts",
	[DLCP_MIB_GSO_OUT]		= "DlcpGsoOutPkts",
	[DLCP_MIB_GSO_IN]		= "DlcpGsoInPkts",
	[DLCP_MIB_UDP_GSO_IN]		= "DlcpUdpGsoInPkts",
	[DLCP_MIB_UDP_GSO_CUT]		= "DlcpUdpGsoCut",
	[DLCP_MIB_IN_DATA_KEPT]		= "DlcpInDataKept",
	[DLCP_MIB_DROP_GSO]		= "DlcpDropGso",
	[DLCP_MIB_OUT_CLASS0]		= "DlcpOutClass0",
	[DLCP_MIB_OUT_CLASS0 + 1]	= "DlcpOutClass1",
	[DLCP_MIB_OUT_CLASS0 + 2]	= "DlcpOutClass2",
	[DLCP_MIB_OUT_CLASS0 + 3]	= "DlcpOutClass3",
	[DLCP_MIB_OUT_CLASS0 + 4]	= "DlcpOutClass4",
	[DLCP_MIB_OUT_CLASS0 + 5]	= "DlcpOutClass5",
	[DLCP_MIB_OUT_CLASS0 + 6]	= "DlcpOutClass6",
	[DLCP_MIB_OUT_CLASS7]		= "DlcpOutClass7",
};

static int dlcp_snmp_show(struct seq_file *seq, void *v)
{
	struct net *net = seq_file_single_net(seq);
	struct dlcp_net *dn = dlcp_pernet(net);
	int i, cpu;

	for (i = 0; i < __DLCP_MIB_MAX; i++) {
		unsigned long sum = 0;

		if (!dlcp_mib_names[i])
			continue;
		for_each_possible_cpu(cpu)
			sum += per_cpu_ptr(dn->mib, cpu)->mibs[i];
		seq_printf(seq, "%-32s%lu\n", dlcp_mib_names[i], sum);
	}
	return 0;
}

/*
 * An address as /proc/net/udp (IPv4: 8 hex digits) or /proc/net/udp6
 * (IPv6: 32) print it.
 */
static void dlcp_seq_addr(struct seq_file *seq, const struct in6_addr *a)
{
	const __be32 *w = a->s6_addr32;

	if (dlcp_addr_is_v4(a) || ipv6_addr_any(a))
		seq_printf(seq, "%08X", w[3]);
	else
		seq_printf(seq, "%08X%08X%08X%08X", w[0], w[1], w[2], w[3]);
}

/*
 * What /proc/net/dlcp/{sockets,peers} and sock_diag (dlcp_diag.c) report
 * of a socket and of each of its destinations. Read without the socket's
 * lock, so each value is current but together they are a snapshot, as
 * those of /proc/net/udp are; the peers are read under RCU.
 */
void dlcp_sock_info(struct sock *sk, struct dlcp_diag_info *info)
{
	struct dlcp_sock *dsk = dlcp_sk(sk);
	struct dlcp_peer *p;
	u32 i;

	memset(info, 0, sizeof(*info));
	info->info_len = sizeof(*info);
	info->peer_len = sizeof(struct dlcp_diag_peer);
	info->nr_peers = READ_ONCE(dsk->nr_peers);
	info->snd_mem = READ_ONCE(dsk->snd_mem);
	info->out_msgs = READ_ONCE(dsk->nr_out_msgs);
	info->in_msgs = READ_ONCE(dsk->nr_in_msgs);
	info->in_delivered = READ_ONCE(dsk->nr_zombies);
	info->rx_queue = skb_queue_len_lockless(&sk->sk_receive_queue);
	info->flight = READ_ONCE(dsk->flight_live);
	info->flight_cap = READ_ONCE(dsk->flight_cap);
	info->in_reo_us = READ_ONCE(dsk->in_reo_us);
	info->loss_budget_ppm = READ_ONCE(dsk->loss_budget_ppm);
	info->layer = READ_ONCE(dsk->layer);
	info->prio = READ_ONCE(dsk->prio);
	if (READ_ONCE(dsk->prio_set))
		info->flags |= DLCP_DIAG_F_PRIO_SET;
	if (READ_ONCE(dsk->recv_completion))
		info->flags |= DLCP_DIAG_F_COMPLETION;
	if (dlcp_sock_encap(sk) == DLCP_ENCAP_UDP)
		info->flags |= DLCP_DIAG_F_UDP;
	info->rcv_mem = atomic_read(&sk->sk_rmem_alloc);
	info->drops = atomic_read(&sk->sk_drops);

	rcu_read_lock();
	for (i = 0; i < ARRAY_SIZE(dsk->peers); i++)
		hlist_for_each_entry_rcu(p, &dsk->peers[i], node) {
			info->cwnd += READ_ONCE(p->cwnd);
			info->srtt_us = max(info->srtt_us,
					    READ_ONCE(p->srtt_us));
		}
	rcu_read_unlock();
}

/* Called under RCU (or the socket's lock). */
void dlcp_peer_info(const struct sock *sk, const struct dlcp_peer *p,
		    struct dlcp_diag_peer *dp)
{
	u32 min_rtt = READ_ONCE(p->cc.base_rtt_us);

	memset(dp, 0, sizeof(*dp));
	BUILD_BUG_ON(sizeof(dp->addr) != sizeof(p->daddr));
	memcpy(dp->addr, &p->daddr, sizeof(dp->addr));
	dp->msgs = READ_ONCE(p->nr_msgs);
	dp->inflight = READ_ONCE(p->inflight);
	dp->cwnd = READ_ONCE(p->cwnd);
	dp->ssthresh = READ_ONCE(p->cc.ssthresh);
	dp->srtt_us = READ_ONCE(p->srtt_us);
	dp->rttvar_us = READ_ONCE(p->rttvar_us);
	dp->min_rtt_us = min_rtt == U32_MAX ? 0 : min_rtt;
	dp->rto_us = dlcp_peer_rto_us(sk, p);
	dp->reo_us = dlcp_peer_reorder_us(sk, p);
	dp->alpha = READ_ONCE(p->cc.alpha);
	dp->rto_shift = READ_ONCE(p->rto_shift);
}

struct dlcp_sockets_iter {
	struct seq_file	*seq;
	u32		sl;
};

static int dlcp_sockets_one(struct sock *sk, void *arg)
{
	struct dlcp_sockets_iter *it = arg;
	struct inet_sock *inet = inet_sk(sk);
	struct in6_addr laddr, raddr;
	struct dlcp_diag_info info;

	dlcp_sock_info(sk, &info);
	if (sk->sk_family == AF_INET6) {
		laddr = sk->sk_v6_rcv_saddr;
		raddr = sk->sk_v6_daddr;
	} else {
		ipv6_addr_set_v4mapped(inet->inet_rcv_saddr, &laddr);
		ipv6_addr_set_v4mapped(inet->inet_daddr, &raddr);
	}
	seq_printf(it->seq, "%4u: ", it->sl++);
	dlcp_seq_addr(it->seq, &laddr);
	seq_printf(it->seq, ":%04X ", inet->inet_num);
	dlcp_seq_addr(it->seq, &raddr);
	seq_printf(it->seq,
		   ":%04X %02X %08llX:%08X %5u %5u %5u %8u %5u %llu\n",
		   ntohs(inet->inet_dport), sk->sk_state,
		   (unsigned long long)info.snd_mem, info.rcv_mem,
		   info.out_msgs, info.in_msgs, info.cwnd, info.srtt_us,
		   from_kuid_munged(seq_user_ns(it->seq), dlcp_sk_uid(sk)),
		   (u64)sock_i_ino(sk));
	return 0;
}

static int dlcp_sockets_show(struct seq_file *seq, void *v)
{
	struct dlcp_sockets_iter it = { .seq = seq };

	seq_puts(seq, "  sl local_address rem_address   st tx_mem:rx_mem        out_msgs in_msgs cwnd srtt_us uid inode\n");
	dlcp_walk_socks(seq_file_single_net(seq), NULL, dlcp_sockets_one, &it);
	return 0;
}

static int dlcp_peers_one(struct sock *sk, void *arg)
{
	struct dlcp_sockets_iter *it = arg;
	struct dlcp_sock *dsk = dlcp_sk(sk);
	struct dlcp_diag_peer dp;
	struct dlcp_peer *p;
	u32 i;

	rcu_read_lock();
	for (i = 0; i < ARRAY_SIZE(dsk->peers); i++)
		hlist_for_each_entry_rcu(p, &dsk->peers[i], node) {
			dlcp_peer_info(sk, p, &dp);
			seq_printf(it->seq, "%4u: %08X:%04X ", it->sl++,
				   dsk->inet.inet_rcv_saddr, dsk->inet.inet_num);
			dlcp_seq_addr(it->seq, &p->daddr);
			seq_printf(it->seq,
				   " %5u %8u %5u %8u %9u %5u %9u %6u %llu\n",
				   dp.msgs, dp.inflight, dp.cwnd, dp.srtt_us,
				   dp.rttvar_us, dp.alpha, dp.rto_shift,
				   dp.reo_us, (u64)sock_i_ino(sk));
		}
	rcu_read_unlock();
	return 0;
}

static int dlcp_peers_show(struct seq_file *seq, void *v)
{
	struct dlcp_sockets_iter it = { .seq = seq };

	seq_puts(seq, "  sl local_address rem_addr  msgs inflight  cwnd  srtt_us rttvar_us alpha rto_shift reo_us inode\n");
	dlcp_walk_socks(seq_file_single_net(seq), NULL, dlcp_peers_one, &it);
	return 0;
}

int dlcp_proc_init(struct net *net)
{
	struct proc_dir_entry *dir;

	dir = proc_net_mkdir(net, "dlcp", net->proc_net);
	if (!dir)
		return -ENOMEM;
	if (!proc_create_net_single("snmp", 0444, dir, dlcp_snmp_show, NULL) ||
	    !proc_create_net_single("sockets", 0444, dir, dlcp_sockets_show,
				    NULL) ||
	    !proc_create_net_single("peers", 0444, dir, dlcp_peers_show,
				    NULL)) {
		remove_proc_subtree("dlcp", net->proc_net);
		return -ENOMEM;
	}
	return 0;
}

void dlcp_proc_exit(struct net *net)
{
	remove_proc_subtree("dlcp", net->proc_net);
}
