/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dlcp_sysfuzz: what its parts share. dlcp_sysfuzz.c says what the tool
 * does; the parts are
 *   dlcp_sysfuzz.c    the driver: allow-lists and accounting of results,
 *                     timed calls and the watchdog, the worker and peer
 *                     threads, main() and the summary
 *   sysfuzz_calls.c   the random calls on the DLCP sockets (PRNG, socket
 *                     setup, addresses, sizes, control messages, sendmsg,
 *                     recvmsg, socket options, one_call()) and the check of
 *                     a received message
 */
#ifndef DLCP_SYSFUZZ_H
#define DLCP_SYSFUZZ_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>

#define NR_SLOTS	12
#define PEER_PORT	7500
#define BASE_PORT	7600	/* slots bind BASE_PORT + slot (or random) */
#define BIG		((4u << 20) + 4096)

enum call {
	C_SOCKET, C_SOCKET_ODD, C_BIND, C_CONNECT, C_SENDMSG, C_RECVMSG,
	C_RECV_ERRQ, C_SETSOCKOPT_DLCP, C_GETSOCKOPT_DLCP, C_SETSOCKOPT_SOCK,
	C_GETSOCKOPT_SOCK, C_SETSOCKOPT_IP, C_GETSOCKOPT_IP, C_SOCKOPT_OTHER,
	C_POLL, C_SHUTDOWN, C_IOCTL, C_LISTEN_ACCEPT, C_GETNAME, C_CLOSE,
	__C_MAX
};

/* the name of each call, in the summary and in messages */
extern const char *const call_name[__C_MAX];

struct rng {
	uint64_t s;
};

struct slot {
	pthread_rwlock_t lock;
	int fd;
};

/* the sockets the threads share (dlcp_sysfuzz.c) */
extern struct slot slots[NR_SLOTS];
/* BIG bytes, byte i = (i * 7 + 3) & 0xff: the payload of every message */
extern uint8_t *pattern;
/* net.dlcp.max_msg_size (at most BIG - 1) */
extern int max_msg;
/* messages received corrupted, by the peer or by a worker */
extern atomic_ulong corrupt;

/* dlcp_sysfuzz.c: count the result of a call, check its errno */
void account(enum call c, long ret, int err, const char *what);
/* dlcp_sysfuzz.c: the calling thread enters (leaves) a call; the watchdog
 * reports one that stays in it too long. call_end() returns its ms. */
void call_begin(const char *what);
long call_end(void);
/* dlcp_sysfuzz.c: close() with the SO_LINGER setting @linger (-1: none),
 * timed */
int timed_close(int fd, int linger);

/* Make call @c (@expr), tracked and accounted. */
#define DO(c, what, expr)						\
	do {								\
		long __r;						\
		call_begin(call_name[c]);				\
		errno = 0;						\
		__r = (long)(expr);					\
		call_end();						\
		account(c, __r, errno, what);				\
	} while (0)

/* sysfuzz_calls.c: a DLCP socket with short timeouts, maybe bound; -1
 * when socket() fails */
int open_dlcp(struct rng *r);
/* sysfuzz_calls.c: one random call on a random slot (@buf: BIG bytes) */
void one_call(struct rng *r, uint8_t *buf);
/* sysfuzz_calls.c: is a received message intact? 1 yes, 0 cannot tell
 * (truncated, loss reported, no DLCP_CMSG_RECV), -1 corrupt */
int check_rcvd(const uint8_t *buf, ssize_t n, struct msghdr *mh);

#endif /* DLCP_SYSFUZZ_H */
