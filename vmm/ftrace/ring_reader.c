/* SPDX-License-Identifier: MIT */
#include "vmm/ftrace/ring_reader.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/ftrace/ring_page.h"
#include "vmm/ftrace/ring_walk.h"
#include "vmm/util/error.h"

/* Where the last event handed over for one CPU lies. */
struct cursor {
	bool valid;
	uint64_t data, stamp; /* its data page and that page's time stamp */
	uint32_t next;	      /* offset just past it */
	bool page_done;	      /* the page was damaged: resume after it */
};

struct cpu_state {
	bool seen;
	struct cursor cur;
	bool have_ts;
	uint64_t last_ts;
	/* Accounting since the kernel last emptied the buffer. */
	uint64_t handed;	   /* events handed over */
	uint64_t lost_reported;	   /* entries - handed, as reported */
	uint64_t last_entries, last_overrun, last_not_written;
	bool noted;		   /* the ring-length remark was made */
	struct ftrace_cpu_stats stats;
};

struct ftrace_reader {
	struct ftrace_reader_config cfg;
	struct ftrace_layout layout;
	struct ring_page_format fmt;
	struct guest_strings strings;
	struct ring_cpu_view view;
	struct cpu_state *cpus;
	uint32_t nr_cpus;
	uint8_t *page;
	char text[FTRACE_READER_TEXT_MAX];
	struct ftrace_reader_stats stats;
};

struct ftrace_reader *ftrace_reader_new(const struct ftrace_reader_config *cfg)
{
	struct ftrace_reader *r;

	if (!cfg || !cfg->layout || !cfg->read) {
		et_error("ftrace reader: no layout or no read callback");
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		et_error("out of memory");
		return NULL;
	}
	r->cfg = *cfg;
	r->layout = *cfg->layout;
	r->cfg.layout = &r->layout;
	if (!r->cfg.max_cpus)
		r->cfg.max_cpus = FTRACE_READER_MAX_CPUS;
	if (!r->cfg.max_pages)
		r->cfg.max_pages = FTRACE_READER_MAX_PAGES;
	if (!r->cfg.page_size)
		r->cfg.page_size = FTRACE_READER_PAGE_SIZE;
	ring_page_format_from_layout(&r->fmt, &r->layout, r->cfg.page_size);
	if (r->fmt.data_offset >= r->cfg.page_size || r->cfg.page_size > (1u << 24)) {
		et_error("ftrace reader: a %u-byte page cannot hold a %u-byte header",
			 r->cfg.page_size, r->fmt.data_offset);
		free(r);
		return NULL;
	}
	r->page = malloc(r->cfg.page_size);
	if (!r->page) {
		free(r);
		et_error("out of memory");
		return NULL;
	}
	guest_strings_init(&r->strings, cfg->read, cfg->read_ctx);
	return r;
}

void ftrace_reader_free(struct ftrace_reader *r)
{
	if (!r)
		return;
	guest_strings_free(&r->strings);
	ring_cpu_view_free(&r->view);
	free(r->cpus);
	free(r->page);
	free(r);
}

const struct ftrace_reader_stats *ftrace_reader_get_stats(const struct ftrace_reader *r)
{
	return &r->stats;
}

const struct ftrace_cpu_stats *ftrace_reader_get_cpu_stats(const struct ftrace_reader *r,
						       uint32_t cpu)
{
	return cpu < r->nr_cpus && r->cpus[cpu].seen ? &r->cpus[cpu].stats : NULL;
}

static void warn(struct ftrace_reader *r, const struct ftrace_sink *sink, int cpu,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void warn(struct ftrace_reader *r, const struct ftrace_sink *sink, int cpu,
		 const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!r->stats.warnings++) {
		if (cpu < 0)
			snprintf(r->stats.first_warning, sizeof(r->stats.first_warning),
				 "ftrace: %s", msg);
		else
			snprintf(r->stats.first_warning, sizeof(r->stats.first_warning),
				 "ftrace cpu %d: %s", cpu, msg);
	}
	if (cpu >= 0 && (uint32_t)cpu < r->nr_cpus) {
		struct ftrace_cpu_stats *s = &r->cpus[cpu].stats;

		if (!s->warnings++)
			snprintf(s->first_warning, sizeof(s->first_warning), "%s", msg);
	}
	if (sink && sink->warning)
		sink->warning(sink->ctx, cpu, msg);
}

