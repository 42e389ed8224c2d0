// SPDX-License-Identifier: GPL-2.0
/*
 * dlcpstat_lib - see dlcpstat_lib.h.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dlcpstat_lib.h"

static int table_add(struct dlcpstat_table *t, const char *name, size_t nlen,
		     uint64_t value)
{
	struct dlcpstat_entry *e;
	size_t i;

	for (i = 0; i < t->nr; i++)
		if (strlen(t->e[i].name) == nlen &&
		    !memcmp(t->e[i].name, name, nlen))
			return -1;	/* duplicate */
	if (t->nr == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;

		e = realloc(t->e, cap * sizeof(*e));
		if (!e)
			return -2;
		t->e = e;
		t->cap = cap;
	}
	e = &t->e[t->nr++];
	memcpy(e->name, name, nlen);
	e->name[nlen] = '\0';
	e->value = value;
	return 0;
}

static int parse_line(const char *s, struct dlcpstat_table *t)
{
	const char *name, *v;
	uint64_t value = 0;
	size_t nlen;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s || *s == '\n' || *s == '#')
		return 0;
	name = s;
	while (*s && !isspace((unsigned char)*s))
		s++;
	nlen = (size_t)(s - name);
	if (nlen >= DLCPSTAT_NAME_MAX)
		return -1;
	while (*s == ' ' || *s == '\t')
		s++;
	v = s;
	while (*s >= '0' && *s <= '9') {
		unsigned int d = (unsigned int)(*s - '0');

		if (value > (UINT64_MAX - d) / 10)
			return -1;	/* overflow */
		value = value * 10 + d;
		s++;
	}
	if (s == v)
		return -1;
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	if (*s)
		return -1;
	return table_add(t, name, nlen, value);
}

int dlcpstat_parse(FILE *f, struct dlcpstat_table *t, unsigned int *bad_line)
{
	char buf[256];
	unsigned int line = 0;
	int err;

	while (fgets(buf, sizeof(buf), f)) {
		line++;
		if (!strchr(buf, '\n') && !feof(f)) {
			*bad_line = line;	/* line too long */
			return -1;
		}
		err = parse_line(buf, t);
		if (err) {
			*bad_line = err == -2 ? 0 : line;
			return -1;
		}
	}
	if (ferror(f)) {
		*bad_line = line + 1;
		return -1;
	}
	return 0;
}

int dlcpstat_parse_str(const char *s, struct dlcpstat_table *t,
		       unsigned int *bad_line)
{
	FILE *f;
	int err;

	if (!*s)
		return 0;	/* fmemopen() refuses a zero-sized buffer */
	f = fmemopen((void *)s, strlen(s), "r");
	if (!f) {
		*bad_line = 0;
		return -1;
	}
	err = dlcpstat_parse(f, t, bad_line);
	fclose(f);
	return err;
}

int dlcpstat_read(const char *path, struct dlcpstat_table *t,
		  unsigned int *bad_line)
{
	FILE *f = fopen(path, "r");
	int err;

	if (!f)
		return -errno;
	err = dlcpstat_parse(f, t, bad_line);
	fclose(f);
	return err ? -EBADMSG : 0;
}

/* Add "@proto@name" = @value to @t: 0, -EINVAL or -ENOMEM. */
static int mib_add(struct dlcpstat_table *t, const char *proto,
		   const char *name, uint64_t value)
{
	char full[DLCPSTAT_NAME_MAX];
	int n = snprintf(full, sizeof(full), "%s%s", proto, name);

	if (n < 0 || (size_t)n >= sizeof(full))
		return -EINVAL;
	switch (table_add(t, full, (size_t)n, value)) {
	case 0:
		return 0;
	case -1:
		return -EINVAL;
	default:
		return -ENOMEM;
	}
}

int dlcpstat_parse_mib(FILE *f, const char *proto, struct dlcpstat_table *t)
{
	size_t plen = strlen(proto), cap = 0, vcap = 0;
	char *names = NULL, *vals = NULL;
	int err = 0;

	while (getline(&names, &cap, f) > 0) {
		char *sn, *sv, *tn, *tv;

		if (strncmp(names, proto, plen) || names[plen] != ':')
			continue;
		if (getline(&vals, &vcap, f) <= 0 ||
		    strncmp(vals, names, plen + 1)) {
			err = -EINVAL;
			break;
		}
		tn = strtok_r(names + plen + 1, " \n", &sn);
		tv = strtok_r(vals + plen + 1, " \n", &sv);
		while (tn && tv && !err) {
			err = mib_add(t, proto, tn, strtoull(tv, NULL, 10));
			tn = strtok_r(NULL, " \n", &sn);
			tv = strtok_r(NULL, " \n", &sv);
		}
		break;
	}
	free(names);
	free(vals);
	return err;
}

int dlcpstat_read_mib(const char *path, const char *proto,
		      struct dlcpstat_table *t)
{
	FILE *f = fopen(path, "r");
	int err;

	if (!f)
		return -errno;
	err = dlcpstat_parse_mib(f, proto, t);
	fclose(f);
	return err;
}

uint64_t dlcpstat_get(const struct dlcpstat_table *t, const char *name,
		      int *found)
{
	size_t i;

	for (i = 0; i < t->nr; i++) {
		if (!strcmp(t->e[i].name, name)) {
			if (found)
				*found = 1;
			return t->e[i].value;
		}
	}
	if (found)
		*found = 0;
	return 0;
}

uint64_t dlcpstat_delta(uint64_t cur, uint64_t old)
{
	return cur >= old ? cur - old : cur;
}

void dlcpstat_diff(struct dlcpstat_table *cur, const struct dlcpstat_table *old)
{
	size_t i;

	for (i = 0; i < cur->nr; i++)
		cur->e[i].value = dlcpstat_delta(cur->e[i].value,
						 dlcpstat_get(old, cur->e[i].name,
							      NULL));
}

void dlcpstat_free(struct dlcpstat_table *t)
{
	free(t->e);
	t->e = NULL;
	t->nr = t->cap = 0;
}
