// SPDX-License-Identifier: GPL-2.0
/*
 * DLCP: a loss-tolerant, order-independent message transport for
 * distributed deep-learning training.
 *
 * This file registers the protocol: the IP protocol handler, the
 * SOCK_DLCP (SOCK_RDM) entry of AF_INET, the per-network-namespace
 * state (counters, sysctls, /proc files) and the sock_diag handler.
 */
#include <linux/module.h>
#include <linux/init.h>
#include <net/protocol.h>
#include <net/inet_common.h>
#include <net/net_namespace.h>
#include "dlcp_impl.h"

#define CREATE_TRACE_POINTS
#include "dlcp_trace.h"

int dlcp_ipproto = IPPROTO_DLCP;
module_param_named(ipproto, dlcp_ipproto, int, 0444);
MODULE_PARM_DESC(ipproto,
		 "IP protocol number of DLCP (default 253, RFC 3692 experimental)");

unsigned int dlcp_net_id __read_mostly;
EXPORT_SYMBOL_IF_DLCP_KUNIT(dlcp_net_id);

static int __net_init dlcp_net_init(struct net *net)
{
	struct dlcp_net *dn = dlcp_pernet(net);
	int i, err;

	dn->max_msg_size = 64 << 20;
	dn->loss_budget_ppm = 0;
	dn->rmem = 128 << 20;
	dn->wmem = 128 << 20;
	dn->rto_min_ms = 10;
	dn->msg_timeout_ms = 10000;
	dn->init_cwnd = 32;
	dn->max_cwnd = 512;
	dn->ack_every = 4;
	dn->reorder_us = 4000;
	dn->prio_classes = DLCP_MAX_CLASSES;
	dn->unpriv_class = 1;
	dn->layer_width = 1;
	for (i = 0; i < DLCP_MAX_CLASSES; i++)
		dn->class_dscp[i] = (DLCP_MAX_CLASSES - 1 - i) << 3;	/* CS7..CS0 */
	dn->ecn = 1;
	dn->droppable_ppm = 0;
	dn->encap = DLCP_ENCAP_NATIVE;
	dn->udp_port = DLCP_UDP_PORT;
	dn->udp_sport_min = DLCP_UDP_SPORT_MIN;
	dn->udp_sport_max = PROT_SOCK - 1;
	dn->udp_sport_priv = 1;
	get_random_bytes(&dn->entropy_key, sizeof(dn->entropy_key));
	dn->udp_entropy = 1;
	dn->udp_gso = 1;
	dn->gso = 1;
	dn->rx_keep = 1;
	dn->max_in_msgs = 4096;
	dn->max_in_msgs_peer = 1024;
	dn->noport_rate = 1000;
	spin_lock_init(&dn->noport_lock);
	dn->noport_credit = DLCP_NOPORT_BURST;
	dn->noport_stamp = jiffies;
	dn->net = net;
	mutex_init(&dn->udp_lock);

	dn->mib = alloc_percpu(struct dlcp_mib);
	if (!dn->mib)
		return -ENOMEM;
	err = dlcp_sysctl_register(net);
	if (err)
		goto free_mib;
	err = dlcp_proc_init(net);
	if (err)
		goto unreg_sysctl;
	return 0;

unreg_sysctl:
	dlcp_sysctl_unregister(net);
free_mib:
	free_percpu(dn->mib);
	return err;
}

static void __net_exit dlcp_net_exit(struct net *net)
{
	struct dlcp_net *dn = dlcp_pernet(net);

	dlcp_udp_disable(net);
	/* a packet of the tunnel socket may still be in dlcp_rcv_common() */
	synchronize_net();
	dlcp_proc_exit(net);
	dlcp_sysctl_unregister(net);
	free_percpu(dn->mib);
}

static struct pernet_operations dlcp_net_ops = {
	.init	= dlcp_net_init,
	.exit	= dlcp_net_exit,
	.id	= &dlcp_net_id,
	.size	= sizeof(struct dlcp_net),
};

