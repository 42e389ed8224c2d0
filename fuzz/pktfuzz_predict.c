// SPDX-License-Identifier: GPL-2.0
/*
 * dlcp_pktfuzz: what the receiver must do with each fuzz packet (with the
 * same dlcp_wire_check() and checksum as the module), and the checks of
 * the namespaces' counters against those predictions.
 */
#include <stdio.h>
#include <string.h>

#include "pktfuzz.h"

const char *const dispatch_ctr[OUT_ABORT + 1] = {
	[OUT_DATA] = "DlcpInDataPkts", [OUT_REPORT] = "DlcpReportsRcvd",
	[OUT_STOP] = "DlcpStopsRcvd", [OUT_PROBE] = "DlcpProbesRcvd",
	[OUT_ABORT] = "DlcpAbortsRcvd",
};

/* what a namespace counts of the packets of each type it sends */
const char *const sent_ctr[OUT_ABORT + 1] = {
	[OUT_DATA] = "DlcpOutDataPkts", [OUT_REPORT] = "DlcpReportsSent",
	[OUT_STOP] = "DlcpStopsSent", [OUT_PROBE] = "DlcpProbesSent",
	[OUT_ABORT] = "DlcpAbortsSent",
};

unsigned long expect[__OUT_MAX];
unsigned long mut_count[__MUT_MAX], mut_passed[__MUT_MAX];
unsigned long umut_count[__UMUT_MAX], sent_udp, sent_udp_passed;
unsigned long injected[__NS_MAX];

/*
 * The outcome of fuzz packet @pkt at the target. A packet for the real
 * transfer's port (--avoid-port) that would reach a socket is sent to
 * the target's port instead (rewritten here, with its checksum).
 */
enum outcome predict(uint8_t *pkt, const struct fuzz_pkt *fp)
{
	uint32_t seed = dlcp_csum_pseudo4(o.src, o.dst, IPPROTO_DLCP,
					  (uint16_t)fp->n_eff);
	unsigned int r = dlcp_wire_check(pkt, (uint32_t)fp->n_eff, max_msg);
	enum outcome out;

	if (fp->um == UMUT_BADCSUM)
		out = OUT_UDP_CSUM;
	else if (fp->um == UMUT_LONGLEN)
		out = OUT_UDP_LEN;
	else if (r != DLCP_DROP_NONE)
		out = OUT_REASON + r;
	else if (!(fp->via_udp && fp->um != UMUT_NOCSUM) &&
		 !dlcp_pkt_csum_ok(pkt, fp->n_eff, seed))
		/* a UDP checksum, right here, stands for DLCP's */
		out = OUT_CSUM;
	else if (fp->dport != o.port) {
		if (fp->dport == o.avoid_port) {
			/* never hand the real transfer a packet */
			dlcp_put16(pkt + 2, o.port);
			dlcp_pkt_set_csum(pkt, fp->n_eff, seed);
			out = dlcp_wire_type((void *)pkt) - 1;
		} else {
			out = OUT_NOSOCKET;
		}
	} else {
		out = dlcp_wire_type((void *)pkt) - 1;
	}
	if (out <= OUT_NOSOCKET)
		mut_passed[fp->mut]++;
	return out;
}

/* ------------------------------------------------------------ checks */

static int verdict(const char *what, const char *pred, int64_t got, int ok,
		   const char *bad)
{
	printf("%-34s %20s %10lld%s%s\n", what, pred, (long long)got,
	       ok ? "" : "  ", ok ? "" : bad);
	return !ok;
}

int check_eq(const char *what, int64_t predicted, int64_t got)
{
	char p[32];

	snprintf(p, sizeof(p), "%lld", (long long)predicted);
	return verdict(what, p, got, got == predicted, "MISMATCH");
}

int check_ge(const char *what, int64_t predicted, int64_t got)
{
	char p[32];

	snprintf(p, sizeof(p), ">= %lld", (long long)predicted);
	return verdict(what, p, got, got >= predicted, "TOO FEW");
}

