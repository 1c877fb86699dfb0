/* SPDX-License-Identifier: MIT */
/*
 * The progress line of long conversions (`report`, `check`, `trace`'s
 * --expect and -o FILE.dat): the line `trace` shows while the guest runs
 * (vmm/trace/progress.h), on stderr when it is a terminal and nowhere
 * else, counting the events read from the trace file so far (not while
 * the output itself goes to a terminal: it would land among it):
 *
 *   earlytrace: 3.0 s, 1265536 events (421845/s), 0 dropped
 *
 * A conversion reads a file more than once (the validating pass at open,
 * then one pass or more for the report), so the count can pass the
 * file's number of events; "dropped" is the file's own count, once it is
 * open.
 */
#ifndef VMM_TRACE_READ_PROGRESS_H
#define VMM_TRACE_READ_PROGRESS_H

#include <stdio.h>

#include "vmm/trace/progress.h"
#include "vmm/tracefile/trace_file.h"

#ifdef __cplusplus
extern "C" {
#endif

struct read_progress {
	struct progress line;
	uint64_t first;			 /* trace_reader_events_read() at the start */
	const struct trace_reader *file; /* once open (__atomic_* access) */
};

/* Starts the line when stderr is a terminal. Never fails: without its
 * thread the conversion goes on without a line. */
void read_progress_start(struct read_progress *rp);
/* The file being converted, opened: its drop count joins the line. */
void read_progress_file(struct read_progress *rp, const struct trace_reader *r);
/* Before the first write to out: when out is a terminal (the line's own,
 * or another) the line goes now, so that it never lands among the
 * output; otherwise it stays until the output is written too (a slow
 * reader of a pipe is part of the wait). */
void read_progress_output(struct read_progress *rp, FILE *out);
/* Erases the line; call before closing the reader given. */
void read_progress_stop(struct read_progress *rp);

#ifdef __cplusplus
}
#endif

#endif /* VMM_TRACE_READ_PROGRESS_H */
