/* SPDX-License-Identifier: MIT */
/*
 * What a trace file holds, learnt record by record in the reader's opening
 * pass: the totals and runs of struct trace_info, META's strings, the
 * SYMBOLS table, the notes (marks, drops, kernel events), the host's
 * waits (WAIT) and each DROPS reason's running total
 * (vmm/tracefile/scan.h).
 */
#include "vmm/tracefile/scan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/tracefile/doubt.h"
#include "vmm/tracefile/reader_internal.h"
#include "vmm/util/error.h"
#include "vmm/util/grow.h"
#include "vmm/util/printable.h"

/* Decodes the META payload. Unknown trailing bytes are allowed (newer
 * writers may add fields). */
static int decode_meta(struct trace_reader *r, uint64_t off, const uint8_t *p, uint32_t len)
{
	static const int order[5] = { STR_TOOL, STR_KERNEL, STR_BUILD_ID, STR_SYMBOLS,
				      STR_MODE };
	uint32_t pos = 16;

	if (len < 16)
		return trace_reader_corrupt(r, off, "META record too short");
	r->info.tsc_khz = get_u64(p);
	r->info.start_time_ns = get_u64(p + 8);
	for (int i = 0; i < 5; i++) {
		uint16_t n;

		if (len - pos < 2)
			return trace_reader_corrupt(r, off, "META string runs past the record");
		n = get_u16(p + pos);
		pos += 2;
		if (n > len - pos)
			return trace_reader_corrupt(r, off, "META string runs past the record");
		if (trace_reader_set_string(r, order[i], p + pos, n))
			return -1;
		pos += n;
	}
	r->info.has_meta = true;
	return 0;
}

static int decode_symbols(struct trace_reader *r, uint64_t off, const uint8_t *p, uint32_t len)
{
	uint32_t count, pos = 4;
	struct name_block *blk;
	char *names;

	if (len < 4)
		return trace_reader_corrupt(r, off, "SYMBOLS record too short");
	count = get_u32(p);
	/* Each entry takes at least 20 bytes: bounds count before allocating. */
	if (count > (len - 4) / 20)
		return trace_reader_corrupt(r, off, "SYMBOLS count larger than the record");
	/* All names of this record fit in len bytes (with NULs, as the u16
	 * lengths they replace take two bytes each). */
	blk = malloc(sizeof(*blk) + len);
	if (!blk)
		return et_error("out of memory");
	blk->next = r->names;
	r->names = blk;
	names = blk->names;
	if (r->tab.nr + count > r->tab_cap) {
		size_t cap = r->tab_cap ? r->tab_cap : 1024;
		struct symbol *s;

		while (cap < r->tab.nr + count)
			cap *= 2;
		s = realloc(r->tab.syms, cap * sizeof(*s));
		if (!s)
			return et_error("out of memory");
		r->tab.syms = s;
		r->tab_cap = cap;
	}
	for (uint32_t i = 0; i < count; i++) {
		struct symbol *s = &r->tab.syms[r->tab.nr];
		uint16_t n;

		if (len - pos < 20)
			return trace_reader_corrupt(r, off, "SYMBOLS entry runs past the record");
		n = get_u16(p + pos + 18);
		if (n > len - pos - 20)
			return trace_reader_corrupt(r, off, "SYMBOLS name runs past the record");
		s->addr = get_u64(p + pos);
		s->size = get_u64(p + pos + 8);
		s->type = (char)p[pos + 16];
		if (!printable_ascii((unsigned char)s->type))
			s->type = 0;
		memcpy(names, p + pos + 20, n);
		names[n] = '\0';
		printable_sanitize(names, n);
		s->name = names;
		names += n + 1;
		pos += 20 + n;
		r->tab.nr++;
	}
	r->info.nr_symbols = r->tab.nr;
	return 0;
}

/* The last total of a DROPS reason (a new reason starts at 0). */
static uint64_t *drop_total(struct trace_reader *r, const char *reason)
{
	struct drop_stream *d;

	for (size_t i = 0; i < r->nr_drops; i++)
		if (!strcmp(r->drops[i].reason, reason))
			return &r->drops[i].total;
	d = realloc(r->drops, (r->nr_drops + 1) * sizeof(*d));
	if (!d)
		return NULL;
	r->drops = d;
	d = &r->drops[r->nr_drops];
	d->reason = strdup(reason);
	d->total = 0;
	if (!d->reason)
		return NULL;
	r->nr_drops++;
	return &d->total;
}

/* What a report shows for a KEVENT: the message, or for a raw event its
 * type and first bytes in hex. */
