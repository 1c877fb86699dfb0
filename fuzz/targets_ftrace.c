/* SPDX-License-Identifier: MIT */
/*
 * The fuzz targets of the kernel ring-buffer reader and fill (vmm/ftrace/),
 * beside fuzz/targets.c and registered there: one page and its events,
 * whole rings in guest memory, and the fill writing into them. Both use Linux 6.1's x86-64 layout as the
 * committed BTF fixture gives it (fuzz_ftrace_layout(); the regression
 * test checks the two agree), so the fuzzer spends its time on the
 * decoders, not on BTF.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/targets.h"
#include "vmm/ftrace/bprint.h"
#include "vmm/ftrace/entries.h"
#include "vmm/ftrace/guest_strings.h"
#include "vmm/ftrace/ring_fill.h"
#include "vmm/ftrace/ring_page.h"
#include "vmm/ftrace/ring_reader.h"
#include "vmm/ftrace/ring_walk.h"

#define PAGE 4096u
/* Guest memory of the ring target: the input after its header. */
#define RING_MAX_PAGES 64
#define RING_MAX_CPUS 8

static struct ftrace_field fld(uint32_t offset, uint32_t size)
{
	return (struct ftrace_field){ offset, size };
}

void fuzz_ftrace_layout(struct ftrace_layout *L)
{
	memset(L, 0, sizeof(*L));
	L->trace_array.buffer = fld(32, 8);
	L->trace_buffer.cpus = fld(4, 4);
	L->trace_buffer.buffers = fld(64, 8);
	L->cpu_buffer.size = 480;
	L->cpu_buffer.cpu = fld(0, 4);
	L->cpu_buffer.nr_pages = fld(40, 8);
	L->cpu_buffer.pages = fld(56, 8);
	L->cpu_buffer.head_page = fld(64, 8);
	L->cpu_buffer.tail_page = fld(72, 8);
	L->cpu_buffer.commit_page = fld(80, 8);
	L->cpu_buffer.reader_page = fld(88, 8);
	L->cpu_buffer.entries = fld(128, 8);
	L->cpu_buffer.overrun = fld(136, 8);
	L->cpu_buffer.commit_overrun = fld(144, 8);
	L->cpu_buffer.dropped_events = fld(152, 8);
	L->cpu_buffer.committing = fld(160, 8);
	L->cpu_buffer.read = fld(216, 8);
	L->buffer_page.size = 56;
	L->buffer_page.list = fld(0, 16);
	L->buffer_page.read = fld(24, 4);
	L->buffer_page.entries = fld(32, 8);
	L->buffer_page.real_end = fld(40, 8);
	L->buffer_page.page = fld(48, 8);
	L->data_page.time_stamp = fld(0, 8);
	L->data_page.commit = fld(8, 8);
	L->data_page.data = fld(16, 0);
	L->list_head.next = fld(0, 8);
	L->list_head.prev = fld(8, 8);
	L->type.fn = 1;
	L->type.print = 5;
	L->type.bprint = 6;
	L->type.graph_ret = 10;
	L->type.graph_ent = 11;
	L->type.bputs = 14;
	L->entry.size = 8;
	L->entry.type = fld(0, 2);
	L->entry.flags = fld(2, 1);
	L->entry.preempt_count = fld(3, 1);
	L->entry.pid = fld(4, 4);
	L->fn.ip = fld(8, 8);
	L->fn.parent_ip = fld(16, 8);
	L->graph_ent.func = fld(8, 8);
	L->graph_ent.depth = fld(16, 4);
	L->graph_ret.func = fld(8, 8);
	L->graph_ret.depth = fld(16, 4);
	L->graph_ret.overrun = fld(20, 4);
	L->graph_ret.calltime = fld(24, 8);
	L->graph_ret.rettime = fld(32, 8);
	L->print.ip = fld(8, 8);
	L->print.buf = fld(16, 0);
	L->bprint.ip = fld(8, 8);
	L->bprint.fmt = fld(16, 8);
	L->bprint.buf = fld(24, 0);
	L->bputs.ip = fld(8, 8);
	L->bputs.str = fld(16, 8);
	L->fill.time_start = fld(48, 8);
	L->fill.buffer_flags = fld(0, 4);
	L->fill.write = fld(16, 8);
	L->fill.entries_bytes = fld(120, 8);
	L->fill.pages_touched = fld(176, 8);
	L->fill.pages_lost = fld(184, 8);
	L->fill.write_stamp = fld(232, 8);
	L->fill.before_stamp = fld(240, 8);
	L->fill.fn_size = 24;
	L->fill.graph_ent_size = 20;
	L->fill.graph_ret_size = 40;
	L->fill.irqs_nosupport = 2;
}

