// SPDX-License-Identifier: GPL-2.0
/*
 * dlcp-perf report: the counters (/proc/net/dlcp/snmp, or the Tcp table
 * of /proc/net/snmp, read with dlcpstat_lib) and CPU time around a client's
 * run, and its report: goodput, completion-time percentiles, losses,
 * retransmissions, as text or one JSON line.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/time.h>

#include <linux/dlcp.h>

#include "perf.h"

#define DLCP_SNMP	"/proc/net/dlcp/snmp"
#define NET_SNMP	"/proc/net/snmp"

/*
 * The namespace's counters of the protocol under test; those of a file
 * that cannot be read (no module) are simply not there.
 */
void read_counters(struct dlcpstat_table *t)
{
	unsigned int bad;

	if (opt.proto == P_DLCP)
		dlcpstat_read(DLCP_SNMP, t, &bad);
	else
		dlcpstat_read_mib(NET_SNMP, "Tcp", t);
}

/* /proc/stat: busy and total time of all CPUs */
void read_cpustat(struct cpustat *c)
{
	unsigned long long v[10] = { 0 };
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f = fopen("/proc/stat", "r");
	int i;

	c->busy = c->total = 0;
	if (!f)
		return;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) >= 4) {
		for (i = 0; i < 8; i++)
			c->total += v[i];
		c->busy = c->total - v[3] - v[4];	/* minus idle, iowait */
		c->busy /= hz;
		c->total /= hz;
	}
	fclose(f);
}

static double tv_s(struct timeval tv)
{
	return tv.tv_sec + tv.tv_usec / 1e6;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* nearest-rank percentile of a sorted array */
static double pct(const uint64_t *v, uint64_t n, double p)
{
	uint64_t k;

	if (!n)
		return 0;
	k = (uint64_t)(p / 100.0 * n + 0.999999);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1] / 1e6;
}

static void print_pcts(FILE *o, const char *key, uint64_t *v, uint64_t n)
{
	double sum = 0;
	uint64_t i;

	qsort(v, n, sizeof(*v), cmp_u64);
	for (i = 0; i < n; i++)
		sum += v[i];
	if (opt.json)
		fprintf(o, "\"%s\":{\"n\":%" PRIu64 ",\"mean\":%.3f,\"p50\":%.3f,"
			"\"p90\":%.3f,\"p99\":%.3f,\"p999\":%.3f,\"max\":%.3f,"
			"\"min\":%.3f}",
			key, n, n ? sum / n / 1e6 : 0, pct(v, n, 50),
			pct(v, n, 90), pct(v, n, 99), pct(v, n, 99.9),
			n ? v[n - 1] / 1e6 : 0, n ? v[0] / 1e6 : 0);
	else
		fprintf(o, "%-10s n=%" PRIu64 " ms: p50 %.2f p90 %.2f p99 %.2f "
			"p99.9 %.2f max %.2f\n", key, n, pct(v, n, 50),
			pct(v, n, 90), pct(v, n, 99), pct(v, n, 99.9),
			n ? v[n - 1] / 1e6 : 0);
}

static void json_ctrs(FILE *o, const struct dlcpstat_table *a,
		      const struct dlcpstat_table *b)
{
	size_t i;

	fputc('{', o);
	for (i = 0; i < b->nr; i++)
		fprintf(o, "%s\"%s\":%" PRId64, i ? "," : "", b->e[i].name,
			(int64_t)(b->e[i].value - dlcpstat_get(a, b->e[i].name,
							       NULL)));
	fputc('}', o);
}

/* The delta of counter @name over the run. */
static uint64_t ctr_delta(const struct client_usage *u, const char *name)
{
	return dlcpstat_get(&u->ctr1, name, NULL) -
	       dlcpstat_get(&u->ctr0, name, NULL);
}

/* What a client's run measured. */
struct result {
	bool echo;		/* CT up to the ACK's arrival */
	uint64_t *ct;		/* completion times (ns), one a message */
	uint64_t *sct;		/* DLCP sender-side ones */
	uint64_t nsct;
	uint64_t bytes, lost, lossy;
	uint64_t first_send, last_recv;
	uint64_t retrans, datapkts;
	double secs, goodput;
	double cu, cs, busy;	/* CPU seconds: client user, sys; machine */
};