static char *kevent_text(const struct trace_kevent *k)
{
	size_t cap = 64 + strlen(k->text) + 3 * 64, n;
	char *s = malloc(cap);

	if (!s)
		return NULL;
	if (k->kind != TRACE_KEVENT_RAW) {
		snprintf(s, cap, "%s%s", k->text, k->truncated ? " [truncated]" : "");
		return s;
	}
	n = (size_t)snprintf(s, cap, "event type %u (%u bytes):", k->type, k->payload_len);
	for (uint32_t i = 0; i < k->payload_len && i < 64 && n + 4 < cap; i++)
		n += (size_t)snprintf(s + n, cap - n, " %02x", k->payload[i]);
	if (k->payload_len > 64 && n + 5 < cap)
		snprintf(s + n, cap - n, " ...");
	return s;
}

static int add_note(struct trace_reader *r, const struct trace_record *rec)
{
	struct trace_note *n;

	if (r->nr_notes == r->notes_cap) {
		n = array_grow(r->notes, &r->notes_cap, sizeof(*n), 16);
		if (!n)
			return et_error("out of memory");
		r->notes = n;
	}
	n = &r->notes[r->nr_notes];
	memset(n, 0, sizeof(*n));
	n->tsc = rec->tsc;
	n->type = rec->type;
	n->offset = rec->offset;
	if (rec->type == TRACE_REC_DROPS) {
		uint64_t *last = drop_total(r, rec->text);

		if (!last)
			return et_error("out of memory");
		n->dropped = rec->dropped_total > *last ? rec->dropped_total - *last : 0;
		if (rec->dropped_total > *last)
			*last = rec->dropped_total;
		/* Reports show the run's total so far: every reason's. */
		for (size_t i = 0; i < r->nr_drops; i++)
			n->dropped_total += r->drops[i].total;
	}
	if (rec->type == TRACE_REC_KEVENT) {
		n->cpu = rec->kevent.cpu;
		n->kevent_type = rec->kevent.type;
		n->kevent_kind = rec->kevent.kind;
		n->ip = rec->kevent.ip;
		n->text = kevent_text(&rec->kevent);
	} else {
		n->text = strdup(rec->text);
	}
	if (!n->text)
		return et_error("out of memory");
	r->nr_notes++;
	return 0;
}

static int add_wait(struct trace_reader *r, const struct trace_record *rec)
{
	const uint8_t *p = rec->payload;
	struct trace_wait *w;
	size_t n = r->info.nr_waits;

	if (n == r->waits_cap) {
		w = array_grow(r->waits, &r->waits_cap, sizeof(*w), 64);
		if (!w)
			return et_error("out of memory");
		r->waits = w;
	}
	r->waits[n] = (struct trace_wait){
		.tsc = get_u64(p), .cpu = get_u32(p + 8), .ticks = get_u64(p + 16)
	};
	r->info.waits_ticks = r->info.waits_ticks + r->waits[n].ticks < r->info.waits_ticks
				      ? UINT64_MAX
				      : r->info.waits_ticks + r->waits[n].ticks;
	r->info.nr_waits = n + 1;
	return 0;
}

