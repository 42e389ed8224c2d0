/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dlcpstat_lib - parsing and arithmetic of DLCP counter tables, the
 * "Name value" lines of /proc/net/dlcp/snmp (and of dlcpstat's history
 * file, which uses the same format). No I/O beyond stdio on a FILE the
 * caller opened, so that the host unit test can feed it strings.
 */
#ifndef DLCPSTAT_LIB_H
#define DLCPSTAT_LIB_H

#include <stdint.h>
#include <stdio.h>

#define DLCPSTAT_NAME_MAX	64

struct dlcpstat_entry {
	char		name[DLCPSTAT_NAME_MAX];
	uint64_t	value;
};

struct dlcpstat_table {
	struct dlcpstat_entry	*e;
	size_t			nr;
	size_t			cap;
};

/*
 * Parse "Name value" lines from @f into @t (appended, in file order).
 * Blank lines and lines starting with '#' are skipped. A name longer than
 * DLCPSTAT_NAME_MAX - 1, a missing or non-decimal value, trailing junk or
 * a duplicated name is an error.
 * Return: 0, or -1 with *@bad_line set to the 1-based offending line
 * (0 for an allocation failure).
 */
int dlcpstat_parse(FILE *f, struct dlcpstat_table *t, unsigned int *bad_line);

/* Same, from a string (uses fmemopen). */
int dlcpstat_parse_str(const char *s, struct dlcpstat_table *t,
		       unsigned int *bad_line);

/* Value of @name in @t; 0 and *@found = 0 when it is not there. */
uint64_t dlcpstat_get(const struct dlcpstat_table *t, const char *name,
		      int *found);

/*
 * Delta of a counter: @cur - @old, or @cur when the counter went backwards
 * (module reloaded, namespace re-created: counters restarted at zero).
 */
uint64_t dlcpstat_delta(uint64_t cur, uint64_t old);

/*
 * Replace every value of @cur by its delta against @old (names missing from
 * @old count from zero).
 */
void dlcpstat_diff(struct dlcpstat_table *cur, const struct dlcpstat_table *old);

void dlcpstat_free(struct dlcpstat_table *t);

#endif /* DLCPSTAT_LIB_H */
