/* SPDX-License-Identifier: MIT */
/*
 * Writes events into a stock Linux kernel's own ftrace ring buffer in guest
 * memory, exactly as its writer (kernel/trace/ring_buffer.c,
 * __rb_reserve_next and rb_move_tail) would have written them, so the
 * kernel's readers (tracefs, trace-cmd, ftrace_dump_on_oops) show them
 * and the kernel goes on appending after them.
 *
 * The one moment this is done: the vCPU stopped where the kernel's
 * function tracer is about to start (trace --follow's handoff), the ring
 * freshly reset by tracer_init() and nothing written yet. Anything else
 * is refused before a byte is written, with one line saying why: a ring
 * that already holds events, a commit in progress, a ring that does not
 * overwrite (the early calls would crowd out the kernel's own), a
 * structure that is not a closed ring of nr_pages pages, a BTF that does
 * not describe what is written (ftrace_layout.fill_missing).
 *
 * The writer's rules kept: each page's time_stamp is its first event's
 * time and that event's delta 0; a delta that does not fit the header's
 * 27 bits gets a TIME_EXTEND record before the event; an event that does
 * not fit the rest of a page leaves padding there (a discarded event, or a
 * bare padding header under 8 bytes) and goes to the next page. When the
 * events need more pages than the ring has, the oldest pages go, as the
 * writer in overwrite mode drops them: the ring keeps the newest nr_pages
 * pages, and the kernel's overrun, pages_lost and entries count the rest.
 * The counters the writer keeps (entries, entries_bytes, pages_touched,
 * each page's write, entries, real_end and commit, write_stamp and
 * before_stamp, from which the next event's delta is computed) end as the
 * kernel's own writer would have left them.
 *
 * Guest memory goes through read and write callbacks by virtual address;
 * the walk of the ring (ring_walk.h) is the reader's, bounded, so the fill
 * never writes outside the pages that walk found.
 */
#ifndef VMM_FTRACE_RING_FILL_H
#define VMM_FTRACE_RING_FILL_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/ftrace/guest_strings.h"
#include "vmm/ftrace/layout.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef int (*ftrace_write_fn)(void *ctx, uint64_t vaddr, const void *buf, size_t len);

enum ftrace_fill_kind {
	FTRACE_FILL_FUNCTION,	  /* function: ip, parent_ip */
	FTRACE_FILL_GRAPH_ENTRY,  /* funcgraph_entry: ip (func), depth */
	FTRACE_FILL_GRAPH_RETURN, /* funcgraph_exit: ip (func), depth, calltime; rettime is ts */
};

struct ftrace_fill_event {
	uint64_t ts; /* on the ring's clock; never before the event before it */
	enum ftrace_fill_kind kind;
	uint64_t ip, parent_ip;
	int32_t depth;
	uint64_t calltime;
	int32_t pid; /* trace_entry.pid */
};

struct ftrace_fill_config {
	const struct ftrace_layout *layout;
	uint64_t global_trace; /* its guest-virtual address */
	ftrace_read_fn read;
	ftrace_write_fn write;
	void *ctx;
	uint32_t page_size; /* 0: FTRACE_READER_PAGE_SIZE */
	uint64_t max_pages; /* per CPU; 0: FTRACE_READER_MAX_PAGES */
};

struct ftrace_fill_result {
	uint64_t written;  /* events now in the ring */
	uint64_t overrun;  /* the oldest, that did not fit (the kernel's overrun grew by them) */
	uint64_t pages;	   /* the ring's pages they fill */
	uint64_t nr_pages; /* the ring's pages */
	uint64_t first_ts; /* of the oldest event kept */
};

/*
 * Writes ev[0..n) (time order) into CPU cpu's ring. 0 with *res filled;
 * 1 when the kernel has no ring for that CPU (not up yet when the ring
 * was allocated: nothing written, the error says so); or -1 with an error
 * saying why nothing was written (also when the guest's memory refused a
 * write part-way: then the error says so).
 */
int ftrace_ring_fill(const struct ftrace_fill_config *cfg, uint32_t cpu,
		     const struct ftrace_fill_event *ev, size_t n, struct ftrace_fill_result *res);

/*
 * After the fills: the trace array's time_start, from which tracefs's
 * trace file shows events (older ones it skips as left over from before a
 * reset) and the latency format counts, moved back to ts when it is
 * later. 0, or -1 with an error.
 */
int ftrace_fill_time_start(const struct ftrace_fill_config *cfg, uint64_t ts);

#ifdef __cplusplus
}
#endif

#endif /* VMM_FTRACE_RING_FILL_H */
