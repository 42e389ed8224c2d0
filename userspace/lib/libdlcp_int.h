/* SPDX-License-Identifier: GPL-2.0 */
/* libdlcp internals shared between its source files. */
#ifndef LIBDLCP_INT_H
#define LIBDLCP_INT_H

long dlcp__now_ms(void);

#endif