/* Guest memory: [base, base + len) of input bytes; anything else fails. */
struct fuzz_mem {
	uint64_t base;
	const uint8_t *bytes;
	size_t len;
};

/* [va, va + len) lies in the memory of len bytes at base. */
static bool in_mem(uint64_t base, size_t mem_len, uint64_t va, size_t len)
{
	return va >= base && va - base <= mem_len && len <= mem_len - (va - base);
}

static int mem_read(void *ctx, uint64_t va, void *buf, size_t len)
{
	const struct fuzz_mem *m = ctx;

	if (!in_mem(m->base, m->len, va, len))
		return -1;
	memcpy(buf, m->bytes + (va - m->base), len);
	return 0;
}

/* A symbol callback that knows one function, to reach both paths. */
static int fuzz_symbol(void *ctx, uint64_t addr, bool with_offset, char *buf, size_t size)
{
	(void)ctx;
	if ((addr & 0xff) != 0x10)
		return -1;
	snprintf(buf, size, with_offset ? "fuzz_fn+0x%llx/0x100" : "fuzz_fn",
		 (unsigned long long)(addr & 0xff));
	return 0;
}

struct page_ctx {
	const struct ftrace_layout *L;
	struct guest_strings *gs;
	char text[FTRACE_READER_TEXT_MAX];
	size_t sum; /* keeps the decoded values live */
};

static int on_page_event(void *vctx, const struct ring_page_event *pe)
{
	struct page_ctx *c = vctx;
	struct ftrace_event ev;

	ftrace_event_decode(c->L, pe->data, pe->len, &ev);
	ftrace_event_render_text(&ev, c->L, c->gs, fuzz_symbol, NULL, c->text, sizeof(c->text));
	c->sum += ev.kind + ev.text_len + (size_t)ev.ip + (size_t)pe->ts;
	if (ev.text && ev.text[ev.text_len] != '\0')
		abort(); /* rendered text must be terminated */
	return 0;
}

/*
 * Input: u8 mode, u16 emit_from, u16 bound, then one page (4096 bytes, cut
 * or zero-filled), then guest memory at 0x1000 for formats and strings.
 * The tail's first string is also rendered directly as a bprint format
 * with the bytes after it as arguments.
 */
int fuzz_ftrace_page(const uint8_t *data, size_t size)
{
	static uint8_t page[PAGE];
	struct input_view {
		const uint8_t *p;
		size_t n;
	} in = { data, size };
	struct ftrace_layout L;
	struct ring_page_format f;
	struct guest_strings gs;
	struct ring_page_info info;
	struct page_ctx c;
	struct fuzz_mem mem;
	uint8_t mode = 0;
	uint16_t emit_from = 0, bound16 = 0;
	uint32_t bound;
	size_t take;
	int ret;

	if (in.n >= 5) {
		mode = in.p[0];
		emit_from = (uint16_t)(in.p[1] | in.p[2] << 8);
		bound16 = (uint16_t)(in.p[3] | in.p[4] << 8);
		in.p += 5;
		in.n -= 5;
	}
	take = in.n < PAGE ? in.n : PAGE;
	memset(page, 0, sizeof(page));
	if (take) /* an empty input's pointer may be NULL */
		memcpy(page, in.p, take);
	in.p += take;
	in.n -= take;

	fuzz_ftrace_layout(&L);
	ring_page_format_from_layout(&f, &L, PAGE);
	mem = (struct fuzz_mem){ 0x1000, in.p, in.n };
	guest_strings_init(&gs, mem_read, &mem);
	c = (struct page_ctx){ .L = &L, .gs = &gs };
	bound = mode & 1 ? RING_PAGE_BOUND_COMMIT : mode & 2 ? ring_page_capacity(&f) : bound16;
	ret = ring_page_decode(page, sizeof(page), &f, bound, emit_from, on_page_event, &c, &info);
	if (info.end > ring_page_capacity(&f))
		abort(); /* the decoder never goes past the page */

	/* The tail as a format and its arguments. */
	{
		const uint8_t *nul = in.n ? memchr(in.p, '\0', in.n) : NULL;
		char out[512];
		struct ftrace_bprint_result res;

		if (nul) {
			size_t flen = (size_t)(nul - in.p);

			ftrace_bprint_render((const char *)in.p, nul + 1, in.n - flen - 1,
					     mode & 4 ? 4 : 8, fuzz_symbol, NULL, out,
					     mode & 8 ? 16 : sizeof(out), &res);
			if (strlen(out) != res.len)
				abort();
			c.sum += res.len;
		}
	}
	guest_strings_free(&gs);
	return ret == 0 && c.sum ? 0 : -1;
}

