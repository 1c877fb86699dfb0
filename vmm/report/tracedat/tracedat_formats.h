/* SPDX-License-Identifier: MIT */
/*
 * The format texts a trace.dat carries, as an x86-64 Linux 6.1 prints them
 * under /sys/kernel/tracing/events: the ring buffer's page and event
 * headers, the ftrace events the function tracers write (with the kernel's
 * IDs, enum trace_type, and its field layouts from trace_entries.h), and
 * the event system "earlytrace" for what the VMM saw that no kernel event
 * describes. Readers (libtraceevent) decode every event by these texts,
 * so each payload the writer builds must match its text byte for byte:
 * the TRACEDAT_OFF_* offsets below are the ones the texts state.
 */
#ifndef VMM_REPORT_TRACEDAT_TRACEDAT_FORMATS_H
#define VMM_REPORT_TRACEDAT_TRACEDAT_FORMATS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TRACEDAT_PAGE_SIZE 4096u
#define TRACEDAT_PAGE_HEADER 16u /* u64 time_stamp, local_t commit */
#define TRACEDAT_PAGE_DATA (TRACEDAT_PAGE_SIZE - TRACEDAT_PAGE_HEADER)

/* struct trace_entry, the common head of every event (8 bytes). */
#define TRACEDAT_COMMON_SIZE 8u
#define TRACEDAT_FLAG_IRQS_OFF 0x01 /* TRACE_FLAG_IRQS_OFF: "d" in ftrace's flags */

/* The ftrace events (enum trace_type in Linux 6.1's kernel/trace/trace.h). */
enum tracedat_ftrace_id {
	TRACEDAT_ID_FUNCTION = 1,	  /* TRACE_FN */
	TRACEDAT_ID_PRINT = 5,		  /* TRACE_PRINT */
	TRACEDAT_ID_BPRINT = 6,		  /* TRACE_BPRINT */
	TRACEDAT_ID_FUNCGRAPH_EXIT = 10,  /* TRACE_GRAPH_RET */
	TRACEDAT_ID_FUNCGRAPH_ENTRY = 11, /* TRACE_GRAPH_ENT */
};

/* earlytrace's own events. Kernel event IDs are handed out from 20 or so
 * upward at boot; these sit far above any a kernel has, so a later phase
 * can put a kernel's own events (with its IDs) beside them, and below
 * 32768: KernelShark keeps event IDs in a signed 16-bit field (its own
 * entries are the negative ones), and shows higher ones as nameless. */
enum tracedat_earlytrace_id {
	TRACEDAT_ID_RUN = 32000,
	TRACEDAT_ID_VM_EXIT = 32001,
	TRACEDAT_ID_MARK = 32002,
	TRACEDAT_ID_DROPS = 32003,
	TRACEDAT_ID_END = 32004,
};

/* Payload offsets and sizes, as the format texts state them. */
enum tracedat_layout {
	/* ftrace:function (struct ftrace_entry) */
	TRACEDAT_OFF_FUNCTION_IP = 8,
	TRACEDAT_OFF_FUNCTION_PARENT = 16,
	TRACEDAT_SIZE_FUNCTION = 24,
	/* ftrace:funcgraph_entry (struct ftrace_graph_ent_entry, packed) */
	TRACEDAT_OFF_GRAPH_ENT_FUNC = 8,
	TRACEDAT_OFF_GRAPH_ENT_DEPTH = 16,
	TRACEDAT_SIZE_GRAPH_ENT = 20,
	/* ftrace:funcgraph_exit (struct ftrace_graph_ret_entry, packed) */
	TRACEDAT_OFF_GRAPH_RET_FUNC = 8,
	TRACEDAT_OFF_GRAPH_RET_DEPTH = 16,
	TRACEDAT_OFF_GRAPH_RET_OVERRUN = 20,
	TRACEDAT_OFF_GRAPH_RET_CALLTIME = 24,
	TRACEDAT_OFF_GRAPH_RET_RETTIME = 32,
	TRACEDAT_SIZE_GRAPH_RET = 40,
	/* ftrace:print (struct print_entry): ip, then the text */
	TRACEDAT_OFF_PRINT_IP = 8,
	TRACEDAT_OFF_PRINT_BUF = 16,
	/* earlytrace:run; strings are __data_loc (u32: length << 16 | offset) */
	TRACEDAT_OFF_RUN_TSC_KHZ = 8,
	TRACEDAT_OFF_RUN_START_TIME = 16,
	TRACEDAT_OFF_RUN_VERSION = 24,
	TRACEDAT_OFF_RUN_KERNEL = 28,
	TRACEDAT_OFF_RUN_BUILD_ID = 32,
	TRACEDAT_OFF_RUN_MODE = 36,
	TRACEDAT_OFF_RUN_SYMBOLS = 40,
	TRACEDAT_SIZE_RUN = 44, /* the strings follow */
	/* earlytrace:vm_exit */
	TRACEDAT_OFF_EXIT_RIP = 8,
	TRACEDAT_OFF_EXIT_ADDR = 16,
	TRACEDAT_OFF_EXIT_VALUE = 24,
	TRACEDAT_OFF_EXIT_DESC = 32,
	TRACEDAT_OFF_EXIT_KIND = 36,
	TRACEDAT_OFF_EXIT_SIZE = 37,
	TRACEDAT_OFF_EXIT_WRITE = 38,
	TRACEDAT_OFF_EXIT_UNCLAIMED = 39,
	TRACEDAT_SIZE_EXIT = 40,
	/* earlytrace:mark */
	TRACEDAT_OFF_MARK_TEXT = 8,
	TRACEDAT_SIZE_MARK = 12,
	/* earlytrace:drops */
	TRACEDAT_OFF_DROPS_COUNT = 8,
	TRACEDAT_OFF_DROPS_TOTAL = 16,
	TRACEDAT_OFF_DROPS_REASON = 24,
	TRACEDAT_SIZE_DROPS = 28,
	/* earlytrace:end */
	TRACEDAT_OFF_END_RECORDED = 8,
	TRACEDAT_OFF_END_WRITTEN = 16,
	TRACEDAT_OFF_END_DROPPED = 24,
	TRACEDAT_OFF_END_LOST = 32,
	TRACEDAT_OFF_END_FINISHED = 40,
	TRACEDAT_OFF_END_REASON = 44,
	TRACEDAT_SIZE_END = 48,
};

/* One event's format file (events/SYSTEM/NAME/format). */
struct tracedat_format {
	const char *name;
	uint16_t id;
	const char *text;
};

/* events/header_page and events/header_event of an x86-64 kernel
 * (64-bit local_t commit, 4080 data bytes a page). */
extern const char tracedat_header_page[];
extern const char tracedat_header_event[];

/* The "ftrace" system: function, funcgraph_entry, funcgraph_exit, print,
 * bprint. */
extern const struct tracedat_format tracedat_ftrace_formats[];
extern const size_t tracedat_nr_ftrace_formats;

/* The "earlytrace" system: run, vm_exit, mark, drops, end. */
#define TRACEDAT_EARLYTRACE_SYSTEM "earlytrace"
extern const struct tracedat_format tracedat_earlytrace_formats[];
extern const size_t tracedat_nr_earlytrace_formats;

#ifdef __cplusplus
}
#endif

#endif /* VMM_REPORT_TRACEDAT_TRACEDAT_FORMATS_H */