int trace_scan_record(struct trace_reader *r, const struct trace_record *rec)
{
	struct trace_info *in = &r->info;

	in->nr_records++;
	switch (rec->type) {
	case TRACE_REC_META:
		return decode_meta(r, rec->offset, rec->payload, rec->len);
	case TRACE_REC_SYMBOLS:
		return decode_symbols(r, rec->offset, rec->payload, rec->len);
	case TRACE_REC_EVENTS:
		for (size_t i = 0; i < rec->nr_events; i++) {
			const struct et_ring_record *e = &rec->events[i];
			uint32_t cpu = et_rec_cpu(e);
			unsigned kind = et_rec_kind(e);

			/* A new run wherever time goes backwards. */
			if (!in->nr_events || e->tsc < r->last_event_tsc) {
				if (in->nr_runs < TRACE_MERGE_MAX_RUNS) {
					r->runs[in->nr_runs].offset = rec->offset;
					r->runs[in->nr_runs].index = i;
				}
				in->nr_runs++;
			}
			r->last_event_tsc = e->tsc;
			if (!in->nr_events) {
				in->min_tsc = in->max_tsc = in->first_tsc = e->tsc;
			} else {
				if (e->tsc < in->min_tsc)
					in->min_tsc = e->tsc;
				if (e->tsc > in->max_tsc)
					in->max_tsc = e->tsc;
			}
			in->last_tsc = e->tsc;
			if (et_rec_is_exit(e)) {
				in->nr_exits++;
				if (kind - ET_REC_EXIT_FIRST < TRACE_EXIT_KINDS)
					in->exits_by_kind[kind - ET_REC_EXIT_FIRST]++;
			} else {
				if (e->flags & ET_REC_F_FTRACE)
					in->nr_ftrace++;
				else
					in->events_by_source[e->flags & ET_REC_SRC_MASK]++;
				in->nr_returns += kind == ET_REC_RET;
				in->nr_ret_traced += kind == ET_REC_CALL &&
						     (e->flags & ET_REC_F_RET_TRACED);
			}
			if (cpu < UINT32_MAX && cpu + 1 > in->nr_cpus)
				in->nr_cpus = cpu + 1;
			in->nr_events++;
		}
		return 0;
	case TRACE_REC_DROPS:
		in->nr_drop_records++;
		if (trace_reader_set_string(r, STR_DROP_REASON, (const uint8_t *)rec->text,
					    strlen(rec->text)) ||
		    add_note(r, rec))
			return -1;
		/* Every reason's last total, summed (END's count wins if larger). */
		in->dropped = 0;
		for (size_t i = 0; i < r->nr_drops; i++)
			in->dropped += r->drops[i].total;
		if (in->has_end && in->end_dropped > in->dropped)
			in->dropped = in->end_dropped;
		return 0;
	case TRACE_REC_KEVENT:
		in->nr_kevents++;
		if (rec->kevent.cpu < UINT32_MAX && rec->kevent.cpu + 1 > in->nr_cpus)
			in->nr_cpus = rec->kevent.cpu + 1;
		return add_note(r, rec);
	case TRACE_REC_MARK:
		in->nr_marks++;
		if (trace_reader_set_string(r, STR_LAST_MARK, (const uint8_t *)rec->text,
					    strlen(rec->text)))
			return -1;
		return add_note(r, rec);
	case TRACE_REC_OVERHEAD: {
		const uint8_t *p = rec->payload;
		struct trace_overhead *o = &in->overhead;

		o->tsc = get_u64(p);
		o->exits = get_u64(p + 8);
		o->exit_ticks = get_u64(p + 16);
		o->drains = get_u64(p + 24);
		o->drain_ticks = get_u64(p + 32);
		o->rest_ticks = get_u64(p + 40);
		/* Older writers end here: the wait is then not known. */
		o->waited_ticks = rec->len >= TRACE_OVERHEAD_LEN ? get_u64(p + 48) : 0;
		o->flags = rec->len >= TRACE_OVERHEAD_LEN ? get_u64(p + 56) : 0;
		in->has_overhead = true;
		return 0;
	}
	case TRACE_REC_WAIT:
		return add_wait(r, rec);
	case TRACE_REC_CLOCK:
		/* The first one counts (a writer writes one). */
		if (!in->has_origin) {
			in->has_origin = true;
			in->origin_tsc = rec->tsc;
		}
		return 0;
	case TRACE_REC_END:
		if (trace_doubt_end_count(r, rec))
			return -1;
		in->has_end = true;
		in->end_recorded = rec->recorded;
		in->end_written = rec->written;
		in->end_dropped = rec->dropped;
		in->end_lost = rec->lost;
		if (rec->dropped > in->dropped)
			in->dropped = rec->dropped;
		return trace_reader_set_string(r, STR_EXIT_REASON, (const uint8_t *)rec->text,
					       strlen(rec->text));
	}
	return 0;
}

/* By TSC, then CPU: the order the overhead clock takes them in. */
static int compare_waits(const void *a, const void *b)
{
	const struct trace_wait *x = a, *y = b;

	if (x->tsc != y->tsc)
		return x->tsc < y->tsc ? -1 : 1;
	return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

static int compare_notes(const void *a, const void *b)
{
	const struct trace_note *x = a, *y = b;

	if (x->tsc != y->tsc)
		return x->tsc < y->tsc ? -1 : 1;
	/* Equal times keep file order. */
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

void trace_scan_finish(struct trace_reader *r)
{
	symtab_sort(&r->tab);
	if (r->nr_notes)
		qsort(r->notes, r->nr_notes, sizeof(*r->notes), compare_notes);
	if (r->info.nr_waits)
		qsort(r->waits, r->info.nr_waits, sizeof(*r->waits), compare_waits);
	r->info.waits = r->waits;
	/* Older files: time zero is the earliest event. */
	if (!r->info.has_origin)
		r->info.origin_tsc = r->info.min_tsc;
}