static int count_event(void *ctx, const struct ftrace_event *ev)
{
	size_t *n = ctx;

	*n += 1 + ev->text_len;
	return 0;
}

/*
 * Input: u64 base (global_trace's address), u8 mode, then guest memory
 * starting at base. Three reads, the last final, as a run does: whatever
 * the memory holds, the reader must neither crash nor loop.
 */
int fuzz_ftrace_ring(const uint8_t *data, size_t size)
{
	struct ftrace_layout L;
	struct ftrace_reader_config cfg = { 0 };
	struct ftrace_reader *r;
	struct fuzz_mem mem;
	size_t events = 0;
	struct ftrace_sink sink = { &events, count_event, NULL, NULL };
	uint64_t base = 0;
	uint8_t mode;
	int ret = 0;

	if (size < 9)
		return -1;
	for (int i = 0; i < 8; i++)
		base |= (uint64_t)data[i] << (8 * i);
	mode = data[8];
	mem = (struct fuzz_mem){ base, data + 9, size - 9 };
	fuzz_ftrace_layout(&L);
	cfg.layout = &L;
	cfg.global_trace = base;
	cfg.read = mem_read;
	cfg.read_ctx = &mem;
	cfg.symbol = fuzz_symbol;
	cfg.max_cpus = RING_MAX_CPUS;
	cfg.max_pages = RING_MAX_PAGES;
	r = ftrace_reader_new(&cfg);
	if (!r)
		return -1;
	for (int i = 0; i < 1 + (mode & 3); i++)
		ret |= ftrace_reader_read(r, &sink, i == (mode & 3));
	ftrace_reader_free(r);
	return ret ? -1 : 0;
}

/* Guest memory the fill may write: a copy of the input, and the ranges
 * that are the ring's own (its CPU struct, its buffer_pages, their data
 * pages), found before the fill by the reader's own walk. */
struct fill_mem {
	uint64_t base;
	uint8_t *bytes;
	size_t len;
	uint64_t allowed[2 * RING_MAX_PAGES + 1][2];
	size_t nr_allowed;
};

static int fill_read(void *ctx, uint64_t va, void *buf, size_t len)
{
	struct fill_mem *m = ctx;
	struct fuzz_mem view = { m->base, m->bytes, m->len };

	return mem_read(&view, va, buf, len);
}

static int fill_write(void *ctx, uint64_t va, const void *buf, size_t len)
{
	struct fill_mem *m = ctx;
	bool inside = false;

	if (!in_mem(m->base, m->len, va, len))
		return -1;
	for (size_t i = 0; i < m->nr_allowed && !inside; i++)
		inside = va >= m->allowed[i][0] && va + len <= m->allowed[i][1];
	if (!inside)
		abort(); /* the fill wrote outside the ring's own structures */
	memcpy(m->bytes + (va - m->base), buf, len);
	return 0;
}

/* The CPU 0 struct and its ring's pages as the reader's walk finds them. */
static void allow_ring(struct fill_mem *m, const struct ftrace_layout *L)
{
	struct ring_page_format f;
	struct ring_cpu_view v = { 0 };
	uint64_t buffer = 0, buffers = 0, cpu = 0;

	ring_page_format_from_layout(&f, L, PAGE);
	if (fill_read(m, m->base + L->trace_array.buffer.offset, &buffer, 8) ||
	    fill_read(m, buffer + L->trace_buffer.buffers.offset, &buffers, 8) ||
	    fill_read(m, buffers, &cpu, 8))
		return;
	m->allowed[m->nr_allowed][0] = cpu;
	m->allowed[m->nr_allowed++][1] = cpu + L->cpu_buffer.size;
	if (ring_walk_cpu(&v, L, &f, fill_read, m, cpu, RING_MAX_PAGES) == 0)
		for (size_t i = 0; i < v.ring_pages; i++) {
			m->allowed[m->nr_allowed][0] = v.ring[i].bpage;
			m->allowed[m->nr_allowed++][1] = v.ring[i].bpage + L->buffer_page.size;
			m->allowed[m->nr_allowed][0] = v.ring[i].data;
			m->allowed[m->nr_allowed++][1] = v.ring[i].data + PAGE;
		}
	ring_cpu_view_free(&v);
}