static int __init dlcp_init(void)
{
	int err;

	BUILD_BUG_ON(DLCP_MIB_OUT_CLASS7 - DLCP_MIB_OUT_CLASS0 + 1 !=
		     DLCP_MAX_CLASSES);
	BUILD_BUG_ON(sizeof(struct dlcp_data_hdr) != DLCP_DATA_HDR_LEN);
	BUILD_BUG_ON(sizeof(struct dlcp_report_hdr) != DLCP_REPORT_HDR_LEN);

	/* an IP protocol number is one byte; 255 is reserved */
	if (dlcp_ipproto <= 0 || dlcp_ipproto >= 255 ||
	    dlcp_ipproto == IPPROTO_RAW) {
		pr_err("dlcp: invalid ipproto %d\n", dlcp_ipproto);
		return -EINVAL;
	}

	err = dlcp_mem_init();
	if (err)
		return err;
	err = dlcp_page_init();
	if (err)
		goto exit_mem;
	dlcp_proto_set_per_cpu_fw_alloc(&dlcp_prot,
					&dlcp_memory_per_cpu_fw_alloc);
	err = proto_register(&dlcp_prot, 1);
	if (err)
		goto exit_page;
	err = register_pernet_subsys(&dlcp_net_ops);
	if (err)
		goto unreg_proto;
	err = dlcp_ipv4_init();
	if (err) {
		pr_err("dlcp: IP protocol %d is in use\n", dlcp_ipproto);
		goto unreg_pernet;
	}
	err = dlcp_ipv6_init();
	if (err) {
		pr_err("dlcp: IPv6 next header %d is in use\n", dlcp_ipproto);
		goto unreg_inet;
	}
	err = dlcp_offload_init();
	if (err) {
		pr_err("dlcp: GSO of protocol %d is in use\n", dlcp_ipproto);
		goto unreg_inet6;
	}
	/* monitoring is optional: DLCP works without it */
	err = dlcp_diag_init();
	if (err)
		pr_warn("dlcp: no sock_diag handler for protocol %d: %d\n",
			dlcp_ipproto, err);
	pr_info("dlcp: registered, IP protocol %d\n", dlcp_ipproto);
	return 0;

unreg_inet6:
	dlcp_ipv6_exit();
unreg_inet:
	dlcp_ipv4_exit();
unreg_pernet:
	unregister_pernet_subsys(&dlcp_net_ops);
unreg_proto:
	proto_unregister(&dlcp_prot);
exit_page:
	dlcp_page_exit();
exit_mem:
	dlcp_mem_exit();
	return err;
}

static void __exit dlcp_exit(void)
{
	dlcp_diag_exit();
	dlcp_offload_exit();
	dlcp_ipv6_exit();
	dlcp_ipv4_exit();
	unregister_pernet_subsys(&dlcp_net_ops);
	proto_unregister(&dlcp_prot);
	dlcp_mem_exit();
	dlcp_page_exit();
}

module_init(dlcp_init);
module_exit(dlcp_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("DLCP developers");
MODULE_DESCRIPTION("DLCP: loss-tolerant message transport for deep-learning training");
MODULE_VERSION(DLCP_RELEASE);
/*
 * socket(AF_INET, SOCK_DLCP, IPPROTO_DLCP) asks for the first alias of
 * each family; socket(AF_INET, SOCK_DLCP, 0), the usual call, for the
 * second (no other protocol is of type SOCK_RDM in these families).
 */
MODULE_ALIAS_NET_PF_PROTO_TYPE(PF_INET, IPPROTO_DLCP, SOCK_DLCP);
MODULE_ALIAS_NET_PF_PROTO_TYPE(PF_INET6, IPPROTO_DLCP, SOCK_DLCP);
MODULE_ALIAS_NET_PF_PROTO_TYPE(PF_INET, 0, SOCK_DLCP);
MODULE_ALIAS_NET_PF_PROTO_TYPE(PF_INET6, 0, SOCK_DLCP);
