/* SPDX-License-Identifier: MIT */
/*
 * Event records for trace.dat pages, each laid out as its format text in
 * tracedat_formats.c states: the common header (type, flags, preempt
 * count, pid), then the fields, then the strings of __data_loc fields.
 * Every builder writes into buf (TRACEDAT_MAX_PAYLOAD bytes) and returns
 * the record's length for tracedat_pages_add(). Strings that would not
 * fit one page are cut, and *cut counts them.
 */
#ifndef VMM_REPORT_TRACEDAT_TRACEDAT_EVENTS_H
#define VMM_REPORT_TRACEDAT_TRACEDAT_EVENTS_H

#include <stdint.h>

#include "earlytrace/abi.h"
#include "vmm/report/tracedat/tracedat_formats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* struct trace_entry: every event's first 8 bytes. Events here are the
 * boot task's, pid 0, preempt count 0. */
void tracedat_common(uint8_t *buf, uint16_t type, uint8_t flags, int32_t pid);

uint32_t tracedat_ev_function(uint8_t *buf, uint8_t flags, uint64_t ip, uint64_t parent_ip);
uint32_t tracedat_ev_graph_entry(uint8_t *buf, uint8_t flags, uint64_t func, int32_t depth);
/* calltime and rettime in nanoseconds, as the kernel's trace_clock_local(). */
uint32_t tracedat_ev_graph_exit(uint8_t *buf, uint8_t flags, uint64_t func, int32_t depth,
				uint64_t calltime, uint64_t rettime);

/* earlytrace:vm_exit: the unpacked exit, the rip, and the exit in words. */
uint32_t tracedat_ev_vm_exit(uint8_t *buf, uint8_t flags, const struct et_exit *x, uint64_t rip,
			     const char *desc, uint64_t *cut);
uint32_t tracedat_ev_mark(uint8_t *buf, uint8_t flags, const char *text, uint64_t *cut);
/* ftrace:print: the guest kernel's trace_printk text and its caller. */
uint32_t tracedat_ev_print(uint8_t *buf, uint8_t flags, uint64_t ip, const char *text,
			   uint64_t *cut);
uint32_t tracedat_ev_drops(uint8_t *buf, uint8_t flags, uint64_t count, uint64_t total,
			   const char *reason, uint64_t *cut);

struct tracedat_end_info {
	uint64_t recorded, written, dropped, lost;
	uint32_t finished; /* 1: the trace file has its END record */
	const char *reason;
};
uint32_t tracedat_ev_end(uint8_t *buf, uint8_t flags, const struct tracedat_end_info *e,
			 uint64_t *cut);

/* Each string of earlytrace:run is cut to this many bytes, so all five
 * fit one record. */
#define TRACEDAT_RUN_STRING_MAX 800
struct tracedat_run_info {
	uint64_t tsc_khz, start_time_ns;
	const char *version, *kernel, *build_id, *mode, *symbols;
};
uint32_t tracedat_ev_run(uint8_t *buf, uint8_t flags, const struct tracedat_run_info *run,
			 uint64_t *cut);

#ifdef __cplusplus
}
#endif

#endif /* VMM_REPORT_TRACEDAT_TRACEDAT_EVENTS_H */
