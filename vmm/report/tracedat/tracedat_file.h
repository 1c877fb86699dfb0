/* SPDX-License-Identifier: MIT */
/*
 * trace-cmd's trace.dat, version 6 (trace-cmd's Documentation/trace-cmd/
 * trace-cmd.dat.v6.5.txt), little-endian, 8-byte longs, 4 KiB pages:
 *
 *   "\x17\x08\x44tracing" "6\0", endian 0, long size 8, u32 page size
 *   "header_page\0" u64 size + text; "header_event\0" u64 size + text
 *   u32 count + (u64 size + format) of the ftrace events
 *   u32 systems + per system: name\0, u32 count + (u64 size + format)
 *   u32 size + kallsyms text; u32 size (0) of printk formats
 *   u64 size + saved_cmdlines text; u32 CPU count
 *   "options  \0" + options (u16 id, u32 size, data), u16 0 ends them:
 *       TSC2NSEC (14): u32 mult, u32 shift, u64 offset (when the TSC
 *       frequency is known); OFFSET (7): "ns" text (when an origin is
 *       set); TRACECLOCK (4): "x86-tsc"
 *   "flyrecord\0" + per CPU u64 offset, u64 size; u64 size + "[x86-tsc]"
 *   (the trace clock, which v6 readers expect after a TRACECLOCK option)
 *   per CPU: its ring-buffer pages, from a page-aligned offset
 *
 * Every CPU's offset and size precede the data, yet the events come once
 * (all CPUs interleaved in time): the header's length does not depend on
 * the sizes, so CPU 0's pages go straight to their place in a seekable
 * output and the header is written last; the other CPUs' pages wait in a
 * temporary file (tracedat_spill.h) and follow CPU 0's. A pipe gets the
 * header first and every CPU's pages from the temporary file.
 */
#ifndef VMM_REPORT_TRACEDAT_TRACEDAT_FILE_H
#define VMM_REPORT_TRACEDAT_TRACEDAT_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vmm/report/tracedat/tracedat_clock.h"
#include "vmm/report/tracedat/tracedat_formats.h"
#include "vmm/report/tracedat/tracedat_kallsyms.h"
#include "vmm/report/tracedat/tracedat_pages.h"
#include "vmm/symbols/symtab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An event system besides "ftrace": its name and format files. */
struct tracedat_system {
	const char *name;
	const struct tracedat_format *formats;
	size_t nr_formats;
};

struct tracedat_desc {
	uint32_t nr_cpus;		/* 1 to TRACEDAT_MAX_CPUS */
	struct tracedat_clock clock;
	const struct symtab *symbols;	/* into kallsyms */
	const char *cmdlines;		/* saved_cmdlines: "PID COMM\n" lines */
	const struct tracedat_system *systems;
	size_t nr_systems;
};

/* Produces every event through tracedat_pages_add(), in time order on
 * each CPU. 0, or -1 with an error. */
typedef int (*tracedat_emit_fn)(void *ctx, struct tracedat_pages *pages);

struct tracedat_result {
	uint64_t bytes;	     /* of the file */
	uint64_t events;     /* written, all CPUs */
	uint64_t backwards;  /* events written at an earlier event's time */
	struct tracedat_kallsyms_stats kallsyms;
};

/* Writes the whole file to f, which must be empty (a new file, or a
 * pipe). 0, or -1 with an error. */
int tracedat_write(FILE *f, const struct tracedat_desc *d, tracedat_emit_fn emit, void *ctx,
		   struct tracedat_result *res);

#ifdef __cplusplus
}
#endif

#endif /* VMM_REPORT_TRACEDAT_TRACEDAT_FILE_H */
