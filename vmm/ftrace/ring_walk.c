/* SPDX-License-Identifier: MIT */
#include "vmm/ftrace/ring_walk.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/util/error.h"
#include "vmm/util/grow.h"

/* Larger structs than these are not the kernel's (ring_buffer_per_cpu is
 * 480 bytes in 6.1, buffer_page 56): refused before reading. */
#define MAX_CPU_STRUCT 65536u
#define MAX_PAGE_STRUCT 4096u

struct walk {
	struct ring_cpu_view *v;
	const struct ftrace_layout *L;
	const struct ring_page_format *f;
	ftrace_read_fn read;
	void *ctx;
};

static void set_fault(struct ring_cpu_view *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_fault(struct ring_cpu_view *v, const char *fmt, ...)
{
	va_list ap;

	if (v->fault)
		return; /* the first one says what went wrong */
	v->fault = true;
	va_start(ap, fmt);
	vsnprintf(v->fault_msg, sizeof(v->fault_msg), fmt, ap);
	va_end(ap);
}

static bool fits(struct ftrace_field f, size_t size)
{
	return f.size <= 8 && f.offset <= size && f.size <= size - f.offset;
}

static uint64_t field(const uint8_t *buf, size_t size, struct ftrace_field f)
{
	return fits(f, size) ? ftrace_read_field(buf, f) : 0;
}

/* 0, 1 with v->fault set, or -1 when out of memory. */
static int read_counters(struct walk *w, uint64_t addr)
{
	const struct ftrace_layout *L = w->L;
	struct ring_cpu_view *v = w->v;
	uint32_t size = L->cpu_buffer.size;
	uint8_t *buf;

	if (size == 0 || size > MAX_CPU_STRUCT) {
		set_fault(v, "ring_buffer_per_cpu of %u bytes is implausible", size);
		return 1;
	}
	buf = malloc(size);
	if (!buf)
		return et_error("out of memory");
	if (w->read(w->ctx, addr, buf, size)) {
		free(buf);
		set_fault(v, "ring_buffer_per_cpu at 0x%llx is not readable",
			  (unsigned long long)addr);
		return 1;
	}
	v->nr_pages = field(buf, size, L->cpu_buffer.nr_pages);
	v->entries = field(buf, size, L->cpu_buffer.entries);
	v->overrun = field(buf, size, L->cpu_buffer.overrun);
	v->commit_overrun = field(buf, size, L->cpu_buffer.commit_overrun);
	v->dropped_events = field(buf, size, L->cpu_buffer.dropped_events);
	v->committing = field(buf, size, L->cpu_buffer.committing);
	v->read = field(buf, size, L->cpu_buffer.read);
	v->head_page = field(buf, size, L->cpu_buffer.head_page);
	v->tail_page = field(buf, size, L->cpu_buffer.tail_page);
	v->commit_page = field(buf, size, L->cpu_buffer.commit_page);
	v->reader_page = field(buf, size, L->cpu_buffer.reader_page);
	v->counters_read = true;
	free(buf);
	return 0;
}

/* Reads one buffer_page and its data page's header into ref. */
static int read_ref(struct walk *w, uint64_t addr, struct ring_page_ref *ref)
{
	const struct ftrace_layout *L = w->L;
	uint8_t page[MAX_PAGE_STRUCT], hdr[MAX_PAGE_STRUCT];
	uint32_t size = L->buffer_page.size, hsize = w->f->data_offset;
	struct ftrace_field next = { L->buffer_page.list.offset + L->list_head.next.offset,
				     L->list_head.next.size };
	struct ftrace_field prev = { L->buffer_page.list.offset + L->list_head.prev.offset,
				     L->list_head.prev.size };
	uint64_t raw;

	memset(ref, 0, sizeof(*ref));
	ref->bpage = addr;
	if (size == 0 || size > MAX_PAGE_STRUCT || hsize > MAX_PAGE_STRUCT)
		return -1;
	if (w->read(w->ctx, addr, page, size))
		return -1;
	raw = field(page, size, next);
	ref->next = raw & ~(uint64_t)RB_FLAG_MASK;
	ref->next_flags = (unsigned)(raw & RB_FLAG_MASK);
	ref->prev = field(page, size, prev) & ~(uint64_t)RB_FLAG_MASK;
	ref->data = field(page, size, L->buffer_page.page);
	if (w->read(w->ctx, ref->data, hdr, hsize) ||
	    !ring_page_header(hdr, hsize, w->f, &ref->stamp, &ref->commit_raw))
		return -2;
	return 0;
}

/* A page the walk could not read: says which and where. */
static void ref_fault(struct ring_cpu_view *v, int why, uint64_t addr, const char *what)
{
	if (why == -2)
		set_fault(v, "the data page of %s 0x%llx is not readable", what,
			  (unsigned long long)addr);
	else
		set_fault(v, "%s 0x%llx is not readable (outside guest memory?)", what,
			  (unsigned long long)addr);
}

/* Open-addressing set of page addresses, for loops. */
static bool seen_insert(struct ring_cpu_view *v, uint64_t addr, bool *dup)
{
	size_t mask;

	*dup = false;
	if (v->seen_cap == 0 || (v->ring_pages + 1) * 2 > v->seen_cap) {
		size_t cap = v->seen_cap ? v->seen_cap * 2 : 64;
		uint64_t *n = calloc(cap, sizeof(*n));

		if (!n)
			return false;
		/* Rehash what the walk holds so far. */
		for (size_t i = 0; i < v->ring_pages; i++) {
			size_t h = (size_t)(v->ring[i].bpage * 0x9e3779b97f4a7c15ull >> 20) & (cap - 1);

			while (n[h])
				h = (h + 1) & (cap - 1);
			n[h] = v->ring[i].bpage;
		}
		free(v->seen);
		v->seen = n;
		v->seen_cap = cap;
	}
	mask = v->seen_cap - 1;
	for (size_t h = (size_t)(addr * 0x9e3779b97f4a7c15ull >> 20) & mask;; h = (h + 1) & mask) {
		if (v->seen[h] == addr) {
			*dup = true;
			return true;
		}
		if (!v->seen[h]) {
			v->seen[h] = addr;
			return true;
		}
	}
}

static bool seen_has(const struct ring_cpu_view *v, uint64_t addr)
{
	size_t mask = v->seen_cap - 1;

	if (!v->seen_cap)
		return false;
	for (size_t h = (size_t)(addr * 0x9e3779b97f4a7c15ull >> 20) & mask;; h = (h + 1) & mask) {
		if (v->seen[h] == addr)
			return true;
		if (!v->seen[h])
			return false;
	}
}

static int walk_ring(struct walk *w, uint64_t max_pages)
{
	struct ring_cpu_view *v = w->v;
	uint64_t start = v->head_page, cur = start;

	if (!start) {
		set_fault(v, "head_page is NULL");
		return 0;
	}
	for (;;) {
		struct ring_page_ref ref;
		bool dup;
		int why;

		if (v->ring_pages >= max_pages) {
			set_fault(v, "the ring does not close within %llu pages (nr_pages %llu)",
				  (unsigned long long)max_pages, (unsigned long long)v->nr_pages);
			return 0;
		}
		why = read_ref(w, cur, &ref);
		if (why) {
			ref_fault(v, why, cur, "buffer_page");
			return 0;
		}
		if (v->ring_pages > 0 && ref.prev != v->ring[v->ring_pages - 1].bpage) {
			set_fault(v, "cross-linked ring: page 0x%llx's prev is 0x%llx, not 0x%llx",
				  (unsigned long long)cur, (unsigned long long)ref.prev,
				  (unsigned long long)v->ring[v->ring_pages - 1].bpage);
			return 0;
		}
		if (v->ring_pages == v->ring_cap) {
			struct ring_page_ref *n = array_grow(v->ring, &v->ring_cap, sizeof(*n), 64);

			if (!n)
				return et_error("out of memory");
			v->ring = n;
		}
		if (!seen_insert(v, cur, &dup))
			return et_error("out of memory");
		v->ring[v->ring_pages++] = ref;
		if (ref.next == start) {
			if (v->ring[0].prev != cur) {
				set_fault(v, "cross-linked ring: head 0x%llx's prev is 0x%llx, not 0x%llx",
					  (unsigned long long)start,
					  (unsigned long long)v->ring[0].prev,
					  (unsigned long long)cur);
				return 0;
			}
			v->ring_closed = true;
			return 0;
		}
		if (seen_has(v, ref.next)) {
			set_fault(v, "loop in the ring: page 0x%llx links back to 0x%llx",
				  (unsigned long long)cur, (unsigned long long)ref.next);
			return 0;
		}
		cur = ref.next;
	}
}

static ptrdiff_t ring_index(const struct ring_cpu_view *v, uint64_t bpage)
{
	for (size_t i = 0; i < v->ring_pages; i++)
		if (v->ring[i].bpage == bpage)
			return (ptrdiff_t)i;
	return -1;
}

/* The real head: the page a HEAD-flagged pointer leads to; while the
 * writer moves it (UPDATE), the page after the one being taken. */
static ptrdiff_t find_head(struct ring_cpu_view *v)
{
	size_t n = v->ring_pages;

	for (unsigned flag = RB_PAGE_HEAD; flag <= RB_PAGE_UPDATE; flag++)
		for (size_t i = 0; i < n; i++) {
			size_t at = i + (flag == RB_PAGE_HEAD ? 1 : 2);

			if ((v->ring[i].next_flags & RB_FLAG_MASK) != flag)
				continue;
			if (at >= n && !v->ring_closed)
				return -1;
			return (ptrdiff_t)(at % n);
		}
	/* No flag at all (the kernel clears them while resetting): the field. */
	return ring_index(v, v->head_page);
}

static int push(struct ring_cpu_view *v, const struct ring_page_ref *ref,
		enum ring_seq_where where, uint32_t bound)
{
	if (v->seq_len == v->seq_cap) {
		struct ring_seq_page *n = array_grow(v->seq, &v->seq_cap, sizeof(*n), 64);

		if (!n)
			return et_error("out of memory");
		v->seq = n;
	}
	v->seq[v->seq_len++] = (struct ring_seq_page){ *ref, where, bound };
	return 0;
}

static uint32_t commit_of(const struct ring_page_ref *ref)
{
	return (uint32_t)(ref->commit_raw & ~(RING_PAGE_MISSED_EVENTS | RING_PAGE_MISSED_STORED));
}

/* Recycled pages just before the head, oldest first, into seq; each must
 * be older than the page after it and than `limit`. */
static int add_recycled(struct ring_cpu_view *v, size_t head, uint64_t limit, uint32_t bound)
{
	size_t n = v->ring_pages, count = 0, first = head;

	for (size_t k = 1; k < n; k++) {
		const struct ring_page_ref *r;
		size_t i;

		if (head < k && !v->ring_closed)
			break;
		i = (head + n - k) % n;
		r = &v->ring[i];
		if (r->bpage == v->tail_page || r->bpage == v->commit_page ||
		    r->bpage == v->reader_page || r->commit_raw != 0 || r->stamp == 0 ||
		    r->stamp >= limit)
			break;
		limit = r->stamp;
		first = i;
		count++;
	}
	for (size_t k = 0; k < count; k++)
		if (push(v, &v->ring[(first + k) % n], RING_SEQ_RECYCLED, bound))
			return -1;
	return 0;
}

static int build_sequence(struct walk *w)
{
	struct ring_cpu_view *v = w->v;
	struct ring_page_ref reader = { 0 };
	bool reader_live = false;
	ptrdiff_t head = find_head(v), commit;
	uint64_t limit = UINT64_MAX;
	size_t n = v->ring_pages;

	if (head >= 0)
		v->head = v->ring[head].bpage;
	if (v->reader_page && ring_index(v, v->reader_page) < 0) {
		int why = read_ref(w, v->reader_page, &reader);

		if (why) {
			ref_fault(v, why, v->reader_page, "reader page");
			return 0;
		}
		reader_live = v->commit_page == v->reader_page || commit_of(&reader) > 0;
	}
	if (reader_live && commit_of(&reader))
		limit = reader.stamp;
	else if (head >= 0 && commit_of(&v->ring[head]))
		limit = v->ring[head].stamp;
	if (head >= 0 && add_recycled(v, (size_t)head, limit, ring_page_capacity(w->f)))
		return -1;
	if (reader_live && push(v, &reader, RING_SEQ_READER, RING_PAGE_BOUND_COMMIT))
		return -1;
	if (v->commit_page == v->reader_page)
		return 0; /* the writer is on the reader page: the ring holds nothing newer */
	if (head < 0) {
		set_fault(v, "no head page in the ring (head_page 0x%llx)",
			  (unsigned long long)v->head_page);
		return 0;
	}
	commit = ring_index(v, v->commit_page);
	if (commit < 0 && v->ring_closed) {
		set_fault(v, "the commit page 0x%llx is not in the ring",
			  (unsigned long long)v->commit_page);
		return 0;
	}
	/* head, head+1, ... commit; a partial walk (fault set) stops at its end. */
	for (size_t i = (size_t)head, k = 0; k < n; k++, i = (i + 1) % n) {
		if (push(v, &v->ring[i], RING_SEQ_RING, RING_PAGE_BOUND_COMMIT))
			return -1;
		if ((ptrdiff_t)i == commit)
			break;
		if (i + 1 == n && !v->ring_closed)
			break;
	}
	return 0;
}

/* A pointer- or field-sized value at vaddr. */
static int read_word(ftrace_read_fn read, void *ctx, uint64_t vaddr, uint32_t size, uint64_t *v)
{
	*v = 0;
	return size == 0 || size > 8 || read(ctx, vaddr, v, size) ? -1 : 0;
}

int ring_trace_buffer_read(struct ring_trace_buffer *tb, const struct ftrace_layout *L,
			   ftrace_read_fn read, void *ctx, uint64_t global_trace)
{
	uint32_t bits = 8 * L->trace_buffer.cpus.size;
	uint64_t cpus;

	memset(tb, 0, sizeof(*tb));
	if (read_word(read, ctx, global_trace + L->trace_array.buffer.offset,
		      L->trace_array.buffer.size, &tb->addr))
		return et_error("ftrace: cannot read global_trace.array_buffer.buffer at 0x%llx",
				(unsigned long long)(global_trace + L->trace_array.buffer.offset));
	if (!tb->addr)
		return 0;
	if (read_word(read, ctx, tb->addr + L->trace_buffer.cpus.offset, L->trace_buffer.cpus.size,
		      &cpus) ||
	    read_word(read, ctx, tb->addr + L->trace_buffer.buffers.offset,
		      L->trace_buffer.buffers.size, &tb->buffers))
		return et_error("ftrace: cannot read the trace_buffer at 0x%llx",
				(unsigned long long)tb->addr);
	/* cpus is an int: sign-extend it from its size. */
	tb->cpus = bits >= 64 ? (int64_t)cpus : (int64_t)(cpus << (64 - bits)) >> (64 - bits);
	return 0;
}

int ring_walk_cpu(struct ring_cpu_view *v, const struct ftrace_layout *L,
		  const struct ring_page_format *f, ftrace_read_fn read, void *ctx,
		  uint64_t cpu_buffer, uint64_t max_pages)
{
	struct walk w = { v, L, f, read, ctx };
	int ret;

	/* Keep the working storage; forget the last walk. */
	v->seq_len = v->ring_pages = 0;
	v->fault = v->ring_closed = v->counters_read = false;
	v->fault_msg[0] = v->note[0] = '\0';
	v->head = 0;
	if (v->seen)
		memset(v->seen, 0, v->seen_cap * sizeof(*v->seen));

	ret = read_counters(&w, cpu_buffer);
	if (ret)
		return ret < 0 ? -1 : 0;
	if (walk_ring(&w, max_pages))
		return -1;
	if (v->ring_closed && v->ring_pages != v->nr_pages)
		snprintf(v->note, sizeof(v->note), "the ring has %zu pages, nr_pages says %llu",
			 v->ring_pages, (unsigned long long)v->nr_pages);
	return build_sequence(&w);
}

void ring_cpu_view_free(struct ring_cpu_view *v)
{
	free(v->ring);
	free(v->seq);
	free(v->seen);
	memset(v, 0, sizeof(*v));
}
