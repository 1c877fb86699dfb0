/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the report writers: a small output buffer with
 * hand-rolled number formatting (printf per field is the bottleneck when
 * converting millions of events), TSC to time conversion, and naming.
 */
#ifndef VMM_REPORT_REPORT_UTIL_H
#define VMM_REPORT_REPORT_UTIL_H

#include <stdint.h>
#include <stdio.h>

#include "vmm/trace/event_text.h"
#include "vmm/tracefile/trace_file.h"

struct outbuf {
	FILE *f;
	size_t len;
	char buf[1 << 16];
};

void ob_flush(struct outbuf *ob);
/* Flushes and reports a write error on the stream as -1. */
int ob_finish(struct outbuf *ob);

static inline void ob_reserve(struct outbuf *ob, size_t n)
{
	if (ob->len + n > sizeof(ob->buf))
		ob_flush(ob);
}

void ob_mem(struct outbuf *ob, const char *s, size_t n);
void ob_str(struct outbuf *ob, const char *s);
void ob_char(struct outbuf *ob, char c);
/* Decimal, right-aligned in width with pad (width 0: as is). */
void ob_u64(struct outbuf *ob, uint64_t v, unsigned width, char pad);
void ob_hex(struct outbuf *ob, uint64_t v); /* 0x... */
/* A JSON string literal (quotes included). */
void ob_json_str(struct outbuf *ob, const char *s);
void ob_printf(struct outbuf *ob, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Time of tsc in nanoseconds at khz; with khz 0, tsc - base cycles. */
uint64_t report_tsc_ns(uint64_t tsc, uint64_t khz, uint64_t base);

/* The symbol at ip (symtab_lookup()) through a direct-mapped cache: a
 * trace calls the same few thousand functions from the same call sites
 * over and over, so most lookups skip the binary search. */
/*
 * The deepest call stack graph and folded reports show in full: perf's
 * default (kernel.perf_event_max_stack). Deeper frames would make the
 * output grow with the square of the depth (a 2 MB trace of 32,000
 * nested calls: gigabytes); past this, graph lines stop indenting and
 * folded stacks keep their innermost frames, and both say so.
 */
#define REPORT_MAX_DEPTH 127

#define NAME_CACHE_BITS 16
struct name_cache {
	const struct symtab *tab;
	struct {
		uint64_t ip;
		const struct symbol *sym; /* NULL: no symbol */
	} slot[1u << NAME_CACHE_BITS];
};

struct name_cache *name_cache_new(const struct symtab *tab);

static inline const struct symbol *name_cache_symbol(struct name_cache *c, uint64_t ip)
{
	unsigned i = (unsigned)((ip * 0x9e3779b97f4a7c15ull) >> (64 - NAME_CACHE_BITS));

	/* Slots start as ip 0 with ip 0's answer, so every slot is valid. */
	if (c->slot[i].ip != ip) {
		c->slot[i].ip = ip;
		c->slot[i].sym = symtab_lookup(c->tab, ip, NULL);
	}
	return c->slot[i].sym;
}

static inline const char *name_cache_lookup(struct name_cache *c, uint64_t ip)
{
	const struct symbol *s = name_cache_symbol(c, ip);

	return s ? s->name : NULL;
}

/* "breakpoint N, trampoline N, guest N[, ftrace N][, unknown N]". */
const char *report_sources_text(const struct trace_info *in, char *buf, size_t len);
/* "N events: C calls, R returns, X exits, K kernel events": the words
 * `trace`, the summary and every header count in (events are all four;
 * exits are the VM exits recorded as events; kernel events are the guest
 * kernel's own text and raw events). */
const char *report_counts_text(const struct trace_info *in, char *buf, size_t len);

/* "name+0xoff" (just "name" at offset 0), or "0x..." with no symbol. */
const char *report_symbol_offset(struct name_cache *c, uint64_t ip, char *buf, size_t len);

/* "exits: 12 (pio 10, msr 2)" for headers and summaries; "" with none. */
const char *report_exit_counts(const struct trace_info *in, char *buf, size_t len);

/* Marks and drops merged into the event stream by time (the reader sorts
 * them by TSC): before an event, every note strictly earlier than it
 * (events at the same TSC come first); after the last event, the rest. */
struct note_merge {
	const struct trace_note *notes;
	size_t nr, next;
};

void note_merge_init(struct note_merge *m, const struct trace_reader *r);
/* The next note to write before an event at tsc, or NULL. */
const struct trace_note *note_merge_before(struct note_merge *m, uint64_t tsc);
/* The next note left after the last event, or NULL. */
const struct trace_note *note_merge_rest(struct note_merge *m);

#endif /* VMM_REPORT_REPORT_UTIL_H */
