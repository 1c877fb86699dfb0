/* SPDX-License-Identifier: MIT */
/*
 * Checks that doubt a trace file against itself. A record's CRC catches
 * damage inside it, not a whole record removed, repeated or appended, nor
 * a file that changes between two passes: these compare what the file
 * holds with its own END record and with what the opening pass saw
 * (docs/reliability.md, "Trace files that lie").
 */
#ifndef VMM_TRACEFILE_DOUBT_H
#define VMM_TRACEFILE_DOUBT_H

#include <stdint.h>

#include "vmm/tracefile/trace_file.h"

/* END's count of written events against the events before it: a
 * difference is the file's doubt (trace_info.doubt). 0, or -1 with an
 * error (out of memory). */
int trace_doubt_end_count(struct trace_reader *r, const struct trace_record *end);
/* Bytes after END (r->off, where END ended, short of r->limit): said as
 * the doubt, and the reader stops at END. 0, or -1 with an error. */
int trace_doubt_after_end(struct trace_reader *r);
/* The file ended at off, before the part the opening pass validated: it
 * shrank under the reader. Always -1, with the error. */
int trace_doubt_shrank(struct trace_reader *r, uint64_t off);

#endif /* VMM_TRACEFILE_DOUBT_H */
