/* SPDX-License-Identifier: MIT */
#include "vmm/ftrace/ring_fill.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/ftrace/ring_page.h"
#include "vmm/ftrace/ring_reader.h"
#include "vmm/ftrace/ring_walk.h"
#include "vmm/util/error.h"

/* kernel/trace/ring_buffer.c and include/linux/ring_buffer.h, 6.1. */
#define RB_FL_OVERWRITE 1u
#define RB_EVNT_HDR_SIZE 4u
#define RB_ALIGNMENT 4u
#define RB_LEN_TIME_EXTEND 8u
#define RB_EVNT_MIN_SIZE 8u
#define RB_MAX_SMALL_DATA (RB_ALIGNMENT * RING_PAGE_DATA_TYPE_LEN_MAX)
#define TS_MASK ((1ull << RING_PAGE_TS_SHIFT) - 1)
#define RB_WRITE_INTCNT (1ull << 20) /* the count a tail move adds to write and entries */

/* One data page as the writer leaves it, built in host memory first. */
struct page_image {
	uint8_t *data;	   /* capacity bytes */
	uint32_t write;	   /* bytes used, padding included (the page's commit) */
	uint32_t entries;
	uint32_t real_end; /* where the padding starts; 0: none */
	uint64_t stamp;
	bool moved_onto;   /* the tail moved onto it (not the ring's first page) */
};

struct fill {
	const struct ftrace_fill_config *cfg;
	const struct ftrace_layout *L;
	uint32_t cap; /* data bytes a page holds */
	/* The newest pages, at most nr_pages of them, as a circle. */
	struct page_image *pages;
	uint64_t nr_pages, first, count;
	uint64_t total_pages;
	uint64_t entries, entries_bytes, overrun, pages_lost;
	uint64_t last_ts;
};

