/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dlcp_cli - strict parsing of the numbers given to command-line options,
 * shared by dlcpstat, dlcp-cat, dlcp-perf and dlcp-demo.
 *
 * A number is the whole argument: decimal digits, or 0x and hexadecimal
 * digits for an integer; no sign, no blanks, nothing after it (but a k, m
 * or g suffix where a size is asked for); within the option's range and
 * without overflow. The dlcp_cli_*() readers report a bad value on stderr
 * as "PROG: OPTION: 'VALUE' is not ..." and exit with status 2, as for
 * any bad command line; dlcp_parse_*() only tell.
 */
#ifndef DLCP_CLI_H
#define DLCP_CLI_H

/*
 * Parse @s as an unsigned integer in @min..@max into *@v.
 * Return: 0, -EINVAL (not a number) or -ERANGE (outside @min..@max, or too
 * large for unsigned long long).
 */
int dlcp_parse_uint(const char *s, unsigned long long min,
		    unsigned long long max, unsigned long long *v);

/*
 * Parse @s as a finite decimal number (fractions and exponents allowed)
 * greater than 0 and at most @max into *@v. Return: 0, -EINVAL or -ERANGE.
 */
int dlcp_parse_positive(const char *s, double max, double *v);

/*
 * Parse @s as a byte count with an optional binary suffix (k: KiB, m: MiB,
 * g: GiB, either case) in @min..@max into *@v. Return: as above.
 */
int dlcp_parse_size(const char *s, unsigned long long min,
		    unsigned long long max, unsigned long long *v);

/*
 * The value of @option ("-B", "--port", "INTERVAL"): @arg parsed as
 * dlcp_parse_uint(), dlcp_parse_positive() and dlcp_parse_size() do;
 * a bad value exits the program with status 2 after saying why.
 */
unsigned long long dlcp_cli_uint(const char *option, const char *arg,
				 unsigned long long min,
				 unsigned long long max);
double dlcp_cli_positive(const char *option, const char *arg, double max);
unsigned long long dlcp_cli_size(const char *option, const char *arg,
				 unsigned long long min,
				 unsigned long long max);

#endif /* DLCP_CLI_H */
