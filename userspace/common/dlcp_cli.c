// SPDX-License-Identifier: GPL-2.0
/*
 * dlcp_cli - strict parsing of the numbers given to command-line options
 * (dlcp_cli.h). strtoull() and strtod() alone take leading blanks, a sign
 * ("-1" is ULLONG_MAX), "inf" and "nan", and stop quietly at the first
 * character they do not know; here the argument must be the number.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* program_invocation_short_name */
#endif
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "dlcp_cli.h"

/*
 * The unsigned integer at the start of @s (decimal, or hexadecimal after
 * 0x) into *@v, *@end after it. Return: 0, -EINVAL or -ERANGE.
 */
static int dlcp_parse_prefix(const char *s, unsigned long long *v, char **end)
{
	int base = 10;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		if (!isxdigit((unsigned char)s[2]))
			return -EINVAL;
		base = 16;
	} else if (!isdigit((unsigned char)s[0])) {
		return -EINVAL;
	}
	errno = 0;
	*v = strtoull(s, end, base);
	return errno == ERANGE ? -ERANGE : 0;
}

int dlcp_parse_uint(const char *s, unsigned long long min,
		    unsigned long long max, unsigned long long *v)
{
	char *end;
	int err = dlcp_parse_prefix(s, v, &end);

	if (err)
		return err;
	if (*end)
		return -EINVAL;
	return *v < min || *v > max ? -ERANGE : 0;
}

int dlcp_parse_positive(const char *s, double max, double *v)
{
	char *end;

	/* digits first: no blanks, sign, "inf" or "nan" */
	if (!isdigit((unsigned char)s[0]) &&
	    !(s[0] == '.' && isdigit((unsigned char)s[1])))
		return -EINVAL;
	errno = 0;
	*v = strtod(s, &end);
	if (*end || !isfinite(*v))
		return -EINVAL;
	if (errno == ERANGE || !(*v > 0) || *v > max)
		return -ERANGE;
	return 0;
}

int dlcp_parse_size(const char *s, unsigned long long min,
		    unsigned long long max, unsigned long long *v)
{
	unsigned int shift = 0;
	char *end;
	int err = dlcp_parse_prefix(s, v, &end);

	if (err)
		return err;
	switch (*end) {
	case 'k': case 'K':
		shift = 10;
		break;
	case 'm': case 'M':
		shift = 20;
		break;
	case 'g': case 'G':
		shift = 30;
		break;
	}
	if (shift)
		end++;
	if (*end)
		return -EINVAL;
	if (*v > (~0ULL >> shift))
		return -ERANGE;
	*v <<= shift;
	return *v < min || *v > max ? -ERANGE : 0;
}

static void __attribute__((noreturn))
dlcp_cli_bad(const char *option, const char *arg, const char *what)
{
	fprintf(stderr, "%s: %s: '%s' is not %s\n",
		program_invocation_short_name, option, arg, what);
	exit(2);
}

/*
 * @arg as @parse reads it, else "PROG: OPTION: 'ARG' is not @noun in
 * MIN..MAX@tail" and exit status 2
 */
static unsigned long long
dlcp_cli_range(int (*parse)(const char *, unsigned long long,
			    unsigned long long, unsigned long long *),
	       const char *option, const char *arg, unsigned long long min,
	       unsigned long long max, const char *noun, const char *tail)
{
	unsigned long long v;
	char what[128];

	if (!parse(arg, min, max, &v))
		return v;
	snprintf(what, sizeof(what), "%s in %llu..%llu%s", noun, min, max,
		 tail);
	dlcp_cli_bad(option, arg, what);
}

unsigned long long dlcp_cli_uint(const char *option, const char *arg,
				 unsigned long long min,
				 unsigned long long max)
{
	return dlcp_cli_range(dlcp_parse_uint, option, arg, min, max,
			      "a whole number", "");
}

unsigned long long dlcp_cli_size(const char *option, const char *arg,
				 unsigned long long min,
				 unsigned long long max)
{
	return dlcp_cli_range(dlcp_parse_size, option, arg, min, max, "a size",
			      " bytes (suffix k, m or g: KiB, MiB, GiB)");
}

double dlcp_cli_positive(const char *option, const char *arg, double max)
{
	char what[96];
	double v;

	if (!dlcp_parse_positive(arg, max, &v))
		return v;
	snprintf(what, sizeof(what), "a number greater than 0 and at most %g",
		 max);
	dlcp_cli_bad(option, arg, what);
}