struct readback {
	size_t events;
	uint64_t last_ts;
};

static int count_readback(void *ctx, const struct ftrace_event *ev)
{
	struct readback *rb = ctx;

	if (ev->cpu == 0) { /* another CPU's ring may hold anything */
		rb->events++;
		rb->last_ts = ev->ts;
	}
	return 0;
}

/*
 * Input: u64 base (global_trace's address), u8 mode, then guest memory
 * starting at base, as for ftrace_ring. ftrace_ring_fill() writes
 * (mode & 0x7f) * 13 events (function events, or with mode's top bit
 * function_graph entries and returns too, some deltas past 27 bits) into
 * CPU 0's ring. Every write must land in the CPU's struct, a buffer_page
 * of its ring or that page's data page; after a fill that succeeded, a
 * reader must hand back exactly the events written, the newest last.
 */
int fuzz_ftrace_fill(const uint8_t *data, size_t size)
{
	static struct ftrace_fill_event ev[127 * 13];
	struct ftrace_layout L;
	struct ftrace_fill_config cfg = { 0 };
	struct ftrace_reader_config rcfg = { 0 };
	struct ftrace_fill_result res;
	struct fill_mem m = { 0 };
	struct readback rb = { 0 };
	struct ftrace_sink sink = { &rb, count_readback, NULL, NULL };
	struct ftrace_reader *r;
	size_t n;
	uint8_t mode;
	int ret;

	if (size < 9)
		return -1;
	for (int i = 0; i < 8; i++)
		m.base |= (uint64_t)data[i] << (8 * i);
	mode = data[8];
	m.len = size - 9;
	m.bytes = malloc(m.len ? m.len : 1);
	if (!m.bytes)
		return -1;
	if (m.len)
		memcpy(m.bytes, data + 9, m.len);
	fuzz_ftrace_layout(&L);
	allow_ring(&m, &L);

	n = (size_t)(mode & 0x7f) * 13;
	for (size_t i = 0; i < n; i++) {
		uint64_t prev = i ? ev[i - 1].ts : 1000;

		memset(&ev[i], 0, sizeof(ev[i]));
		ev[i].ts = prev + (i % 9 == 4 ? (1ull << 28) + i : 3 + i % 5);
		ev[i].ip = 0xffffffff81000000ull + 16 * i;
		ev[i].parent_ip = 0xffffffff81000008ull;
		ev[i].kind = !(mode & 0x80) ? FTRACE_FILL_FUNCTION
			     : i % 2	    ? FTRACE_FILL_GRAPH_RETURN
					    : FTRACE_FILL_GRAPH_ENTRY;
		ev[i].calltime = prev;
	}
	cfg.layout = &L;
	cfg.global_trace = m.base;
	cfg.read = fill_read;
	cfg.write = fill_write;
	cfg.ctx = &m;
	cfg.max_pages = RING_MAX_PAGES;
	ret = ftrace_ring_fill(&cfg, 0, ev, n, &res);
	if (ret == 0 && n) {
		rcfg.layout = &L;
		rcfg.global_trace = m.base;
		rcfg.read = fill_read;
		rcfg.read_ctx = &m;
		rcfg.max_cpus = RING_MAX_CPUS;
		rcfg.max_pages = RING_MAX_PAGES;
		r = ftrace_reader_new(&rcfg);
		if (!r || ftrace_reader_read(r, &sink, true))
			abort();
		if (res.written + res.overrun != n || rb.events != res.written ||
		    rb.last_ts != ev[n - 1].ts)
			abort(); /* the ring does not read back as filled */
		ftrace_reader_free(r);
	}
	free(m.bytes);
	return ret == 0 ? 0 : -1;
}
