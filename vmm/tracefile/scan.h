/* SPDX-License-Identifier: MIT */
/*
 * The trace reader's opening pass: what the file holds, learnt from each
 * record as the reader validates it (struct trace_info, the symbols, the
 * notes). Part of the reader (vmm/tracefile/reader_internal.h).
 */
#ifndef VMM_TRACEFILE_SCAN_H
#define VMM_TRACEFILE_SCAN_H

#include "vmm/tracefile/trace_file.h"

/* Adds one validated record to what the file is known to hold (END's
 * count is checked here: vmm/tracefile/doubt.h). 0, or -1 with an error
 * (a corrupt META or SYMBOLS payload, out of memory). */
int trace_scan_record(struct trace_reader *r, const struct trace_record *rec);
/* After the last record: the symbols, notes and waits sorted, time
 * zero for files without a CLOCK record. */
void trace_scan_finish(struct trace_reader *r);

#endif /* VMM_TRACEFILE_SCAN_H */
