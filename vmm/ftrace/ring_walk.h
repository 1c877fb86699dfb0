/* SPDX-License-Identifier: MIT */
/*
 * One CPU's ftrace ring buffer found in guest memory: its counters, its
 * pages, and the order in which their events were written.
 *
 * A struct ring_buffer_per_cpu owns a ring of nr_pages struct buffer_page
 * linked by list.next (the low two bits of each pointer are flags:
 * RB_PAGE_HEAD marks the pointer to the oldest page, RB_PAGE_UPDATE one
 * the writer is moving) plus a reader page outside the ring that a
 * consuming reader swaps with the head. Written events, oldest first:
 *   1. recycled pages: a consuming reader (trace_pipe, or ftrace_dump at a
 *      panic) finished them and swapped them back in just before the head;
 *      6.1 zeroes their commit but leaves their bytes, and they are full
 *      pages, so they are decoded to the end of the page. Found walking
 *      back from the head while commit is 0 and time stamps fall;
 *   2. the reader page, when it holds data;
 *   3. the head page and on around the ring to the commit page (the last
 *      one with committed events), unless the commit page is the reader
 *      page itself.
 * The walk trusts nothing: every page must be readable, its list.prev must
 * point back (a cross-link otherwise), no page may come twice (a loop),
 * and the ring must close within the cap. The first violation ends the
 * walk with one line saying what; the pages found before it that are in
 * order stay usable.
 */
#ifndef VMM_FTRACE_RING_WALK_H
#define VMM_FTRACE_RING_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/ftrace/guest_strings.h"
#include "vmm/ftrace/layout.h"
#include "vmm/ftrace/ring_page.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RB_PAGE_HEAD 1u
#define RB_PAGE_UPDATE 2u
#define RB_FLAG_MASK 3u

struct ring_page_ref {
	uint64_t bpage;	     /* the struct buffer_page */
	uint64_t data;	     /* its struct buffer_data_page */
	uint64_t stamp;	     /* the data page's time_stamp */
	uint64_t commit_raw; /* the data page's commit, flag bits included */
	uint64_t next, prev; /* list pointers, flags masked */
	unsigned next_flags; /* RB_PAGE_HEAD / RB_PAGE_UPDATE on next */
};

enum ring_seq_where { RING_SEQ_RECYCLED, RING_SEQ_READER, RING_SEQ_RING };

struct ring_seq_page {
	struct ring_page_ref ref;
	enum ring_seq_where where;
	uint32_t bound; /* RING_PAGE_BOUND_COMMIT, or bytes to decode */
};

struct ring_cpu_view {
	/* struct ring_buffer_per_cpu */
	uint64_t nr_pages, entries, overrun, commit_overrun, dropped_events, committing, read;
	uint64_t head_page, tail_page, commit_page, reader_page;
	bool counters_read; /* false: the struct itself was unreadable */

	uint64_t head;	     /* the real head page (by its flag), 0 if unknown */
	size_t ring_pages;   /* pages walked */
	bool ring_closed;    /* the walk came back to where it started */

	/* Every page whose events the kernel still holds, oldest first. */
	struct ring_seq_page *seq;
	size_t seq_len;

	/* A fault in the structure; the pages before it are in seq. */
	bool fault;
	char fault_msg[200];
	/* Something odd that does not stop the read (ring length != nr_pages). */
	char note[200];

	/* Working storage, kept between walks. */
	struct ring_page_ref *ring;
	size_t ring_cap, seq_cap;
	uint64_t *seen;
	size_t seen_cap;
};

/* global_trace's array_buffer.buffer (struct trace_buffer), its CPU count
 * (an int, sign-extended) and its per-CPU array. */
struct ring_trace_buffer {
	uint64_t addr; /* 0: the kernel has not allocated it yet */
	int64_t cpus;
	uint64_t buffers;
};

/* Reads it through read(ctx, ...): 0 (addr 0 when not allocated), or -1
 * with an error naming what could not be read. */
int ring_trace_buffer_read(struct ring_trace_buffer *tb, const struct ftrace_layout *L,
			   ftrace_read_fn read, void *ctx, uint64_t global_trace);

/*
 * Walks the ring_buffer_per_cpu at cpu_buffer (guest-virtual), reading
 * through read(ctx, ...), at most max_pages pages. Faults in guest memory
 * are reported in v (fault, fault_msg), never as an error: returns 0, or
 * -1 with an error only when out of memory.
 */
int ring_walk_cpu(struct ring_cpu_view *v, const struct ftrace_layout *L,
		  const struct ring_page_format *f, ftrace_read_fn read, void *ctx,
		  uint64_t cpu_buffer, uint64_t max_pages);
void ring_cpu_view_free(struct ring_cpu_view *v);

#ifdef __cplusplus
}
#endif

#endif /* VMM_FTRACE_RING_WALK_H */
