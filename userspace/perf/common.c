// SPDX-License-Identifier: GPL-2.0
/*
 * dlcp-perf: errors, clocks and the sockets both ends open.
 */
#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include <linux/dlcp.h>

#include "perf.h"

/* "dlcp-perf: message" on stderr */
static void vcomplain(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vcomplain(fmt, ap);
	va_end(ap);
	exit(1);
}

void bad_opt(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vcomplain(fmt, ap);
	va_end(ap);
	usage();
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t boot_id(void)
{
	char buf[64] = "";
	uint64_t h = 1469598103934665603ull;
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
	size_t i;

	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	for (i = 0; buf[i]; i++)
		h = (h ^ (unsigned char)buf[i]) * 1099511628211ull;
	return h;
}

/* An AF_INET DLCP socket with --encap applied; dies without one. */
int dlcp_socket(void)
{
	int fd = socket(AF_INET, SOCK_DLCP, 0);

	if (fd < 0) {
		if (errno == EPROTONOSUPPORT || errno == ESOCKTNOSUPPORT ||
		    errno == EAFNOSUPPORT || errno == EINVAL)
			die("socket(AF_INET, SOCK_DLCP): %s: dlcp.ko is not loaded (insmod kmod/dlcp.ko)",
			    strerror(errno));
		die("socket(AF_INET, SOCK_DLCP): %s", strerror(errno));
	}
	if (opt.encap >= 0 &&
	    setsockopt(fd, SOL_DLCP, DLCP_ENCAP, &opt.encap,
		       sizeof(opt.encap)))
		die("setsockopt(DLCP_ENCAP, %s): %s%s",
		    opt.encap == DLCP_ENCAP_UDP ? "udp" : "native",
		    strerror(errno), errno == EADDRINUSE ?
		    " (net.dlcp.udp_port is taken by another socket)" : "");
	return fd;
}

void resolve(const char *host, uint16_t port, struct sockaddr_in *sin)
{
	struct addrinfo hints = { .ai_family = AF_INET }, *res;
	int err;

	err = getaddrinfo(host, NULL, &hints, &res);
	if (err)
		die("cannot resolve '%s': %s", host, gai_strerror(err));
	*sin = *(struct sockaddr_in *)res->ai_addr;
	sin->sin_port = htons(port);
	freeaddrinfo(res);
}
