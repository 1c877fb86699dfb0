/* SPDX-License-Identifier: MIT */
/*
 * The payload of one ring-buffer event (a struct trace_entry and what
 * follows it, kernel/trace/trace_entries.h) decoded by the kernel's BTF
 * layout: function entries, function_graph entries and returns, and the
 * trace_printk family (print, bprint, bputs). Any other type id, and a
 * known type too short for its fields, is kept raw with its type id and
 * bytes: never skipped.
 */
#ifndef VMM_FTRACE_ENTRIES_H
#define VMM_FTRACE_ENTRIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/ftrace/bprint.h"
#include "vmm/ftrace/guest_strings.h"
#include "vmm/ftrace/layout.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ftrace_event_kind {
	FTRACE_EVENT_RAW = 0,	   /* any other type, or too short: payload only */
	FTRACE_EVENT_FUNCTION,	   /* ip, parent_ip */
	FTRACE_EVENT_GRAPH_ENTRY,  /* func, depth */
	FTRACE_EVENT_GRAPH_RETURN, /* func, depth, overrun, calltime, rettime */
	FTRACE_EVENT_PRINT,	   /* ip, text (trace_printk with a non-constant format) */
	FTRACE_EVENT_BPRINT,	   /* ip, fmt, text rendered from the binary arguments */
	FTRACE_EVENT_BPUTS,	   /* ip, fmt (the string's address), text */
};

struct ftrace_event {
	uint64_t ts;  /* absolute, in the ring buffer's clock */
	uint32_t cpu;
	enum ftrace_event_kind kind;
	/* A payload shorter than its type's fields (or than a trace_entry):
	 * kind is RAW and type is what could be read (0xffff if nothing). */
	bool malformed;

	/* struct trace_entry, common to every event */
	uint16_t type;
	uint8_t flags, preempt_count;
	int32_t pid;

	uint64_t ip, parent_ip;	     /* FUNCTION; ip of PRINT, BPRINT, BPUTS */
	uint64_t func;		     /* GRAPH_* */
	int32_t depth;		     /* GRAPH_* */
	uint32_t overrun;	     /* GRAPH_RETURN */
	uint64_t calltime, rettime;  /* GRAPH_RETURN, in the trace clock */
	uint64_t fmt;		     /* BPRINT format / BPUTS string, guest address */

	/* PRINT, BPRINT, BPUTS: the message, text_len bytes, NUL-terminated
	 * once the reader has rendered it (ftrace_event_render_text). */
	const char *text;
	size_t text_len;
	bool text_truncated;	     /* format unreadable, arguments short, or cut */

	/* The event's bytes as the kernel wrote them (valid during the
	 * callback that receives the event). */
	const uint8_t *payload;
	uint32_t payload_len;
};

/* Fills ev (all but ts, cpu and the rendered text) from one payload. */
void ftrace_event_decode(const struct ftrace_layout *L, const uint8_t *payload, uint32_t len,
			 struct ftrace_event *ev);

/*
 * For PRINT, BPRINT and BPUTS, sets ev->text to the message in buf (size
 * bytes, NUL-terminated): PRINT's text from the payload, BPUTS's string
 * and BPRINT's format read from guest memory through gs (bounded, cached)
 * and BPRINT's arguments rendered as the kernel's printf would (%pS/%ps
 * through sym when given, else hex). Other kinds are left without text.
 * Never fails: what cannot be read is said in the text ("<format at 0x...
 * unreadable>") and text_truncated set.
 */
void ftrace_event_render_text(struct ftrace_event *ev, const struct ftrace_layout *L,
			      struct guest_strings *gs, ftrace_symbol_fn sym, void *sym_ctx,
			      char *buf, size_t size);

const char *ftrace_event_kind_name(enum ftrace_event_kind kind);

#ifdef __cplusplus
}
#endif

#endif /* VMM_FTRACE_ENTRIES_H */
