// SPDX-License-Identifier: GPL-2.0
/*
 * dlcpstat_prom - the counters in the Prometheus text exposition format
 * (dlcpstat_prom.h).
 */
#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include "dlcpstat_prom.h"

void dlcpstat_prom_name(const char *name, char *metric, char *label,
			char *index)
{
	size_t n = 0, len = strlen(name), digits = len, word = 0, i;

	if (!strncmp(name, "Dlcp", 4)) {
		name += 4;
		len -= 4;
		digits = len;
	}
	/* a trailing number, after at least one letter: a series */
	while (digits > 0 && isdigit((unsigned char)name[digits - 1]))
		digits--;
	if (digits == 0 || digits == len)
		digits = len;
	n = (size_t)snprintf(metric, DLCPSTAT_METRIC_MAX, "dlcp");
	for (i = 0; i < digits && n + 8 < DLCPSTAT_METRIC_MAX; i++) {
		unsigned char c = (unsigned char)name[i];
		bool lower_before = i && (islower((unsigned char)name[i - 1]) ||
					  isdigit((unsigned char)name[i - 1]));
		bool lower_after = i + 1 < digits &&
				   islower((unsigned char)name[i + 1]);

		/* a word starts at a capital after a small letter or digit,
		 * or at the last capital of an acronym ("ICMPErrors")
		 */
		if (!i || (isupper(c) && (lower_before ||
		     (isupper((unsigned char)name[i - 1]) && lower_after)))) {
			metric[n++] = '_';
			word = n;
		}
		metric[n++] = isalnum(c) ? (char)tolower(c) : '_';
	}
	metric[n] = '\0';
	label[0] = index[0] = '\0';
	if (digits < len) {
		snprintf(label, DLCPSTAT_METRIC_MAX, "%s", metric + word);
		snprintf(index, DLCPSTAT_METRIC_MAX, "%s", name + digits);
	}
	snprintf(metric + n, DLCPSTAT_METRIC_MAX - n, "_total");
}

/*
 * @s escaped as the format wants: \\ and \n in a HELP text, and \" too in a
 * label value
 */
static void dlcpstat_prom_escape(FILE *f, const char *s, bool quote)
{
	for (; *s; s++) {
		if (*s == '\\' || (quote && *s == '"'))
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

/* one sample: METRIC{netns="NETNS",LABEL="INDEX"} VALUE */
static void dlcpstat_prom_sample(FILE *f, const char *metric,
				 const char *label, const char *index,
				 const char *netns, uint64_t value)
{
	fputs(metric, f);
	if (netns || label[0]) {
		fputc('{', f);
		if (netns) {
			fputs("netns=\"", f);
			dlcpstat_prom_escape(f, netns, true);
			fputs(label[0] ? "\"," : "\"", f);
		}
		if (label[0])
			fprintf(f, "%s=\"%s\"", label, index);
		fputc('}', f);
	}
	fprintf(f, " %llu\n", (unsigned long long)value);
}

void dlcpstat_prom_print(FILE *f, const struct dlcpstat_table *t,
			 const char *netns)
{
	char metric[DLCPSTAT_METRIC_MAX], label[DLCPSTAT_METRIC_MAX];
	char index[DLCPSTAT_METRIC_MAX], other[DLCPSTAT_METRIC_MAX];
	char olabel[DLCPSTAT_METRIC_MAX], oindex[DLCPSTAT_METRIC_MAX];
	size_t i, j;

	for (i = 0; i < t->nr; i++) {
		dlcpstat_prom_name(t->e[i].name, metric, label, index);
		/* printed with an earlier counter of the same metric? */
		for (j = 0; j < i; j++) {
			dlcpstat_prom_name(t->e[j].name, other, olabel, oindex);
			if (!strcmp(other, metric))
				break;
		}
		if (j < i)
			continue;
		fprintf(f, "# HELP %s DLCP counter ", metric);
		if (label[0]) {
			/* the name of the series: DlcpOutClass<class> */
			char series[DLCPSTAT_NAME_MAX];

			snprintf(series, sizeof(series), "%.*s",
				 (int)(strlen(t->e[i].name) - strlen(index)),
				 t->e[i].name);
			dlcpstat_prom_escape(f, series, false);
			fprintf(f, "<%s>", label);
		} else {
			dlcpstat_prom_escape(f, t->e[i].name, false);
		}
		fprintf(f, " (see dlcp(7))\n# TYPE %s counter\n", metric);
		for (j = i; j < t->nr; j++) {
			dlcpstat_prom_name(t->e[j].name, other, olabel, oindex);
			if (!strcmp(other, metric))
				dlcpstat_prom_sample(f, metric, olabel, oindex,
						     netns, t->e[j].value);
		}
	}
}