static void print_json(FILE *o, struct result *r, const struct client_usage *u)
{
	uint64_t *samples = NULL, i;

	if (opt.samples) {	/* before print_pcts() sorts them */
		samples = malloc((nrecs + 1) * sizeof(*samples));
		if (!samples)
			die("out of memory");
		memcpy(samples, r->ct, nrecs * sizeof(*r->ct));
	}
	fprintf(o, "{\"role\":\"client\",\"proto\":\"%s\","
		"\"id\":%u,\"ct_mode\":\"%s\",\"sizes\":[",
		opt.proto == P_DLCP ? "dlcp" : "tcp", opt.id,
		opt.no_ack ? "completion" : r->echo ? "echo" : "oneway");
	for (i = 0; i < opt.nsizes; i++)
		fprintf(o, "%s%" PRIu64, i ? "," : "", opt.sizes[i]);
	fprintf(o, "],\"concurrency\":%u,\"prio\":%d,\"budget_ppm\":%ld,"
		"\"messages\":%" PRIu64 ",\"bytes\":%" PRIu64
		",\"bytes_lost\":%" PRIu64 ",\"lossy_msgs\":%"
		PRIu64 ",\"elapsed_s\":%.6f,\"goodput_mbps\":%.3f,"
		"\"retrans\":%" PRIu64 ",\"out_data_pkts\":%" PRIu64
		",\"failed_msgs\":%" PRIu64 ",\"t_first_ns\":%"
		PRIu64 ",\"t_last_ns\":%" PRIu64 ",",
		opt.concurrency, opt.prio, opt.proto == P_DLCP ?
		(opt.budget >= 0 ? opt.budget : -1) : 0,
		nrecs, r->bytes, r->lost, r->lossy, r->secs, r->goodput,
		r->retrans, r->datapkts, completions_failed,
		r->first_send, r->last_recv);
	fprintf(o, "\"cpu\":{\"client_user_s\":%.4f,"
		"\"client_sys_s\":%.4f,\"machine_busy_s\":%.4f},",
		r->cu, r->cs, r->busy);
	print_pcts(o, "ct_ms", r->ct, nrecs);
	if (opt.proto == P_DLCP) {
		fputc(',', o);
		print_pcts(o, "sender_ct_ms", r->sct, r->nsct);
	}
	if (opt.nsizes > 1) {
		unsigned int s;

		fprintf(o, ",\"per_size\":{");
		for (s = 0; s < opt.nsizes; s++) {
			uint64_t m = 0;
			char key[32];

			for (i = 0; i < nrecs; i++)
				if (recs[i].len == opt.sizes[s] &&
				    (i % opt.nsizes) == s) {
					uint64_t e = r->echo ? recs[i].ack_ns :
							       recs[i].recv_ns;

					r->ct[m++] = e - recs[i].send_ns;
				}
			snprintf(key, sizeof(key), "%" PRIu64, opt.sizes[s]);
			if (s)
				fputc(',', o);
			print_pcts(o, key, r->ct, m);
		}
		fputc('}', o);
	}
	fprintf(o, ",\"counters\":");
	json_ctrs(o, &u->ctr0, &u->ctr1);
	if (samples) {
		fprintf(o, ",\"samples_ms\":[");
		for (i = 0; i < nrecs; i++)
			fprintf(o, "%s%.3f", i ? "," : "", samples[i] / 1e6);
		fputc(']', o);
	}
	fprintf(o, "}\n");
	free(samples);
}

static void print_text(FILE *o, struct result *r)
{
	fprintf(o, "%s: %" PRIu64 " messages, %" PRIu64
		" bytes in %.3f s: goodput %.2f Mbit/s\n",
		opt.proto == P_DLCP ? "dlcp" : "tcp", nrecs, r->bytes, r->secs,
		r->goodput);
	fprintf(o, "completion time (%s):\n",
		r->echo ? "echo: send to ACK arrival" :
		"one-way: sendmsg start to receiver recvmsg return");
	print_pcts(o, "ct", r->ct, nrecs);
	if (opt.proto == P_DLCP)
		print_pcts(o, "sender_ct", r->sct, r->nsct);
	fprintf(o, "lost within budget: %" PRIu64 " bytes in %" PRIu64
		" messages; retransmitted packets: %" PRIu64
		" of %" PRIu64 "\n", r->lost, r->lossy, r->retrans,
		r->datapkts);
	fprintf(o, "cpu: client %.3f s user %.3f s sys; machine busy %.3f s\n",
		r->cu, r->cs, r->busy);
}

void report_client(FILE *o, struct client_usage *u, uint64_t first_send)
{
	struct result r = { .first_send = first_send };
	uint64_t i;

	r.echo = boot_mismatch != 0 || opt.no_ack;
	r.ct = calloc(nrecs + 1, sizeof(*r.ct));
	r.sct = calloc(nrecs + 1, sizeof(*r.sct));
	if (!r.ct || !r.sct)
		die("out of memory");
	for (i = 0; i < nrecs; i++) {
		struct rec *m = &recs[i];
		uint64_t end = r.echo ? m->ack_ns : m->recv_ns;

		r.ct[i] = end > m->send_ns ? end - m->send_ns : 0;
		if (m->done_ns)
			r.sct[r.nsct++] = m->done_ns - m->send_ns;
		r.bytes += m->len;
		r.lost += m->lost;
		r.lossy += m->status == DLCP_RECV_LOSSY;
		if (end > r.last_recv)
			r.last_recv = end;
	}
	r.secs = (r.last_recv - r.first_send) / 1e9;
	r.goodput = r.secs > 0 ? (r.bytes - r.lost) * 8 / r.secs / 1e6 : 0;
	r.cu = tv_s(u->ru1.ru_utime) - tv_s(u->ru0.ru_utime);
	r.cs = tv_s(u->ru1.ru_stime) - tv_s(u->ru0.ru_stime);
	r.busy = u->cpu1.busy - u->cpu0.busy;
	r.retrans = opt.proto == P_DLCP ? ctr_delta(u, "DlcpRetransPkts") :
					  ctr_delta(u, "TcpRetransSegs");
	r.datapkts = opt.proto == P_DLCP ? ctr_delta(u, "DlcpOutDataPkts") :
					   ctr_delta(u, "TcpOutSegs");
	if (opt.json)
		print_json(o, &r, u);
	else
		print_text(o, &r);
	free(r.ct);
	free(r.sct);
}
