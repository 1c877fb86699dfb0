/* SPDX-License-Identifier: MIT */
/*
 * Per-CPU ring-buffer pages in the kernel's encoding (Linux 6.1,
 * kernel/trace/ring_buffer.c), as trace-cmd copies them into trace.dat:
 *
 *   page:  u64 time_stamp (of the page's first event), u64 commit (bytes
 *          of events), then 4080 bytes of events, zero-filled after commit
 *   event: u32 header, type_len:5 (low bits) and time_delta:27 (from the
 *          previous event, or the page's time_stamp for the first);
 *          type_len 1-28: a payload of type_len * 4 bytes follows;
 *          type_len 0: u32 length + 4, then the payload (over 112 bytes);
 *          type_len 30 (TIME_EXTEND): u32 of delta >> 27 for a delta
 *          that does not fit in 27 bits; the event after it has delta 0
 *   events are 4-byte aligned (x86 has no 8-byte alignment rule)
 *
 * A payload is a whole event record: the 8 bytes of struct trace_entry
 * (u16 type, u8 flags, u8 preempt_count, i32 pid) and the event's fields,
 * so any event a kernel wrote, with any type id, goes through as it is.
 *
 * Each CPU fills pages in a buffer of its own and hands them on, a few
 * at a time and in order, to a flush callback that knows where that CPU's
 * pages go. Memory: a few pages per CPU, whatever the number of events.
 */
#ifndef VMM_REPORT_TRACEDAT_TRACEDAT_PAGES_H
#define VMM_REPORT_TRACEDAT_TRACEDAT_PAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>


#ifdef __cplusplus
extern "C" {
#endif

#define TRACEDAT_MAX_CPUS 1024
/* The largest payload one page holds with a time extend before it. */
#define TRACEDAT_MAX_PAYLOAD 4064u

struct tracedat_cpu;

/* Takes nr_pages whole pages of cpu, its pages first_page onwards (every
 * page exactly once, in order). 0, or -1 with an error. */
typedef int (*tracedat_flush_fn)(void *ctx, uint32_t cpu, uint64_t first_page,
				 const uint8_t *pages, uint32_t nr_pages);

struct tracedat_pages {
	uint32_t nr_cpus;
	tracedat_flush_fn flush;
	void *flush_ctx;
	struct tracedat_cpu *cpus;
	uint64_t backwards;	    /* events earlier than the one before on
				     * their CPU: written at that one's time */
};

/* nr_cpus between 1 and TRACEDAT_MAX_CPUS. 0, or -1 with an error. */
int tracedat_pages_init(struct tracedat_pages *p, uint32_t nr_cpus, tracedat_flush_fn flush,
			void *flush_ctx);
void tracedat_pages_free(struct tracedat_pages *p);

/* Adds one event record (payload: common header + fields, len bytes, at
 * most TRACEDAT_MAX_PAYLOAD) at time ts on cpu (below nr_cpus). Times on
 * one CPU should not go backwards; one that does is written at the
 * previous event's time and counted in backwards. 0, or -1 with an error. */
int tracedat_pages_add(struct tracedat_pages *p, uint32_t cpu, uint64_t ts, const void *payload,
		       uint32_t len);

/* Closes every CPU's last page and flushes what is buffered. */
int tracedat_pages_finish(struct tracedat_pages *p);

/* Bytes of pages of cpu so far, the open one included, and events added
 * on it. */
uint64_t tracedat_pages_bytes(const struct tracedat_pages *p, uint32_t cpu);
uint64_t tracedat_pages_events(const struct tracedat_pages *p, uint32_t cpu);

#ifdef __cplusplus
}
#endif

#endif /* VMM_REPORT_TRACEDAT_TRACEDAT_PAGES_H */