/* ---- one page -------------------------------------------------------- */

struct page_ctx {
	struct ftrace_reader *r;
	const struct ftrace_sink *sink;
	struct cpu_state *st;
	uint32_t cpu;
	uint64_t data, stamp;
	uint64_t first_ts;
	bool any;
	bool backwards, sink_failed;
	uint64_t bad_ts;
};

static int on_event(void *vctx, const struct ring_page_event *pe)
{
	struct page_ctx *c = vctx;
	struct ftrace_reader *r = c->r;
	struct cpu_state *st = c->st;
	struct ftrace_event ev;

	if (st->have_ts && pe->ts < st->last_ts) {
		c->backwards = true;
		c->bad_ts = pe->ts;
		return 1;
	}
	ftrace_event_decode(&r->layout, pe->data, pe->len, &ev);
	ev.ts = pe->ts;
	ev.cpu = c->cpu;
	ftrace_event_render_text(&ev, &r->layout, &r->strings, r->cfg.symbol, r->cfg.symbol_ctx,
				 r->text, sizeof(r->text));
	if (c->sink->event(c->sink->ctx, &ev)) {
		c->sink_failed = true;
		return 1;
	}
	st->cur = (struct cursor){ true, c->data, c->stamp, pe->next, false };
	st->have_ts = true;
	st->last_ts = pe->ts;
	st->handed++;
	st->stats.events++;
	r->stats.events++;
	if (!c->any) {
		c->any = true;
		c->first_ts = pe->ts;
	}
	return 0;
}

/* The byte count a sequence page holds. */
static uint32_t page_bound(const struct ftrace_reader *r, const struct ring_seq_page *p)
{
	uint32_t commit = (uint32_t)(p->ref.commit_raw &
				     ~(RING_PAGE_MISSED_EVENTS | RING_PAGE_MISSED_STORED));

	return p->bound == RING_PAGE_BOUND_COMMIT ? commit : ring_page_capacity(&r->fmt);
}

/* Where to start in the sequence: the cursor's page (and offset in it),
 * else the first page not older than the cursor's. */
static size_t start_of(const struct ftrace_reader *r, const struct cpu_state *st,
		       uint32_t *from, bool *skip_first)
{
	const struct ring_cpu_view *v = &r->view;

	*from = 0;
	*skip_first = false;
	if (!st->cur.valid)
		return 0;
	for (size_t i = 0; i < v->seq_len; i++) {
		const struct ring_seq_page *p = &v->seq[i];

		if (p->ref.data != st->cur.data || p->ref.stamp != st->cur.stamp ||
		    page_bound(r, p) < st->cur.next)
			continue;
		*from = st->cur.next;
		*skip_first = st->cur.page_done;
		return i;
	}
	/* Not there: overwritten since, or emptied. Everything newer is new. */
	for (size_t i = 0; i < v->seq_len; i++)
		if (v->seq[i].ref.stamp >= st->cur.stamp)
			return i;
	return v->seq_len;
}

/* Decodes the sequence from the cursor on; 0, or -1 if the sink stopped. */
static int read_pages(struct ftrace_reader *r, const struct ftrace_sink *sink, uint32_t cpu,
		      struct page_ctx *c, bool *faulted)
{
	struct cpu_state *st = &r->cpus[cpu];
	const struct ring_cpu_view *v = &r->view;
	uint32_t from;
	bool skip_first;
	size_t i = start_of(r, st, &from, &skip_first);

