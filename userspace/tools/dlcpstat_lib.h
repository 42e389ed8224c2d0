/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dlcpstat_lib - parsing and arithmetic of counter tables: the "Name value"
 * lines of /proc/net/dlcp/snmp (and of dlcpstat's history file, which uses
 * the same format), and a protocol's table of /proc/net/snmp. The parsers
 * read a FILE, so that the host unit test can feed them strings; the
 * readers open the file first. Used by dlcpstat and dlcp-perf.
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

/*
 * Read the "Name value" file at @path into @t with dlcpstat_parse().
 * Return: 0; -errno when it cannot be opened; -EBADMSG when the parser
 * fails, *@bad_line set as it sets it (0: allocation failure). The lines
 * before a bad one stay in @t.
 */
int dlcpstat_read(const char *path, struct dlcpstat_table *t,
		  unsigned int *bad_line);

/*
 * Parse the table of @proto ("Tcp", "Udp", ...) in the format of
 * /proc/net/snmp, a line "Proto: Name..." followed by a line
 * "Proto: value...", from @f into @t, each name prefixed with @proto
 * ("TcpRetransSegs"). Values are read as strtoull() reads them (Tcp
 * MaxConn's -1 is UINT64_MAX). No such table leaves @t as it was.
 * Return: 0, -EINVAL (a name too long or twice, a values line missing)
 * or -ENOMEM.
 */
int dlcpstat_parse_mib(FILE *f, const char *proto, struct dlcpstat_table *t);

/* The same from the file at @path (/proc/net/snmp): -errno when it cannot
 * be opened. */
int dlcpstat_read_mib(const char *path, const char *proto,
		      struct dlcpstat_table *t);

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
