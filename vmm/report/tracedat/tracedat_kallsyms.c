/* SPDX-License-Identifier: MIT */
/* kallsyms text from the trace's symbols (tracedat_kallsyms.h). */
#include "vmm/report/tracedat/tracedat_kallsyms.h"

#include <string.h>

#define NAME_MAX_LEN 4096 /* longer names (none in a trace file) are skipped */

/* "%016llx %c NAME\n" into buf (at least 20 + strlen(name) bytes); the
 * line's length. Spaces in the name become '?'. */
static size_t format_line(char *buf, uint64_t addr, char type, const char *name, bool *renamed)
{
	static const char digits[] = "0123456789abcdef";
	size_t n = 0;

	for (int shift = 60; shift >= 0; shift -= 4)
		buf[n++] = digits[(addr >> shift) & 15];
	buf[n++] = ' ';
	buf[n++] = type;
	buf[n++] = ' ';
	*renamed = false;
	for (; *name; name++) {
		bool space = *name == ' ';

		*renamed |= space;
		buf[n++] = space ? '?' : *name;
	}
	buf[n++] = '\n';
	return n;
}

/* nm's letter as kallsyms shows it; functions without one are 't'. */
static char type_letter(char type)
{
	switch (type) {
	case 't':
	case 'T':
	case 'w':
	case 'W':
		return type;
	}
	return 't';
}

uint64_t tracedat_kallsyms(const struct symtab *tab, struct tracedat_out *out,
			   struct tracedat_kallsyms_stats *stats)
{
	char line[NAME_MAX_LEN + 24];
	uint64_t total = 0;
	const struct symbol *last = NULL;
	bool renamed;

	memset(stats, 0, sizeof(*stats));
	for (size_t i = 0; i < tab->nr; i++) {
		const struct symbol *s = &tab->syms[i];
		size_t n;

		/* One line per address: the first of its aliases, the one
		 * symtab_lookup() answers with. */
		if (i && s->addr == tab->syms[i - 1].addr)
			continue;
		if (!s->name[0] || s->name[0] == '$' || strlen(s->name) > NAME_MAX_LEN) {
			stats->skipped++;
			continue;
		}
		n = format_line(line, s->addr, type_letter(s->type), s->name, &renamed);
		if (total + n > UINT32_MAX - 64) {
			stats->skipped++;
			continue;
		}
		if (out && tracedat_out_write(out, line, n))
			return UINT64_MAX;
		total += n;
		stats->lines++;
		stats->renamed += renamed;
		last = s;
	}
	if (last) {
		uint64_t end = last->size && last->addr + last->size > last->addr
				       ? last->addr + last->size
				       : UINT64_MAX;
		size_t n = format_line(line, end, 't', TRACEDAT_SYMBOLS_END, &renamed);

		if (end > last->addr) {
			if (out && tracedat_out_write(out, line, n))
				return UINT64_MAX;
			total += n;
			stats->lines++;
		}
	}
	return total;
}
