// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libdlcp rendezvous: where the ranks of a group are, from a group file
 * (one addr:port per line, rank order) or from the environment torchrun
 * sets (RANK, WORLD_SIZE) with DLCP_GROUP_FILE or a fixed address plan.
 * Ranks that learn each other's addresses at run time (a store) open the
 * group on their endpoint instead: dlcp_group_open_ep().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "libdlcp.h"

int dlcp_group_open_file(struct dlcp_group **gp, const char *path, int rank,
			 int transport, int timeout_ms)
{
	struct sockaddr_storage *addrs;
	char *text;
	FILE *f;
	long sz;
	int n, err;

	if (!path)
		return -EINVAL;
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (fseek(f, 0, SEEK_END) || (sz = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return -EIO;
	}
	text = calloc(1, (size_t)sz + 1);
	addrs = calloc(DLCP_GROUP_MAX, sizeof(*addrs));
	if (!text || !addrs) {
		fclose(f);
		free(text);
		free(addrs);
		return -ENOMEM;
	}
	if (fread(text, 1, (size_t)sz, f) != (size_t)sz) {
		err = -EIO;
		goto out;
	}
	n = dlcp_parse_group_sa(text, addrs, DLCP_GROUP_MAX);
	if (n < 0) {
		err = n;
		goto out;
	}
	err = dlcp_group_open_sa(gp, rank, n, addrs, transport, timeout_ms);
out:
	fclose(f);
	free(text);
	free(addrs);
	return err;
}

static int env_int(const char *name, long *v)
{
	const char *s = getenv(name);
	char *end;

	if (!s || !*s)
		return -ENOENT;
	errno = 0;
	*v = strtol(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	return 0;
}

int dlcp_group_open_env(struct dlcp_group **gp, int base_port, int transport,
			int timeout_ms)
{
	struct sockaddr_in *addrs;
	const char *file = getenv("DLCP_GROUP_FILE");
	const char *same = getenv("DLCP_SAME_HOST");
	const char *tr = getenv("DLCP_TRANSPORT");
	const char *plan = getenv("DLCP_ADDR_PLAN");
	int same_host = same && !strcmp(same, "1");
	long rank, world, bp;
	int i, err;

	if (env_int("RANK", &rank) || env_int("WORLD_SIZE", &world))
		return -EINVAL;
	if (transport < 0)
		transport = (tr && !strcmp(tr, "tcp")) ? DLCP_TRANSPORT_TCP :
							 DLCP_TRANSPORT_DLCP;
	if (file && *file)
		return dlcp_group_open_file(gp, file, (int)rank, transport,
					    timeout_ms);
	/* no address plan unless asked for: ranks on other hosts find
	 * each other through a group file or a rendezvous (dlcp.py) */
	if (!same_host && !(plan && !strcmp(plan, "10.77")))
		return -EDESTADDRREQ;
	if (world < 1 || world > DLCP_GROUP_MAX || rank < 0 || rank >= world ||
	    (!same_host && world > 254))
		return -EINVAL;
	if (!base_port) {
		if (env_int("DLCP_BASE_PORT", &bp))
			bp = 29600;
		base_port = (int)bp;
	}
	/* same host: ports base_port .. base_port + world - 1 */
	if (base_port <= 0 || base_port + (same_host ? world - 1 : 0) > 65535)
		return -EINVAL;
	addrs = calloc((size_t)world, sizeof(*addrs));
	if (!addrs)
		return -ENOMEM;
	for (i = 0; i < world; i++) {
		addrs[i].sin_family = AF_INET;
		if (same_host) {
			addrs[i].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			addrs[i].sin_port = htons((uint16_t)(base_port + i));
		} else {
			addrs[i].sin_addr.s_addr = htonl(0x0a4d0000u | (uint32_t)(i + 1));
			addrs[i].sin_port = htons((uint16_t)base_port);
		}
	}
	err = dlcp_group_open(gp, (int)rank, (int)world, addrs, transport,
			      timeout_ms);
	free(addrs);
	return err;
}
