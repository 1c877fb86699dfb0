/* SPDX-License-Identifier: MIT */
/*
 * Reads a stock Linux kernel's own ftrace ring buffers out of guest
 * memory, again and again during a run and once at its end, and hands
 * each event over exactly once.
 *
 * Each read goes global_trace -> array_buffer.buffer -> buffers[cpu] and,
 * for every CPU with a buffer, walks its pages (vmm/ftrace/ring_walk.h)
 * and decodes them (ring_page.h, entries.h), passing events to the sink
 * in that CPU's time order, one CPU after the other. The reader never
 * writes guest memory and never consumes: it remembers, per CPU, the
 * last event it handed over (its data page, the page's time stamp and the
 * offset after it) and the next read starts right after it. A page found
 * again with the same address and time stamp is the same page; one that
 * the writer has since reused has a new time stamp. So nothing is handed
 * over twice, and a consuming reader inside the guest (ftrace_dump at a
 * panic moves the reader page and recycles pages) changes nothing for
 * events already read; the pages it recycled are still decoded (see
 * ring_walk.h), so events between the last read and the dump are not
 * lost either.
 *
 * Drops: the kernel counts every event it committed (`entries`) and every
 * one it could not write (`dropped_events` when full without overwrite,
 * `commit_overrun`). Events committed but gone before a read (overwritten,
 * or consumed and reused inside the guest) are entries minus what was
 * handed over; they are reported per CPU as `overwritten`, the others as
 * `not_written`. A read taken while the vCPU was stopped in the middle of
 * a commit (`committing` non-zero) counts nothing until the next read, so
 * an event not yet visible is not called lost; the final read counts all.
 *
 * The guest is untrusted: every pointer is read through the callback, the
 * walk is bounded, and a loop, a cross-link, a page outside guest memory,
 * a commit past the page, a bad record or time running backwards ends
 * that CPU's read with one warning line (the events before it are kept);
 * the next read resumes after a damaged page.
 */
#ifndef VMM_FTRACE_RING_READER_H
#define VMM_FTRACE_RING_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/ftrace/bprint.h"
#include "vmm/ftrace/entries.h"
#include "vmm/ftrace/guest_strings.h"
#include "vmm/ftrace/layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Default caps: CONFIG_NR_CPUS's largest value, and 4 GiB of buffer per CPU. */
#define FTRACE_READER_MAX_CPUS 8192u
#define FTRACE_READER_MAX_PAGES (1ull << 20)
/* The kernel's PAGE_SIZE on x86 (a buffer_data_page is one page). */
#define FTRACE_READER_PAGE_SIZE 4096u
/* Longest message text handed over (print, bprint, bputs). */
#define FTRACE_READER_TEXT_MAX 1024u

struct ftrace_reader_config {
	const struct ftrace_layout *layout; /* copied */
	uint64_t global_trace;		    /* guest-virtual address of global_trace */
	ftrace_read_fn read;		    /* guest memory, by virtual address */
	void *read_ctx;
	ftrace_symbol_fn symbol;	    /* optional: names for %pS/%ps in bprint */
	void *symbol_ctx;
	uint32_t max_cpus;		    /* 0: FTRACE_READER_MAX_CPUS */
	uint64_t max_pages;		    /* per CPU; 0: FTRACE_READER_MAX_PAGES */
	uint32_t page_size;		    /* 0: FTRACE_READER_PAGE_SIZE */
};

struct ftrace_drops {
	uint32_t cpu;
	uint64_t overwritten; /* committed, but gone before this read */
	uint64_t not_written; /* the kernel could not record them */
	uint64_t after_ts;    /* the gap lies after the last event handed over before */
	uint64_t before_ts;   /* ... and before this one (0: no event in this read) */
};

struct ftrace_sink {
	void *ctx;
	/* Each event, once. Non-zero stops the read (ftrace_reader_read
	 * returns -1); the event counts as not handed over. */
	int (*event)(void *ctx, const struct ftrace_event *ev);
	/* Optional: drops found by this read, per CPU, after its events. */
	void (*drops)(void *ctx, const struct ftrace_drops *d);
	/* Optional: one line per fault (cpu is -1 for the buffer as a whole). */
	void (*warning)(void *ctx, int cpu, const char *msg);
};

struct ftrace_cpu_stats {
	uint64_t events;	/* handed over, all reads */
	uint64_t overwritten;	/* drops reported */
	uint64_t not_written;
	uint64_t warnings;
	uint64_t resets;	/* times the kernel emptied the buffer between reads */
	uint64_t missed_flag_pages; /* pages carrying RB_MISSED_EVENTS */
	uint64_t pages;		/* pages in the ring at the last read */
	uint64_t kernel_entries, kernel_overrun, kernel_read; /* as last read */
	char first_warning[200];
};

struct ftrace_reader_stats {
	uint64_t reads;
	uint64_t events, overwritten, not_written, warnings;
	bool buffer_allocated; /* at the last read */
	uint32_t cpus;	       /* trace_buffer.cpus at the last read (capped) */
	char first_warning[220];
};

struct ftrace_reader;

/* NULL with an error (bad config, no memory). */
struct ftrace_reader *ftrace_reader_new(const struct ftrace_reader_config *cfg);
void ftrace_reader_free(struct ftrace_reader *r);

/*
 * Reads every CPU's buffer and hands over the events not handed over
 * before. `final` is the last read of the run (the kernel will not finish
 * a commit in progress: count its events as dropped). Returns 0 (also
 * when the kernel has not allocated its buffer yet: then nothing is
 * read), or -1 with an error when global_trace or the trace_buffer cannot
 * be read, the sink stopped the read, or memory ran out.
 */
int ftrace_reader_read(struct ftrace_reader *r, const struct ftrace_sink *sink, bool final);

const struct ftrace_reader_stats *ftrace_reader_get_stats(const struct ftrace_reader *r);
/* NULL for a CPU never seen with a buffer. */
const struct ftrace_cpu_stats *ftrace_reader_get_cpu_stats(const struct ftrace_reader *r,
						       uint32_t cpu);

#ifdef __cplusplus
}
#endif

#endif /* VMM_FTRACE_RING_READER_H */