	for (; i < v->seq_len; i++, from = 0, skip_first = false) {
		const struct ring_seq_page *p = &v->seq[i];
		struct ring_page_info info;

		if (skip_first)
			continue;
		if (r->cfg.read(r->cfg.read_ctx, p->ref.data, r->page, r->cfg.page_size)) {
			warn(r, sink, (int)cpu, "data page 0x%llx is not readable",
			     (unsigned long long)p->ref.data);
			*faulted = true;
			return 0;
		}
		/* The page's identity for the cursor: as the walk saw it, which is
		 * what the next walk compares with. */
		c->data = p->ref.data;
		c->stamp = p->ref.stamp;
		ring_page_decode(r->page, r->cfg.page_size, &r->fmt, p->bound, from, on_event, c,
				 &info);
		if (info.missed_events)
			st->stats.missed_flag_pages++;
		if (c->sink_failed)
			return et_error("ftrace: the event sink stopped the read");
		if (info.status == RING_PAGE_OK)
			continue;
		if (c->backwards)
			warn(r, sink, (int)cpu,
			     "time runs backwards in page 0x%llx: %llu after %llu",
			     (unsigned long long)p->ref.data, (unsigned long long)c->bad_ts,
			     (unsigned long long)st->last_ts);
		else
			warn(r, sink, (int)cpu, "page 0x%llx: %s", (unsigned long long)p->ref.data,
			     info.message);
		/* Resume after this page next time, not at the same fault. */
		st->cur = (struct cursor){ true, p->ref.data, p->ref.stamp, 0, true };
		*faulted = true;
		return 0;
	}
	return 0;
}

/* ---- accounting ------------------------------------------------------- */

static void account(struct ftrace_reader *r, const struct ftrace_sink *sink, uint32_t cpu,
		    const struct page_ctx *c, uint64_t prev_ts, bool count_lost)
{
	struct cpu_state *st = &r->cpus[cpu];
	const struct ring_cpu_view *v = &r->view;
	uint64_t not_written = v->dropped_events + v->commit_overrun;
	struct ftrace_drops d = { cpu, 0, 0, prev_ts, c->any ? c->first_ts : 0 };

	if (count_lost) {
		uint64_t lost = v->entries > st->handed ? v->entries - st->handed : 0;

		if (lost > st->lost_reported) {
			d.overwritten = lost - st->lost_reported;
			st->lost_reported = lost;
		}
	}
	if (not_written > st->last_not_written) {
		d.not_written = not_written - st->last_not_written;
		st->last_not_written = not_written;
	}
	st->stats.overwritten += d.overwritten;
	st->stats.not_written += d.not_written;
	r->stats.overwritten += d.overwritten;
	r->stats.not_written += d.not_written;
	if ((d.overwritten || d.not_written) && sink->drops)
		sink->drops(sink->ctx, &d);
}

/* The kernel emptied the buffer (tracing reset, clock change): its
 * counters start again, and the time base may have changed. */
static bool was_reset(const struct cpu_state *st, const struct ring_cpu_view *v)
{
	return st->seen && (v->entries < st->last_entries || v->overrun < st->last_overrun ||
			    v->dropped_events + v->commit_overrun < st->last_not_written);
}

