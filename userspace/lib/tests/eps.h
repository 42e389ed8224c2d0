/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Tests: one endpoint per rank on the loopback address, on a port the
 * kernel chooses (port 0), so that test runs on one host never collide.
 */
#ifndef DLCP_TEST_EPS_H
#define DLCP_TEST_EPS_H

#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>

#include "libdlcp.h"

/*
 * Open @world endpoints on 127.0.0.1 (@family AF_INET) or ::1 (AF_INET6),
 * port 0; @addrs gets their bound addresses. 0 or the first error (the
 * endpoints opened so far are closed).
 */
static inline int open_eps(int world, int family, int transport,
			   struct dlcp_ep **eps, struct sockaddr_storage *addrs)
{
	int r, err;

	for (r = 0; r < world; r++) {
		struct sockaddr_storage a;

		memset(&a, 0, sizeof(a));
		if (family == AF_INET6) {
			struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&a;

			s6->sin6_family = AF_INET6;
			s6->sin6_addr = in6addr_loopback;
		} else {
			struct sockaddr_in *s4 = (struct sockaddr_in *)&a;

			s4->sin_family = AF_INET;
			s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		}
		err = dlcp_ep_open_sa(&eps[r], (struct sockaddr *)&a, sizeof(a),
				      transport);
		if (!err)
			err = dlcp_ep_addr_sa(eps[r], &addrs[r]);
		if (err) {
			while (r-- > 0)
				dlcp_ep_close(eps[r], 0);
			return err;
		}
	}
	return 0;
}

/*
 * The arguments of the collectives' tests: "dlcp" or "tcp" (*@transport;
 * TCP if neither), "--loss" (*@loss). Prints the TAP header, naming
 * @what and the transport.
 */
static inline void eps_args(int argc, char **argv, const char *what,
			    int *transport, int *loss)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "dlcp"))
			*transport = DLCP_TRANSPORT_DLCP;
		else if (!strcmp(argv[i], "tcp"))
			*transport = DLCP_TRANSPORT_TCP;
		else if (!strcmp(argv[i], "--loss"))
			*loss = 1;
	}
	printf("TAP version 13\n# libdlcp %s over %s%s\n", what,
	       *transport == DLCP_TRANSPORT_TCP ? "tcp" : "dlcp",
	       *loss ? " (lossy)" : "");
}

#endif
