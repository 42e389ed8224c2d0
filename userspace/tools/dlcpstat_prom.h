/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dlcpstat_prom - the counters in the Prometheus text exposition format
 * (dlcpstat --prometheus), for node_exporter's textfile collector or a
 * scrape through a small wrapper.
 *
 * Every counter of /proc/net/dlcp/snmp only grows (the module's MIB has
 * no gauge), so each is a Prometheus counter: "DlcpInBytesLost" is
 * dlcp_in_bytes_lost_total, its CamelCase words in snake case after the
 * "dlcp_" prefix. A counter of a numbered series, whose name ends in a
 * number (DlcpOutClass0 .. DlcpOutClass7), is a sample of one metric
 * named without the number, the number a label named after the word
 * before it: dlcp_out_class_total{class="3"}. Each metric has a HELP and
 * a TYPE line, its samples follow them.
 */
#ifndef DLCPSTAT_PROM_H
#define DLCPSTAT_PROM_H

#include <stddef.h>
#include <stdio.h>

#include "dlcpstat_lib.h"

/*
 * The metric of the counter @name ("DlcpOutClass3"): its name into @metric
 * ("dlcp_out_class_total"), the label of a numbered series into @label
 * ("class", or "" for none) and its value into @index ("3"). Each buffer
 * holds DLCPSTAT_NAME_MAX + 16 bytes.
 */
#define DLCPSTAT_METRIC_MAX	(DLCPSTAT_NAME_MAX + 16)
void dlcpstat_prom_name(const char *name, char *metric, char *label,
			char *index);

/*
 * Print @t to @f, one metric after the other in the order of their first
 * counter; @netns, when not NULL, is the value of a "netns" label on every
 * sample.
 */
void dlcpstat_prom_print(FILE *f, const struct dlcpstat_table *t,
			 const char *netns);

#endif /* DLCPSTAT_PROM_H */