static int read_cpu(struct ftrace_reader *r, const struct ftrace_sink *sink, uint32_t cpu,
		    uint64_t addr, bool final)
{
	struct cpu_state *st = &r->cpus[cpu];
	struct ring_cpu_view *v = &r->view;
	struct page_ctx c = { .r = r, .sink = sink, .st = st, .cpu = cpu };
	uint64_t prev_ts = st->have_ts ? st->last_ts : 0;
	bool faulted = false;

	if (ring_walk_cpu(v, &r->layout, &r->fmt, r->cfg.read, r->cfg.read_ctx, addr,
			  r->cfg.max_pages))
		return -1;
	if (!v->counters_read) {
		warn(r, sink, (int)cpu, "%s", v->fault_msg);
		return 0;
	}
	if (was_reset(st, v)) {
		st->stats.resets++;
		st->cur.valid = st->have_ts = false;
		st->handed = st->lost_reported = st->last_not_written = 0;
		prev_ts = 0;
	}
	st->seen = true;
	st->last_entries = v->entries;
	st->last_overrun = v->overrun;
	st->stats.pages = v->ring_pages;
	st->stats.kernel_entries = v->entries;
	st->stats.kernel_overrun = v->overrun;
	st->stats.kernel_read = v->read;

	if (read_pages(r, sink, cpu, &c, &faulted))
		return -1;
	if (v->note[0] && !st->noted) {
		st->noted = true;
		warn(r, sink, (int)cpu, "%s", v->note);
	}
	if (v->fault) {
		warn(r, sink, (int)cpu, "%s", v->fault_msg);
		faulted = true;
	}
	/* Lost events are counted only from a whole, quiet read: a fault may
	 * hide events that a later read still finds, and so may a commit in
	 * progress; the final read counts what is missing whatever the state. */
	account(r, sink, cpu, &c, prev_ts, final || (!faulted && v->committing == 0));
	return 0;
}

/* ---- the whole buffer ------------------------------------------------- */

static int grow_cpus(struct ftrace_reader *r, uint32_t n)
{
	struct cpu_state *cpus;

	if (n <= r->nr_cpus)
		return 0;
	cpus = realloc(r->cpus, n * sizeof(*cpus));
	if (!cpus)
		return et_error("out of memory");
	memset(cpus + r->nr_cpus, 0, (n - r->nr_cpus) * sizeof(*cpus));
	r->cpus = cpus;
	r->nr_cpus = n;
	return 0;
}

int ftrace_reader_read(struct ftrace_reader *r, const struct ftrace_sink *sink, bool final)
{
	const struct ftrace_layout *L = &r->layout;
	struct ring_trace_buffer tb;
	uint32_t ptr = L->trace_buffer.buffers.size, ncpu;
	int64_t cpus;
	uint64_t buffer, buffers;
	uint8_t *array;
	int ret;

	r->stats.reads++;
	if (!sink || !sink->event)
		return et_error("ftrace: no event sink");
	ret = ring_trace_buffer_read(&tb, L, r->cfg.read, r->cfg.read_ctx, r->cfg.global_trace);
	buffer = tb.addr;
	cpus = tb.cpus;
	buffers = tb.buffers;
	if (ret && !buffer)
		return -1; /* global_trace itself is unreadable */
	r->stats.buffer_allocated = buffer != 0;
	if (ret)
		return -1;
	if (!buffer)
		return 0; /* tracing not set up yet: nothing to read */
	if (cpus <= 0 || !buffers) {
		warn(r, sink, -1, "trace_buffer 0x%llx has %lld CPUs and buffers 0x%llx",
		     (unsigned long long)buffer, (long long)cpus, (unsigned long long)buffers);
		return 0;
	}
	if (cpus > r->cfg.max_cpus) {
		warn(r, sink, -1, "trace_buffer claims %lld CPUs; reading the first %u",
		     (long long)cpus, r->cfg.max_cpus);
		cpus = r->cfg.max_cpus;
	}
	ncpu = (uint32_t)cpus;
	r->stats.cpus = ncpu;
	if (grow_cpus(r, ncpu))
		return -1;
	array = malloc((size_t)ncpu * ptr);
	if (!array)
		return et_error("out of memory");
	if (r->cfg.read(r->cfg.read_ctx, buffers, array, (size_t)ncpu * ptr)) {
		free(array);
		return et_error("ftrace: cannot read the %u per-CPU buffer pointers at 0x%llx", ncpu,
				(unsigned long long)buffers);
	}
	for (uint32_t cpu = 0; cpu < ncpu; cpu++) {
		uint64_t addr = 0;

		memcpy(&addr, array + (size_t)cpu * ptr, ptr);
		if (!addr)
			continue; /* a CPU that never came up */
		if (read_cpu(r, sink, cpu, addr, final)) {
			free(array);
			return -1;
		}
	}
	free(array);
	return 0;
}
