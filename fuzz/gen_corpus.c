// SPDX-License-Identifier: GPL-2.0
/*
 * gen_corpus DIR: write the seed corpus of dlcp_wire_fuzz, valid packets
 * of every type (and a few edge cases) built with dlcp_pkt, checksummed,
 * one file each. Run at build time, so no binary is committed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dlcp_pkt.h"

static const char *dir;
static int nr;

static void out(const char *what, const void *pkt, size_t len)
{
	char path[512];
	FILE *f;

	if (!len) {
		fprintf(stderr, "gen_corpus: %s: build failed\n", what);
		exit(1);
	}
	if (dlcp_wire_check(pkt, (uint32_t)len, 1u << 30) != DLCP_DROP_NONE &&
	    strncmp(what, "bad", 3)) {
		fprintf(stderr, "gen_corpus: %s: not valid\n", what);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/%02d-%s", dir, nr++, what);
	f = fopen(path, "wb");
	if (!f || fwrite(pkt, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	struct dlcp_pkt_info pi = { .sport = 40000, .dport = 7000,
				    .msg_id = 0x12345678, .msg_len = 4096 };
	struct dlcp_pkt_data_info di = { .offset = 0, .tensor_id = 7,
					 .iteration = 3, .budget_ppm = 10000,
					 .tsval = 1000, .layer = 2,
					 .dtype = DLCP_DTYPE_FP32 };
	struct dlcp_pkt_report_info ri = { .rcvd = 2048, .scan_end = 4096,
					   .tsecr = 1000 };
	struct dlcp_pkt_gap gaps[64];
	uint8_t buf[2048], payload[1448];
	size_t n, i;

	if (argc != 2) {
		fprintf(stderr, "usage: gen_corpus DIR\n");
		return 2;
	}
	dir = argv[1];
	if (mkdir(dir, 0755) && errno != EEXIST) {
		perror(dir);
		return 1;
	}
	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 1);

	n = dlcp_pkt_build_data(buf, sizeof(buf), &pi, &di, payload, 1024);
	dlcp_pkt_finish4(buf, n, 0x0201a8c0, 0x0101a8c0);
	out("data-first", buf, n);
	di.offset = 3072;
	pi.flags = DLCP_HF_LAST | DLCP_HF_ACKREQ | DLCP_HF_CRITICAL;
	di.crit_len = 1024;
	di.msg_flags = DLCP_MSG_HAS_BUDGET | DLCP_MSG_HAS_LAYER;
	n = dlcp_pkt_build_data(buf, sizeof(buf), &pi, &di, payload, 1024);
	dlcp_pkt_finish4(buf, n, 0x0201a8c0, 0x0101a8c0);
	out("data-last", buf, n);
	pi.msg_len = 1;
	di.offset = 0;
	di.crit_len = 0;
	di.dtype = DLCP_DTYPE_BYTES;
	n = dlcp_pkt_build_data(buf, sizeof(buf), &pi, &di, payload, 1);
	out("data-1byte", buf, n);
	pi.msg_len = 64u << 20;
	di.offset = pi.msg_len - 1448;
	pi.flags = DLCP_HF_RETRANS | DLCP_HF_DROPPABLE;
	n = dlcp_pkt_build_data(buf, sizeof(buf), &pi, &di, payload, 1448);
	out("data-tail", buf, n);

	pi.flags = 0;
	pi.msg_len = 4096;
	n = dlcp_pkt_build_report(buf, sizeof(buf), &pi, &ri, NULL, 0);
	out("report-nogaps", buf, n);
	for (i = 0; i < 4; i++) {
		gaps[i].start = (uint32_t)i * 1024;
		gaps[i].end = (uint32_t)i * 1024 + 512;
	}
	n = dlcp_pkt_build_report(buf, sizeof(buf), &pi, &ri, gaps, 4);
	out("report-4gaps", buf, n);
	pi.msg_len = 1u << 20;
	ri.scan_end = 1u << 20;
	ri.rflags = DLCP_RF_PROBED;
	for (i = 0; i < 64; i++) {
		gaps[i].start = (uint32_t)i * 16384;
		gaps[i].end = (uint32_t)i * 16384 + 1448;
	}
	n = dlcp_pkt_build_report(buf, sizeof(buf), &pi, &ri, gaps, 64);
	out("report-64gaps", buf, n);

	pi.msg_len = 4096;
	n = dlcp_pkt_build_stop(buf, sizeof(buf), &pi, 0, 1000);
	out("stop", buf, n);
	pi.flags = DLCP_HF_FAILED;
	n = dlcp_pkt_build_stop(buf, sizeof(buf), &pi, 4096, 1000);
	out("stop-failed", buf, n);
	pi.flags = 0;
	n = dlcp_pkt_build_probe(buf, sizeof(buf), &pi, 4096, 5000);
	out("probe", buf, n);
	pi.flags = DLCP_HF_FINAL;
	n = dlcp_pkt_build_probe(buf, sizeof(buf), &pi, 1024, 5000);
	out("probe-final", buf, n);
	pi.flags = 0;
	n = dlcp_pkt_build_abort(buf, sizeof(buf), &pi, 2048, 5000);
	out("abort", buf, n);

	/* a longer header (doff past the fixed part), as a later version */
	n = dlcp_pkt_build_probe(buf, sizeof(buf), &pi, 0, 0);
	memset(buf + n, 0, 8);
	buf[6] = (uint8_t)((n + 8) / 4);
	dlcp_put16(buf + 8, (uint16_t)(n + 8));
	out("probe-longhdr", buf, n + 8);
	/* invalid ones, to start from the edges */
	out("bad-short", buf, 19);
	memset(buf, 0, 20);
	out("bad-zero", buf, 20);
	printf("gen_corpus: %d seeds in %s\n", nr, dir);
	return 0;
}