int check_le(const char *what, int64_t limit, int64_t got)
{
	char p[32];

	snprintf(p, sizeof(p), "<= %lld", (long long)limit);
	return verdict(what, p, got, got <= limit, "OVER THE LIMIT");
}

int check_range(const char *what, int64_t lo, int64_t hi, int64_t got)
{
	char p[48];

	if (lo == hi)
		return check_eq(what, lo, got);
	snprintf(p, sizeof(p), "%lld..%lld", (long long)lo, (long long)hi);
	return verdict(what, p, got, got >= lo && got <= hi, "OUT OF RANGE");
}

/*
 * The checks of the fuzz packets (numbered as in dlcp_pktfuzz.c), from
 * snapshots @a (before) and @b (after). With @strict_types, each type's
 * handler count is also bounded from above. Returns the number of checks that failed.
 */
int check_fuzz(const struct snap *a, const struct snap *b, int strict_types)
{
	static const char *const pre[] = {
		"DlcpInCsumErrors", "DlcpDropNoSocket",
		"DlcpDropClosed", "DlcpDropNotHost", "DlcpDropNoMem",
	};
	static const char *const deeper[] = {
		"DlcpDropRcvMem", "DlcpDropRanges", "DlcpDropMismatch",
		"DlcpDropUnknownMsg", "DlcpInDupPkts",
		"DlcpInLatePkts", "DlcpInMsgs", "DlcpInMsgsExact",
		"DlcpInMsgsLossy", "DlcpInMsgsFailed",
		"DlcpInMsgsTimeout", "DlcpInMsgsAborted",
		"DlcpOutMsgsDone", "DlcpOutMsgsDeadline",
		"DlcpReportsSent", "DlcpStopsSent",
	};
	const int T = NS_TARGET, S = NS_SELF, A = NS_ATTACKER;
	int64_t in, sum = 0, nomem, reach, out_self, d;
	int fails = 0;
	unsigned int r, j;
	char what[64];

	/* 1. every reason of dlcp_wire_check(), and bad checksums: exact */
	for (r = 1; r < __DLCP_DROP_PURE_MAX; r++)
		fails += check_eq(dlcp_drop_reason_snmp(r),
				  (int64_t)expect[OUT_REASON + r],
				  dsnap(a, b, T, dlcp_drop_reason_snmp(r)));
	fails += check_eq("DlcpInCsumErrors", (int64_t)expect[OUT_CSUM],
			  dsnap(a, b, T, "DlcpInCsumErrors"));
	/* 2. no socket, and each type's handler: at least */
	fails += check_ge("DlcpDropNoSocket", (int64_t)expect[OUT_NOSOCKET],
			  dsnap(a, b, T, "DlcpDropNoSocket"));
	for (r = OUT_DATA; r <= OUT_ABORT; r++) {
		/*
		 * and at most that plus what the real senders (this
		 * namespace's sockets) sent there: packets of a type the
		 * module counts as sent although the device dropped them
		 * (PROBE, ABORT) may be fewer
		 */
		int64_t hi = (int64_t)expect[r] + dsnap(a, b, S, sent_ctr[r]) -
			     dsnap(a, b, A, dispatch_ctr[r]);

		/* and this namespace's STOPs for its closed ports */
		if (r == OUT_STOP)
			hi += dsnap(a, b, S, "DlcpNoPortSent");

		d = dsnap(a, b, T, dispatch_ctr[r]);
		if (strict_types)
			fails += check_range(dispatch_ctr[r],
					     (int64_t)expect[r], hi, d);
		else
			fails += check_ge(dispatch_ctr[r], (int64_t)expect[r],
					  d);
	}

	/* 3. every packet counted once: dropped before dispatch, or dispatched */
	in = dsnap(a, b, T, "DlcpInPkts");
	for (r = 1; r < __DLCP_DROP_PURE_MAX; r++)
		sum += dsnap(a, b, T, dlcp_drop_reason_snmp(r));
	for (j = 0; j < sizeof(pre) / sizeof(pre[0]); j++)
		sum += dsnap(a, b, T, pre[j]);
	for (r = OUT_DATA; r <= OUT_ABORT; r++)
		sum += dsnap(a, b, T, dispatch_ctr[r]);
	nomem = dsnap(a, b, T, "DlcpDropNoMem");
	printf("deeper paths reached (delta):");
	for (j = 0; j < sizeof(deeper) / sizeof(deeper[0]); j++)
		printf("%s %s %lld", j ? "," : "", deeper[j] + 4,
		       (long long)dsnap(a, b, T, deeper[j]));
	printf("\n");
	printf("DlcpInPkts delta %lld, drops before dispatch + "
	       "dispatched %lld%s\n", (long long)in, (long long)sum,
	       in == sum ? "" : (nomem ? "  (NoMem counted twice?)" :
				  "  MISMATCH"));
	if (in != sum && !nomem)
		fails++;

	/*
	 * 4. every packet injected reached the host: the target's
	 * DlcpInPkts grew by the packets injected there (less those UDP
	 * dropped) and what this namespace's sockets sent there (all they
	 * sent, less what the attacker's namespace received: the only other
	 * place they send to)
	 */
	reach = (int64_t)(injected[T] - expect[OUT_UDP_CSUM] -
			  expect[OUT_UDP_LEN]);
	out_self = dsnap(a, b, S, "DlcpOutPkts") - dsnap(a, b, A, "DlcpInPkts");
	printf("DlcpInPkts delta %lld == injected %lu - dropped by UDP "
	       "%lu + sent by the other namespaces %lld: %s\n",
	       (long long)in, injected[T],
	       injected[T] - (unsigned long)reach, (long long)out_self,
	       in == reach + out_self ? "yes" : "NO");
	if (in != reach + out_self)
		fails++;
	/* and so did this namespace's, by what the others sent here */
	d = dsnap(a, b, S, "DlcpInPkts");
	reach = (int64_t)injected[S] + dsnap(a, b, T, "DlcpOutPkts") +
		dsnap(a, b, A, "DlcpOutPkts");
	snprintf(what, sizeof(what), "DlcpInPkts of %s", "this namespace");
	fails += check_eq(what, reach, d);

	if (o.udp) {
		int64_t uin = dsnap(a, b, T, "DlcpUdpInPkts");
		int64_t uout = dsnap(a, b, S, "DlcpUdpOutPkts");
		int64_t wl = (int64_t)(expect[OUT_UDP_CSUM] +
				       expect[OUT_UDP_LEN]);
		int ok = uin == (int64_t)sent_udp_passed + uout;

		/* 6. */
		printf("DlcpUdpInPkts delta %lld == injected inside UDP and "
		       "passed by UDP %lu + DlcpUdpOutPkts of this namespace "
		       "%lld: %s\n", (long long)uin, sent_udp_passed,
		       (long long)uout, ok ? "yes" : "NO");
		fails += !ok;
		/* 7. */
		fails += check_eq("Udp InErrors", wl,
				  b->udp_inerr - a->udp_inerr);
		fails += check_eq("Udp InCsumErrors",
				  (int64_t)expect[OUT_UDP_CSUM],
				  b->udp_csumerr - a->udp_csumerr);
	}
	/* 5. */
	printf("lost ranges of delivered messages that do not read as zeros:"
	       " %lu%s\n", tgt.nonzero, tgt.nonzero ? "  FAIL" : "");
	fails += tgt.nonzero != 0;
	return fails;
}

/* The counts per mutation (and per UDP mutation). */
void report_mutations(unsigned long sent)
{
	unsigned int i;

	printf("%-10s %9s %16s\n", "mutation", "packets", "passed checks");
	for (i = 0; i < __MUT_MAX; i++)
		printf("%-10s %9lu %16lu\n", mut_name[i], mut_count[i],
		       mut_passed[i]);
	if (o.udp) {
		printf("inside UDP: %lu packets (%lu passed by UDP), %lu as raw "
		       "IP\n", sent_udp, sent_udp_passed, sent - sent_udp);
		for (i = 0; i < __UMUT_MAX; i++)
			printf("  %-14s %9lu\n", umut_name[i], umut_count[i]);
	}
}
