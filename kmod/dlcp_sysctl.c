// SPDX-License-Identifier: GPL-2.0
/*
 * net.dlcp.* sysctls, per network namespace. Every entry is range checked;
 * docs/sysctl.md lists them with defaults and units.
 */
#include <linux/sysctl.h>
#include <linux/slab.h>
#include <net/net_namespace.h>
#include "dlcp_impl.h"

static int dlcp_one = 1;
static int dlcp_ppm_max = DLCP_PPM_MAX;
static int dlcp_msg_hard = DLCP_MAX_MSG_HARD;
static int dlcp_mem_min = 1 << 16;
static int dlcp_int_max = INT_MAX;
static int dlcp_timeout_max = 3600 * 1000;
static int dlcp_cwnd_hard = DLCP_CWND_HARD;
static int dlcp_ack_max = 64;
static int dlcp_classes_max = DLCP_MAX_CLASSES;
static int dlcp_class_last = DLCP_MAX_CLASSES - 1;
static int dlcp_dscp_max = 63;
static int dlcp_u16_max = U16_MAX;
static int dlcp_port_min = 1;
static int dlcp_in_msgs_hard = 1 << 20;

#define DLCP_SYSCTL(_name, _min, _max)				\
	{							\
		.procname	= #_name,			\
		.data		= &init_dlcp_net._name,		\
		.maxlen		= sizeof(int),			\
		.mode		= 0644,				\
		.proc_handler	= proc_dointvec_minmax,		\
		.extra1		= _min,				\
		.extra2		= _max,				\
	}

/* Template: .data points into a dummy struct and is rebased per netns. */
static struct dlcp_net init_dlcp_net;

/*
 * encap and udp_port: switching to UDP mode (or moving its port) opens the
 * namespace's UDP socket; if that fails (EADDRINUSE), the write fails and
 * the old value stays.
 */
static int dlcp_sysctl_udp(dlcp_ctl_table *table, int write, void *buffer,
			   size_t *lenp, loff_t *ppos)
{
	int *val = table->data, old = *val, err;
	struct dlcp_net *dn;

	err = proc_dointvec_minmax(table, write, buffer, lenp, ppos);
	if (err || !write)
		return err;
	dn = table->extra1 == SYSCTL_ZERO ?
	     container_of(val, struct dlcp_net, encap) :
	     container_of(val, struct dlcp_net, udp_port);
	if (READ_ONCE(dn->encap) == DLCP_ENCAP_UDP) {
		err = dlcp_udp_enable(dn->net);
		if (err)
			WRITE_ONCE(*val, old);
	}
	return err;
}

static struct ctl_table dlcp_sysctl_table[] = {
	DLCP_SYSCTL(max_msg_size, &dlcp_one, &dlcp_msg_hard),
	DLCP_SYSCTL(loss_budget_ppm, SYSCTL_ZERO, &dlcp_ppm_max),
	DLCP_SYSCTL(rmem, &dlcp_mem_min, &dlcp_int_max),
	DLCP_SYSCTL(wmem, &dlcp_mem_min, &dlcp_int_max),
	DLCP_SYSCTL(rto_min_ms, &dlcp_one, &dlcp_timeout_max),
	DLCP_SYSCTL(msg_timeout_ms, &dlcp_one, &dlcp_timeout_max),
	DLCP_SYSCTL(init_cwnd, &dlcp_one, &dlcp_cwnd_hard),
	DLCP_SYSCTL(max_cwnd, &dlcp_one, &dlcp_cwnd_hard),
	DLCP_SYSCTL(ack_every, &dlcp_one, &dlcp_ack_max),
	DLCP_SYSCTL(reorder_us, SYSCTL_ZERO, &dlcp_timeout_max),
	DLCP_SYSCTL(prio_classes, &dlcp_one, &dlcp_classes_max),
	DLCP_SYSCTL(unpriv_class, SYSCTL_ZERO, &dlcp_class_last),
	DLCP_SYSCTL(layer_width, &dlcp_one, &dlcp_u16_max),
	{
		.procname	= "class_dscp",
		.data		= &init_dlcp_net.class_dscp,
		.maxlen		= sizeof(init_dlcp_net.class_dscp),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= &dlcp_dscp_max,
	},
	DLCP_SYSCTL(ecn, SYSCTL_ZERO, SYSCTL_ONE),
	DLCP_SYSCTL(droppable_ppm, SYSCTL_ZERO, &dlcp_ppm_max),
	{
		.procname	= "encap",
		.data		= &init_dlcp_net.encap,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= dlcp_sysctl_udp,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_ONE,
	},
	{
		.procname	= "udp_port",
		.data		= &init_dlcp_net.udp_port,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= dlcp_sysctl_udp,
		.extra1		= &dlcp_port_min,
		.extra2		= &dlcp_u16_max,
	},
	DLCP_SYSCTL(udp_sport_min, &dlcp_port_min, &dlcp_u16_max),
	DLCP_SYSCTL(udp_sport_max, &dlcp_port_min, &dlcp_u16_max),
	DLCP_SYSCTL(udp_sport_priv, SYSCTL_ZERO, SYSCTL_ONE),
	DLCP_SYSCTL(udp_entropy, SYSCTL_ZERO, &dlcp_u16_max),
	DLCP_SYSCTL(udp_gso, SYSCTL_ZERO, SYSCTL_ONE),
	DLCP_SYSCTL(gso, SYSCTL_ZERO, SYSCTL_ONE),
	DLCP_SYSCTL(rx_keep, SYSCTL_ZERO, SYSCTL_ONE),
	DLCP_SYSCTL(max_in_msgs, &dlcp_one, &dlcp_in_msgs_hard),
	DLCP_SYSCTL(max_in_msgs_peer, &dlcp_one, &dlcp_u16_max),
	DLCP_SYSCTL(noport_rate, SYSCTL_ZERO, &dlcp_int_max),
	/* global, shown in the initial namespace only: keep it last */
	{
		.procname	= "mem",
		.data		= &dlcp_sysctl_mem,
		.maxlen		= sizeof(dlcp_sysctl_mem),
		.mode		= 0644,
		.proc_handler	= proc_doulongvec_minmax,
	},
	{ }
};

int dlcp_sysctl_register(struct net *net)
{
	struct dlcp_net *dn = dlcp_pernet(net);
	struct ctl_table *table;
	int i;

	table = kmemdup(dlcp_sysctl_table, sizeof(dlcp_sysctl_table),
			GFP_KERNEL);
	if (!table)
		return -ENOMEM;
	for (i = 0; table[i].procname; i++) {
		/* the last entry, registered in the initial namespace only */
		if (table[i].data == &dlcp_sysctl_mem) {
			if (net_eq(net, &init_net))
				i++;
			else
				memset(&table[i], 0, sizeof(table[i]));
			break;
		}
		table[i].data = (char *)dn + ((char *)table[i].data -
					      (char *)&init_dlcp_net);
	}
	/* the first i entries; table[i] has no procname */
	dn->sysctl_hdr = dlcp_register_net_sysctl(net, "net/dlcp", table, i);
	if (!dn->sysctl_hdr) {
		kfree(table);
		return -ENOMEM;
	}
	return 0;
}

void dlcp_sysctl_unregister(struct net *net)
{
	struct dlcp_net *dn = dlcp_pernet(net);
	const struct ctl_table *table = dn->sysctl_hdr->ctl_table_arg;

	unregister_net_sysctl_table(dn->sysctl_hdr);
	kfree(table);
}
