/* SPDX-License-Identifier: MIT */
/*
 * Folded stacks for Brendan Gregg's flamegraph.pl (and speedscope,
 * inferno): one line per distinct call stack, root first, with the time
 * spent in its innermost function itself (its duration minus its
 * children's), in nanoseconds of guest TSC (cycles when the frequency is
 * unknown):
 *
 *   calltree_run;ct_root;ct_branch;ct_leaf 123456
 *
 * Stacks come from pairing calls with returns, so the trace must have
 * been recorded with --graph; calls without a return, and frames still
 * open when the trace ends, are left out. Lines are sorted by stack.
 * Stacks deeper than REPORT_MAX_DEPTH keep their innermost frames under a
 * "[outer frames]" one (report_util.h).
 *     flamegraph.pl --countname=ns < out.folded > out.svg
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/report/report.h"
#include "vmm/report/report_util.h"
#include "vmm/trace/overhead.h"
#include "vmm/util/error.h"
#include "vmm/util/grow.h"

#define FOLDED_CPUS 256

struct frame {
	uint64_t ip, tsc;
	uint64_t children; /* time spent in completed callees */
};

struct cpu_frames {
	struct frame *f;
	size_t nr, cap;
};

struct stack_total {
	char *stack; /* NULL: free slot */
	uint64_t ns;
};

