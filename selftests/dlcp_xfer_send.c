// SPDX-License-Identifier: GPL-2.0
/*
 * dlcp_xfer send: K sender threads, each with its own socket and id,
 * send their messages with metadata and stay until the receiver says
 * DONE (close would abort what is unfinished), then answer BYE.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dlcp_util.h"
#include "dlcp_xfer.h"

/* ------------------------------------------------------------------ */
/* Sender                                                               */
/* ------------------------------------------------------------------ */

struct sender {
	pthread_t thread;
	uint32_t id;
	int fd;
	int rc;
	unsigned int sent;
	unsigned long long bytes;
	double elapsed;
	bool done;
	uint32_t status;
};

static struct addr dest;

static void *sender_main(void *arg)
{
	struct sender *s = arg;
	size_t max = 0;
	uint8_t *buf;
	unsigned int i;
	double t0 = dlcp_now(), t_end = t0 + opt.timeout;

	for (i = 0; i < opt.nsizes; i++)
		if (opt.sizes[i] > max)
			max = opt.sizes[i];
	buf = malloc(max > sizeof(struct ctl_msg) ? max :
		     sizeof(struct ctl_msg));
	if (!buf) {
		s->rc = 2;
		return NULL;
	}
	s->fd = dlcp_socket();
	set_buf(s->fd, SO_SNDBUFFORCE, SO_SNDBUF, opt.sndbuf);

	for (i = 0; i < per_sender(); i++) {
		size_t len = opt.sizes[i % opt.nsizes];
		ssize_t n;

		dlcp_payload_fill(buf, len, dlcp_payload_seed(s->id, i, len));
		n = send_meta(s->fd, &dest, buf, len, s->id, i, true);
		if (n != (ssize_t)len) {
			fprintf(stderr, "# sender %u message %u (%zu bytes): %s\n",
				s->id, i, len,
				n < 0 ? strerror(errno) : "short send");
			s->rc = 1;
			break;
		}
		s->sent++;
		s->bytes += len;
	}

	/* Stay until the receiver says it is done: close aborts. */
	while (!opt.no_ack && !s->done) {
		struct ctl_msg c;
		double left = t_end - dlcp_now();
		ssize_t n;

		if (left <= 0 || !wait_readable(s->fd, left))
			break;
		n = recv(s->fd, &c, sizeof(c), MSG_DONTWAIT);
		if (n == sizeof(c) && c.magic == CTL_MAGIC &&
		    c.type == CTL_DONE) {
			s->done = true;
			s->status = c.status;
		}
	}
	s->elapsed = dlcp_now() - t0;
	if (!opt.no_ack) {
		if (!s->done) {
			fprintf(stderr, "# sender %u: no DONE from the receiver within %.0f s\n",
				s->id, opt.timeout);
			s->rc = s->rc ? s->rc : 1;
		} else {
			send_ctl(s->fd, &dest.ss, dest.len, CTL_BYE, s->id,
				 0);
			/* Give BYE its first transmission before close. */
			usleep(20 * 1000);
		}
	}
	close(s->fd);
	free(buf);
	return NULL;
}

int do_send(void)
{
	struct sender *snd;
	unsigned int i;
	int rc = 0;

	if (!opt.to || !opt.port || !opt.nsizes)
		die("send needs --to, --port and --sizes");
	make_addr(&dest, opt.to, opt.port);
	snd = calloc(opt.senders, sizeof(*snd));
	if (!snd)
		die("out of memory");
	for (i = 0; i < opt.senders; i++) {
		snd[i].id = opt.id_base + i;
		if (pthread_create(&snd[i].thread, NULL, sender_main, &snd[i]))
			die("pthread_create failed");
	}
	for (i = 0; i < opt.senders; i++) {
		pthread_join(snd[i].thread, NULL);
		printf("# send: sender %u: %u/%u messages, %llu bytes, %s in %.2f s\n",
		       snd[i].id, snd[i].sent, per_sender(), snd[i].bytes,
		       opt.no_ack ? "no ack asked" :
		       snd[i].done ? (snd[i].status ? "receiver reports errors" :
				      "receiver done") : "NO ACK",
		       snd[i].elapsed);
		if (snd[i].done && snd[i].status && !snd[i].rc)
			snd[i].rc = 1;
		if (snd[i].rc)
			rc = snd[i].rc;
	}
	fflush(stdout);
	free(snd);
	return rc;
}
