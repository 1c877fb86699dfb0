/* SPDX-License-Identifier: MIT */
/*
 * Pages set aside until their place in the trace.dat is known. trace.dat
 * puts every CPU's offset and size before the data, and the events come
 * once, all CPUs interleaved in time; so the pages of all but one CPU
 * (all of them when the output is a pipe) wait in one temporary file, in
 * runs of pages per CPU, and are copied into place at the end.
 */
#ifndef VMM_REPORT_TRACEDAT_TRACEDAT_SPILL_H
#define VMM_REPORT_TRACEDAT_TRACEDAT_SPILL_H

#include <stdint.h>
#include <stdio.h>

#include "vmm/report/tracedat/tracedat_out.h"

#ifdef __cplusplus
extern "C" {
#endif

struct spill_run;

struct tracedat_spill {
	FILE *tmp;	    /* tmpfile(), created with the first run */
	uint64_t end;	    /* its size */
	uint32_t nr_cpus;
	struct spill_cpu {
		struct spill_run *runs;
		size_t nr, cap;
	} *cpus;
};

/* 0, or -1 with an error. */
int tracedat_spill_init(struct tracedat_spill *s, uint32_t nr_cpus);
void tracedat_spill_free(struct tracedat_spill *s);

/* Appends nr_pages pages of cpu. */
int tracedat_spill_put(struct tracedat_spill *s, uint32_t cpu, const uint8_t *pages,
		       uint32_t nr_pages);

/* Writes all of cpu's pages, in order, to o at offset. */
int tracedat_spill_copy(struct tracedat_spill *s, uint32_t cpu, struct tracedat_out *o,
			uint64_t offset);

#ifdef __cplusplus
}
#endif

#endif /* VMM_REPORT_TRACEDAT_TRACEDAT_SPILL_H */