static void put(uint8_t *base, struct ftrace_field f, uint64_t v)
{
	for (uint32_t i = 0; i < f.size && i < 8; i++)
		base[f.offset + i] = (uint8_t)(v >> (8 * i));
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* The header word: type_len in the low 5 bits, the time delta above. */
static uint32_t header(uint32_t type_len, uint64_t delta)
{
	return type_len | (uint32_t)(delta & TS_MASK) << 5;
}

static uint32_t payload_size(const struct ftrace_layout *L, enum ftrace_fill_kind kind)
{
	switch (kind) {
	case FTRACE_FILL_FUNCTION:
		return L->fill.fn_size;
	case FTRACE_FILL_GRAPH_ENTRY:
		return L->fill.graph_ent_size;
	case FTRACE_FILL_GRAPH_RETURN:
		return L->fill.graph_ret_size;
	}
	return 0;
}

/* rb_calculate_event_length() for a small event (the only kind written). */
static uint32_t event_length(uint32_t size)
{
	uint32_t len = (size ? size : 1) + RB_EVNT_HDR_SIZE;

	len = (len + RB_ALIGNMENT - 1) & ~(RB_ALIGNMENT - 1);
	return len == RB_LEN_TIME_EXTEND + RB_ALIGNMENT ? len + RB_ALIGNMENT : len;
}

/* The entry as trace_entries.h lays it out, through the layout. */
static void build_payload(const struct fill *f, const struct ftrace_fill_event *ev, uint8_t *p,
			  uint32_t size)
{
	const struct ftrace_layout *L = f->L;

	memset(p, 0, size);
	put(p, L->entry.pid, (uint64_t)(int64_t)ev->pid);
	put(p, L->entry.preempt_count, 0);
	put(p, L->entry.flags, L->fill.irqs_nosupport > 0 ? (uint64_t)L->fill.irqs_nosupport : 0);
	switch (ev->kind) {
	case FTRACE_FILL_FUNCTION:
		put(p, L->entry.type, (uint64_t)L->type.fn);
		put(p, L->fn.ip, ev->ip);
		put(p, L->fn.parent_ip, ev->parent_ip);
		break;
	case FTRACE_FILL_GRAPH_ENTRY:
		put(p, L->entry.type, (uint64_t)L->type.graph_ent);
		put(p, L->graph_ent.func, ev->ip);
		put(p, L->graph_ent.depth, (uint64_t)(int64_t)ev->depth);
		break;
	case FTRACE_FILL_GRAPH_RETURN:
		put(p, L->entry.type, (uint64_t)L->type.graph_ret);
		put(p, L->graph_ret.func, ev->ip);
		put(p, L->graph_ret.depth, (uint64_t)(int64_t)ev->depth);
		put(p, L->graph_ret.overrun, 0);
		put(p, L->graph_ret.calltime, ev->calltime);
		put(p, L->graph_ret.rettime, ev->ts);
		break;
	}
}

static struct page_image *tail(struct fill *f)
{
	return &f->pages[(f->first + f->count - 1) % f->nr_pages];
}

/* rb_move_tail(): the tail moves to a new page; with every page in use the
 * oldest is overwritten (rb_handle_head_page), its events counted. */
static void new_page(struct fill *f)
{
	struct page_image *p;

	if (f->count == f->nr_pages) {
		p = &f->pages[f->first];
		f->overrun += p->entries;
		f->entries_bytes -= p->write;
		f->pages_lost++;
		f->first = (f->first + 1) % f->nr_pages;
		f->count--;
	}
	p = &f->pages[(f->first + f->count) % f->nr_pages];
	/* Zeroed: what follows a padding record goes into the guest too, and
	 * must be nothing of the host's. */
	memset(p->data, 0, f->cap);
	p->write = p->entries = p->real_end = 0;
	p->stamp = 0;
	p->moved_onto = f->total_pages > 0;
	f->count++;
	f->total_pages++;
}

/* rb_reset_tail(): the rest of a page an event does not fit in. */
static void pad(struct fill *f, struct page_image *p)
{
	uint32_t at = p->write;

	if (at >= f->cap)
		return;
	f->entries_bytes += f->cap - at;
	p->real_end = at;
	if (at > f->cap - RB_EVNT_MIN_SIZE) {
		/* No room for a discarded event: a bare padding header, past
		 * the page's commit, which stays where it was. */
		put32(p->data + at, header(RING_PAGE_TYPE_PADDING, 0));
		return;
	}
	put32(p->data + at, header(RING_PAGE_TYPE_PADDING, 1));
	put32(p->data + at + 4, f->cap - at - RB_EVNT_HDR_SIZE);
	p->write = f->cap;
}

/* __rb_reserve_next() and rb_update_event() for one event. */
static void append(struct fill *f, const struct ftrace_fill_event *ev)
{
	uint32_t size = payload_size(f->L, ev->kind), len = event_length(size);
	struct page_image *p = f->count ? tail(f) : NULL;
	uint64_t delta = 0;
	bool extend = false;

	if (p && p->write) {
		delta = ev->ts - f->last_ts;
		extend = (delta & ~TS_MASK) != 0;
	}
	if (!p || p->write + len + (extend ? RB_LEN_TIME_EXTEND : 0) > f->cap) {
		if (p)
			pad(f, p);
		new_page(f);
		p = tail(f);
		delta = 0;
		extend = false;
	}
	if (p->write == 0)
		p->stamp = ev->ts;
	if (extend) {
		put32(p->data + p->write, header(RING_PAGE_TYPE_TIME_EXTEND, delta));
		put32(p->data + p->write + 4, (uint32_t)(delta >> RING_PAGE_TS_SHIFT));
		p->write += RB_LEN_TIME_EXTEND;
		f->entries_bytes += RB_LEN_TIME_EXTEND;
		delta = 0;
	}
	put32(p->data + p->write, header((len - RB_EVNT_HDR_SIZE + RB_ALIGNMENT - 1) / RB_ALIGNMENT,
					 delta));
	memset(p->data + p->write + RB_EVNT_HDR_SIZE, 0, len - RB_EVNT_HDR_SIZE);
	build_payload(f, ev, p->data + p->write + RB_EVNT_HDR_SIZE, size);
	p->write += len;
	p->entries++;
	f->entries++;
	f->entries_bytes += len;
	f->last_ts = ev->ts;
}

/* ---- guest memory ------------------------------------------------------ */

static int read_word(const struct ftrace_fill_config *cfg, uint64_t va, uint32_t size,
		     uint64_t *v)
{
	*v = 0;
	return size == 0 || size > 8 || cfg->read(cfg->ctx, va, v, size) ? -1 : 0;
}

static int write_field(const struct ftrace_fill_config *cfg, uint64_t base, struct ftrace_field fl,
		       uint64_t v)
{
	uint8_t b[8];

	if (fl.size == 0 || fl.size > 8)
		return -1;
	for (uint32_t i = 0; i < fl.size; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	if (cfg->write(cfg->ctx, base + fl.offset, b, fl.size))
		return et_error("ftrace fill: cannot write guest memory at 0x%llx",
				(unsigned long long)(base + fl.offset));
	return 0;
}

/* The structures from global_trace to the CPU's ring. */
struct ring_refs {
	uint64_t buffer;     /* the struct trace_buffer */
	uint64_t slot;	     /* buffers[cpu] */
	uint64_t cpu_buffer; /* the struct ring_buffer_per_cpu */
};

/* The CPU's ring_buffer_per_cpu, through global_trace. */
static int find_cpu_buffer(const struct ftrace_fill_config *cfg, uint32_t cpu,
			   struct ring_refs *refs)
{
	const struct ftrace_layout *L = cfg->layout;
	struct ring_trace_buffer tb;
	uint32_t ptr = L->trace_buffer.buffers.size;
	uint64_t flags;

	if (ring_trace_buffer_read(&tb, L, cfg->read, cfg->ctx, cfg->global_trace))
		return -1;
	if (!tb.addr)
		return et_error("the kernel has not allocated its ring buffer");
	if (read_word(cfg, tb.addr + L->fill.buffer_flags.offset, L->fill.buffer_flags.size, &flags))
		return et_error("cannot read the trace_buffer at 0x%llx",
				(unsigned long long)tb.addr);
	if (!(flags & RB_FL_OVERWRITE))
		return et_error("the kernel's ring does not overwrite (trace_options=nooverwrite?): "
				"the early calls would crowd out the kernel's own");
	if (tb.cpus <= 0 || tb.cpus > FTRACE_READER_MAX_CPUS || !tb.buffers)
		return et_error("the trace_buffer at 0x%llx has %lld CPUs and buffers 0x%llx",
				(unsigned long long)tb.addr, (long long)tb.cpus,
				(unsigned long long)tb.buffers);
	refs->buffer = tb.addr;
	refs->slot = tb.buffers + (uint64_t)cpu * ptr;
	if (cpu >= tb.cpus || read_word(cfg, refs->slot, ptr, &refs->cpu_buffer) ||
	    !refs->cpu_buffer) {
		et_error("the kernel has no ring for CPU %u", cpu);
		return 1;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool in_pages(const uint64_t *pages, size_t n, uint64_t page)
{
	return bsearch(&page, pages, n, sizeof(*pages), cmp_u64) != NULL;
}

static uint64_t end_of(struct ftrace_field f)
{
	return (uint64_t)f.offset + f.size;
}

static uint64_t max3(uint64_t a, uint64_t b, uint64_t c)
{
	return a > b ? (a > c ? a : c) : (b > c ? b : c);
}

/* What the fill writes must be the ring's own and nothing else, and what
 * readers find the ring through must not change under it: data pages
 * page-aligned and each its own, and none holding global_trace's fields,
 * the trace_buffer, the CPU's slot in its array, the CPU's struct, a
 * buffer_page, or the reader page's header, as a hostile guest could
 * arrange. 0, or -1 with an error. */
static int check_apart(const struct ftrace_fill_config *cfg, const struct ring_cpu_view *v,
		       const struct ring_refs *refs, uint32_t page_size, uint32_t cpu)
{
	const struct ftrace_layout *L = cfg->layout;
	uint64_t *pages = malloc(v->ring_pages * sizeof(*pages));
	uint64_t meta[6][2], reader_data = 0;
	size_t nr_meta = 0;
	bool reader_in_ring = false;
	int ret = 0;

	if (!pages)
		return et_error("out of memory");
	for (size_t i = 0; i < v->ring_pages; i++) {
		pages[i] = v->ring[i].data;
		if (pages[i] % page_size) {
			ret = et_error("CPU %u's ring: data page 0x%llx is not page-aligned", cpu,
				       (unsigned long long)pages[i]);
			goto out;
		}
	}
	qsort(pages, v->ring_pages, sizeof(*pages), cmp_u64);
	for (size_t i = 1; i < v->ring_pages; i++)
		if (pages[i] == pages[i - 1]) {
			ret = et_error("CPU %u's ring: two buffer pages share data page 0x%llx", cpu,
				       (unsigned long long)pages[i]);
			goto out;
		}
	meta[nr_meta][0] = cfg->global_trace;
	meta[nr_meta++][1] = end_of(L->trace_array.buffer) > end_of(L->fill.time_start)
				     ? end_of(L->trace_array.buffer)
				     : end_of(L->fill.time_start);
	meta[nr_meta][0] = refs->buffer;
	meta[nr_meta++][1] = max3(end_of(L->trace_buffer.cpus), end_of(L->trace_buffer.buffers),
				  end_of(L->fill.buffer_flags));
	meta[nr_meta][0] = refs->slot;
	meta[nr_meta++][1] = L->trace_buffer.buffers.size;
	meta[nr_meta][0] = refs->cpu_buffer;
	meta[nr_meta++][1] = L->cpu_buffer.size;
	/* The reader page, when it is not one of the ring's. */
	for (size_t i = 0; i < v->ring_pages; i++)
		reader_in_ring |= v->ring[i].bpage == v->reader_page;
	if (reader_in_ring) {
		/* Never so in the kernel: a reader swaps its page out of the ring. */
		ret = et_error("CPU %u's reader page 0x%llx is one of the ring's pages", cpu,
			       (unsigned long long)v->reader_page);
		goto out;
	}
	if (v->reader_page &&
	    read_word(cfg, v->reader_page + L->buffer_page.page.offset, L->buffer_page.page.size,
		      &reader_data) == 0) {
		meta[nr_meta][0] = v->reader_page;
		meta[nr_meta++][1] = L->buffer_page.size;
		meta[nr_meta][0] = reader_data;
		meta[nr_meta++][1] = L->data_page.data.offset;
	}
	for (size_t i = 0; i < nr_meta + v->ring_pages; i++) {
		uint64_t at = i < nr_meta ? meta[i][0] : v->ring[i - nr_meta].bpage;
		uint64_t len = i < nr_meta ? meta[i][1] : L->buffer_page.size;
		uint64_t end = at + (len ? len : 1) - 1;

		if (in_pages(pages, v->ring_pages, at - at % page_size) ||
		    in_pages(pages, v->ring_pages, end - end % page_size)) {
			ret = et_error("CPU %u's ring: the structure at 0x%llx lies in a data page", cpu,
				       (unsigned long long)at);
			goto out;
		}
	}
out:
	free(pages);
	return ret;
}

/* The state tracer_init() leaves: a closed ring of nr_pages empty pages,
 * head, tail and commit on the same page, every counter 0, an empty
 * reader page. */
static int check_empty(const struct ring_cpu_view *v, uint32_t cpu)
{
	if (!v->counters_read || v->fault)
		return et_error("CPU %u's ring: %s", cpu, v->fault_msg);
	if (!v->ring_closed || v->ring_pages != v->nr_pages || v->nr_pages < 2)
		return et_error("CPU %u's ring has %zu pages, nr_pages says %llu", cpu, v->ring_pages,
				(unsigned long long)v->nr_pages);
	if (v->committing)
		return et_error("CPU %u's ring is in the middle of a commit", cpu);
	if (v->entries || v->overrun || v->commit_overrun || v->dropped_events || v->read)
		return et_error("CPU %u's ring already holds %llu events", cpu,
				(unsigned long long)v->entries);
	if (v->head != v->ring[0].bpage || v->tail_page != v->head_page ||
	    v->commit_page != v->head_page)
		return et_error("CPU %u's ring is not as a reset leaves it (head, tail and commit "
				"pages differ)",
				cpu);
	for (size_t i = 0; i < v->ring_pages; i++)
		if (v->ring[i].commit_raw)
			return et_error("CPU %u's ring has data on page 0x%llx", cpu,
					(unsigned long long)v->ring[i].bpage);
	for (size_t i = 0; i < v->seq_len; i++)
		if (v->seq[i].where == RING_SEQ_READER)
			return et_error("CPU %u's reader page holds events", cpu);
	return 0;
}

/* The pages built, into the ring's first pages (the head stays where the
 * reset put it), then the CPU's counters. */
static int store(const struct fill *f, const struct ring_cpu_view *v, uint64_t cpu_buffer)
{
	const struct ftrace_fill_config *cfg = f->cfg;
	const struct ftrace_layout *L = f->L;
	uint32_t page_size = L->data_page.data.offset + f->cap;
	uint8_t *scratch = malloc(page_size);

	/* Every page written must be readable whole, as readers will read it
	 * (the walk read only its header): checked before the first write. */
	if (!scratch)
		return et_error("out of memory");
	for (uint64_t i = 0; i < f->count; i++)
		if (cfg->read(cfg->ctx, v->ring[i].data, scratch, page_size)) {
			free(scratch);
			return et_error("the data page at 0x%llx is not readable whole",
					(unsigned long long)v->ring[i].data);
		}
	free(scratch);

	for (uint64_t i = 0; i < f->count; i++) {
		const struct page_image *p = &f->pages[(f->first + i) % f->nr_pages];
		const struct ring_page_ref *r = &v->ring[i];
		uint32_t bytes = p->write + (p->real_end && p->write == p->real_end ? 4 : 0);
		uint64_t moved = p->moved_onto ? RB_WRITE_INTCNT : 0;

		if (cfg->write(cfg->ctx, r->data + L->data_page.data.offset, p->data, bytes))
			return et_error("ftrace fill: cannot write the data page at 0x%llx",
					(unsigned long long)r->data);
		if (write_field(cfg, r->data, L->data_page.time_stamp, p->stamp) ||
		    write_field(cfg, r->data, L->data_page.commit, p->write) ||
		    write_field(cfg, r->bpage, L->fill.write, moved | p->write) ||
		    write_field(cfg, r->bpage, L->buffer_page.entries, moved | p->entries) ||
		    write_field(cfg, r->bpage, L->buffer_page.real_end, p->real_end) ||
		    write_field(cfg, r->bpage, L->buffer_page.read, 0))
			return -1;
	}
	/* The pages after them keep no old time stamp: a page with commit 0
	 * and a time stamp before the head's looks to a reader like one a
	 * consuming reader recycled (ring_walk.h). The kernel writes the
	 * stamp when it moves onto a page. */
	for (size_t i = f->count; i < v->ring_pages; i++)
		if (v->ring[i].stamp && write_field(cfg, v->ring[i].data, L->data_page.time_stamp, 0))
			return -1;
	if (write_field(cfg, cpu_buffer, L->cpu_buffer.tail_page, v->ring[f->count - 1].bpage) ||
	    write_field(cfg, cpu_buffer, L->cpu_buffer.commit_page, v->ring[f->count - 1].bpage) ||
	    write_field(cfg, cpu_buffer, L->cpu_buffer.entries, f->entries) ||
	    write_field(cfg, cpu_buffer, L->cpu_buffer.overrun, f->overrun) ||
	    write_field(cfg, cpu_buffer, L->fill.entries_bytes, f->entries_bytes) ||
	    write_field(cfg, cpu_buffer, L->fill.pages_touched, f->total_pages - 1) ||
	    write_field(cfg, cpu_buffer, L->fill.pages_lost, f->pages_lost) ||
	    write_field(cfg, cpu_buffer, L->fill.write_stamp, f->last_ts) ||
	    write_field(cfg, cpu_buffer, L->fill.before_stamp, f->last_ts))
		return -1;
	return 0;
}

static int check_events(const struct ftrace_layout *L, const struct ftrace_fill_event *ev,
			size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t size = payload_size(L, ev[i].kind);

		if (size < L->entry.size || size > RB_MAX_SMALL_DATA)
			return et_error("a %u-byte ftrace entry is not what the fill writes", size);
		if (i && ev[i].ts < ev[i - 1].ts)
			return et_error("the events are not in time order (event %zu)", i);
	}
	return 0;
}

static void free_fill(struct fill *f)
{
	for (uint64_t i = 0; f->pages && i < f->nr_pages; i++)
		free(f->pages[i].data);
	free(f->pages);
}

int ftrace_ring_fill(const struct ftrace_fill_config *cfg, uint32_t cpu,
		     const struct ftrace_fill_event *ev, size_t n, struct ftrace_fill_result *res)
{
	const struct ftrace_layout *L = cfg->layout;
	uint32_t page_size = cfg->page_size ? cfg->page_size : FTRACE_READER_PAGE_SIZE;
	struct ring_page_format fmt;
	struct ring_cpu_view v = { 0 };
	struct fill f = { .cfg = cfg, .L = L };
	struct ring_refs refs;
	int ret;

	memset(res, 0, sizeof(*res));
	if (L->fill_missing[0])
		return et_error("%s", L->fill_missing);
	ring_page_format_from_layout(&fmt, L, page_size);
	f.cap = ring_page_capacity(&fmt);
	if (f.cap < 64)
		return et_error("a %u-byte page holds no events", page_size);
	if (check_events(L, ev, n))
		return -1;
	ret = find_cpu_buffer(cfg, cpu, &refs);
	if (ret)
		return ret;
	ret = -1;
	if (ring_walk_cpu(&v, L, &fmt, cfg->read, cfg->ctx, refs.cpu_buffer,
			  cfg->max_pages ? cfg->max_pages : FTRACE_READER_MAX_PAGES))
		goto out;
	if (check_empty(&v, cpu) || check_apart(cfg, &v, &refs, page_size, cpu))
		goto out;
	res->nr_pages = v.nr_pages;
	if (!n) {
		ret = 0;
		goto out;
	}
	/* Never more pages than events: a huge ring costs no memory here. */
	f.nr_pages = v.nr_pages < n ? v.nr_pages : n;
	f.pages = calloc(f.nr_pages, sizeof(*f.pages));
	if (!f.pages) {
		et_error("out of memory");
		goto out;
	}
	for (uint64_t i = 0; i < f.nr_pages; i++)
		if (!(f.pages[i].data = malloc(f.cap))) {
			et_error("out of memory");
			goto out;
		}
	for (size_t i = 0; i < n; i++)
		append(&f, &ev[i]);
	if (store(&f, &v, refs.cpu_buffer))
		goto out;
	res->written = f.entries - f.overrun;
	res->overrun = f.overrun;
	res->pages = f.count;
	res->first_ts = f.pages[f.first].stamp;
	ret = 0;
out:
	free_fill(&f);
	ring_cpu_view_free(&v);
	return ret;
}

int ftrace_fill_time_start(const struct ftrace_fill_config *cfg, uint64_t ts)
{
	const struct ftrace_layout *L = cfg->layout;
	uint64_t start;

	if (L->fill_missing[0])
		return et_error("%s", L->fill_missing);
	if (read_word(cfg, cfg->global_trace + L->fill.time_start.offset, L->fill.time_start.size,
		      &start))
		return et_error("cannot read global_trace at 0x%llx",
				(unsigned long long)cfg->global_trace);
	return start > ts ? write_field(cfg, cfg->global_trace, L->fill.time_start, ts) : 0;
}
