/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the parts of dlcp_xfer share: the options, the control messages
 * between receiver and senders, and the socket helpers of dlcp_xfer.c.
 * The receiver is in dlcp_xfer_recv.c, the senders in dlcp_xfer_send.c.
 */
#ifndef DLCP_XFER_H
#define DLCP_XFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#define MAX_SIZES	64
#define MAX_SENDERS	64
#define CTL_MAGIC	0x444c4350u	/* "DLCP" */
#define CTL_DONE	1
#define CTL_BYE		2
#define CTL_TENSOR	0xffffffffu	/* tensor_id of control messages */

/* A control message between receiver and sender. */
struct ctl_msg {
	uint32_t magic;
	uint32_t type;
	uint32_t sender;
	uint32_t status;	/* DONE: 0 if all of this sender's arrived */
};

struct addr {
	struct sockaddr_storage ss;
	socklen_t len;
};

/* The command line (dlcp_xfer.c). */
struct xfer_opts {
	int family;
	const char *to;
	const char *bind_addr;
	uint16_t port;
	size_t sizes[MAX_SIZES];
	unsigned int nsizes;
	unsigned int repeat;
	unsigned int senders;
	uint32_t id_base;
	unsigned int count;
	double timeout;
	double linger;
	const char *ready_file;
	int rcvbuf;
	int sndbuf;
	bool no_ack;
	bool no_wait;
	bool quiet;
	bool verbose;
	bool budget_set;
	uint32_t budget;	/* --budget: loss budget, ppm */
	size_t critical;	/* --critical: bytes [0, N) are critical */
	unsigned int min_lossy;	/* --min-lossy: at least N lossy messages */
};

extern struct xfer_opts opt;

/* A message on stderr, unless --quiet. */
void msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A message on stderr, and exit status 2. */
void die(const char *fmt, ...)
	__attribute__((noreturn, format(printf, 1, 2)));

/* Messages each sender sends: the sizes times --repeat. */
unsigned int per_sender(void);

void make_addr(struct addr *a, const char *host, uint16_t port);
int dlcp_socket(void);
void set_buf(int fd, int force_opt, int opt_name, int bytes);
void touch_ready(void);
ssize_t send_meta(int fd, const struct addr *to, const void *buf,
		  size_t len, uint32_t tensor, uint32_t iter, bool data);
ssize_t send_ctl(int fd, const struct sockaddr_storage *to,
		 socklen_t tolen, uint32_t type, uint32_t sender,
		 uint32_t status);
int wait_readable(int fd, double secs);

/* The commands recv (dlcp_xfer_recv.c) and send (dlcp_xfer_send.c). */
int do_recv(void);
int do_send(void);

#endif /* DLCP_XFER_H */