struct folded {
	struct name_cache *names;
	const struct trace_info *in;
	struct overhead_clock clock; /* durations without the tracer's exits */
	struct cpu_frames cpus[FOLDED_CPUS];
	struct stack_total *tab;
	size_t nr, cap;
	char *key;
	size_t key_cap;
	size_t deepest_cut; /* most outer frames a stack_key() left out */
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static struct stack_total *slot_for(struct stack_total *tab, size_t cap, const char *key)
{
	size_t i = (size_t)hash_str(key) & (cap - 1);

	while (tab[i].stack && strcmp(tab[i].stack, key))
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static int add_total(struct folded *fo, const char *key, uint64_t ns)
{
	struct stack_total *s;

	if (fo->nr * 2 >= fo->cap) {
		size_t cap = fo->cap ? fo->cap * 2 : 1024;
		struct stack_total *tab = calloc(cap, sizeof(*tab));

		if (!tab)
			return et_error("out of memory");
		for (size_t i = 0; i < fo->cap; i++)
			if (fo->tab[i].stack)
				*slot_for(tab, cap, fo->tab[i].stack) = fo->tab[i];
		free(fo->tab);
		fo->tab = tab;
		fo->cap = cap;
	}
	s = slot_for(fo->tab, fo->cap, key);
	if (!s->stack) {
		s->stack = strdup(key);
		if (!s->stack)
			return et_error("out of memory");
		fo->nr++;
	}
	s->ns += ns;
	return 0;
}

static int append(struct folded *fo, size_t *len, const char *s)
{
	size_t n = strlen(s);

	if (*len + n + 2 > fo->key_cap) {
		size_t cap = (*len + n + 2) * 2;
		char *k = realloc(fo->key, cap);

		if (!k)
			return et_error("out of memory");
		fo->key = k;
		fo->key_cap = cap;
	}
	memcpy(fo->key + *len, s, n + 1);
	*len += n;
	return 0;
}

/* "a;b;c" for the CPU's open frames, root first. Past REPORT_MAX_DEPTH
 * frames, a pseudo-frame stands for the outer ones and the innermost
 * follow, so a line stays bounded however deep the calls go. */
static int stack_key(struct folded *fo, const struct cpu_frames *c)
{
	size_t len = 0, from = 0;
	char hex[24];

	if (c->nr > REPORT_MAX_DEPTH) {
		/* One name for any number of them: stacks that differ only
		 * in how deep they are add up on one line. */
		from = c->nr - (REPORT_MAX_DEPTH - 1);
		if (append(fo, &len, "[outer frames]"))
			return -1;
		if (from > fo->deepest_cut)
			fo->deepest_cut = from;
	}
	for (size_t i = from; i < c->nr; i++) {
		const char *name = name_cache_lookup(fo->names, c->f[i].ip);

		if (!name) {
			snprintf(hex, sizeof(hex), "0x%" PRIx64, c->f[i].ip);
			name = hex;
		}
		if ((len && append(fo, &len, ";")) || append(fo, &len, name))
			return -1;
	}
	return 0;
}

static uint64_t span(struct folded *fo, uint64_t from, uint64_t to)
{
	uint64_t d = to > from ? to - from : 0;

	return fo->in->tsc_khz ? report_tsc_ns(d, fo->in->tsc_khz, 0) : d;
}

static int on_event(struct folded *fo, const struct et_ring_record *e)
{
	struct cpu_frames *c = &fo->cpus[e->cpu < FOLDED_CPUS ? e->cpu : FOLDED_CPUS - 1];
	uint64_t total, self;

	if (et_rec_is_exit(e))
		return 0;
	if (et_rec_kind(e) != ET_REC_RET) {
		if (!(e->flags & ET_REC_F_RET_TRACED))
			return 0;
		if (c->nr == c->cap) {
			struct frame *f = array_grow(c->f, &c->cap, sizeof(*f), 64);

			if (!f)
				return et_error("out of memory");
			c->f = f;
		}
		c->f[c->nr++] = (struct frame){ e->ip, e->tsc, 0 };
		return 0;
	}
	/* A return whose call is not in the file tells nothing. */
	if (!c->nr || c->f[c->nr - 1].ip != e->ip)
		return 0;
	total = span(fo, c->f[c->nr - 1].tsc, e->tsc);
	self = total > c->f[c->nr - 1].children ? total - c->f[c->nr - 1].children : 0;
	if (stack_key(fo, c) || add_total(fo, fo->key, self))
		return -1;
	c->nr--;
	if (c->nr)
		c->f[c->nr - 1].children += total;
	return 0;
}

static int by_stack(const void *a, const void *b)
{
	const struct stack_total *x = a, *y = b;

	return strcmp(x->stack, y->stack);
}

int report_folded(struct trace_reader *r, FILE *out)
{
	struct folded *fo = calloc(1, sizeof(*fo));
	struct trace_merge *m = NULL;
	struct et_ring_record ev;
	size_t n = 0;
	int ret = -1;

	if (!fo || !(fo->names = name_cache_new(trace_reader_symtab(r)))) {
		et_error("out of memory");
		goto out;
	}
	fo->in = trace_reader_info(r);
	if (!fo->in->nr_returns) {
		et_error("no returns in this trace: folded stacks need one recorded with "
			 "'earlytrace trace --graph' (--format ftrace shows its calls)");
		goto out;
	}
	if (trace_merge_open(r, &m))
		goto out;
	overhead_clock_init(&fo->clock, fo->in, report_raw_durations());
	while ((ret = trace_merge_next(m, &ev)) > 0)
		if ((ev.tsc = overhead_clock_event(&fo->clock, &ev)), on_event(fo, &ev)) {
			ret = -1;
			goto out;
		}
	if (ret < 0)
		goto out;
	report_note_clamped(&fo->clock);
	/* Pack and sort: the same input gives the same output. */
	for (size_t i = 0; i < fo->cap; i++)
		if (fo->tab[i].stack)
			fo->tab[n++] = fo->tab[i];
	fo->cap = n; /* the packed entries are the ones to free */
	qsort(fo->tab, n, sizeof(*fo->tab), by_stack);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s %" PRIu64 "\n", fo->tab[i].stack, fo->tab[i].ns);
	if (fo->deepest_cut)
		report_set_note("calls nest deeper than %d frames: stacks keep their innermost %d, "
				"the outer ones (up to %zu) are one frame '[outer frames]'",
				REPORT_MAX_DEPTH, REPORT_MAX_DEPTH - 1, fo->deepest_cut);
	ret = fflush(out) || ferror(out) ? et_error_errno("cannot write the report") : 0;
out:
	trace_merge_close(m);
	if (fo) {
		for (size_t i = 0; i < fo->cap; i++)
			free(fo->tab[i].stack);
		for (size_t c = 0; c < FOLDED_CPUS; c++)
			free(fo->cpus[c].f);
		free(fo->tab);
		free(fo->key);
		free(fo->names);
		free(fo);
	}
	return ret;
}
