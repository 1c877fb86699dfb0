/* SPDX-License-Identifier: MIT */
/*
 * Where the fields of Linux's ftrace ring buffer live, taken from the
 * kernel's own BTF (the .BTF section of a CONFIG_DEBUG_INFO_BTF kernel).
 *
 * Stable kernel releases add members to these private structs
 * (trace_buffer, ring_buffer_per_cpu), so no offset is ever a constant
 * here: every one is looked up by name, nested members included
 * (trace_array.array_buffer.buffer), and a kernel that lacks one is
 * refused with a one-line error naming it.
 *
 * The structures walked (kernel/trace/ring_buffer.c, trace.h,
 * trace_entries.h): global_trace (struct trace_array) -> array_buffer.buffer
 * (struct trace_buffer) -> buffers[cpu] (struct ring_buffer_per_cpu) ->
 * a ring of struct buffer_page (list_head list; page -> buffer_data_page
 * {time_stamp, commit, data[]}), whose events start with struct
 * trace_entry and whose type ids are enum trace_type.
 */
#ifndef VMM_FTRACE_LAYOUT_H
#define VMM_FTRACE_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/loader/kernel_image.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One member: byte offset from the start of its outermost struct, and the
 * size of its type (0 for a flexible array). */
struct ftrace_field {
	uint32_t offset;
	uint32_t size;
};

struct ftrace_layout {
	uint32_t btf_types; /* types in the BTF it came from (for messages) */

	struct { /* struct trace_array (global_trace) */
		struct ftrace_field buffer; /* array_buffer.buffer */
	} trace_array;
	struct { /* struct trace_buffer */
		struct ftrace_field cpus, buffers;
	} trace_buffer;
	struct { /* struct ring_buffer_per_cpu */
		uint32_t size;
		struct ftrace_field cpu, nr_pages, pages, head_page, tail_page, commit_page,
			reader_page, entries, overrun, commit_overrun, dropped_events,
			committing, read;
	} cpu_buffer;
	struct { /* struct buffer_page */
		uint32_t size;
		struct ftrace_field list, read, entries, real_end, page;
	} buffer_page;
	struct { /* struct buffer_data_page */
		struct ftrace_field time_stamp, commit, data;
	} data_page;
	struct { /* struct list_head */
		struct ftrace_field next, prev;
	} list_head;

	struct { /* enum trace_type */
		int64_t fn, graph_ent, graph_ret, print, bprint, bputs;
	} type;
	struct { /* struct trace_entry, the head of every event */
		uint32_t size;
		struct ftrace_field type, flags, preempt_count, pid;
	} entry;
	struct { /* struct ftrace_entry */
		struct ftrace_field ip, parent_ip;
	} fn;
	struct { /* struct ftrace_graph_ent_entry */
		struct ftrace_field func, depth; /* graph_ent.func, graph_ent.depth */
	} graph_ent;
	struct { /* struct ftrace_graph_ret_entry */
		struct ftrace_field func, depth, overrun, calltime, rettime; /* ret.* */
	} graph_ret;
	struct { /* struct print_entry */
		struct ftrace_field ip, buf;
	} print;
	struct { /* struct bprint_entry */
		struct ftrace_field ip, fmt, buf;
	} bprint;
	struct { /* struct bputs_entry */
		struct ftrace_field ip, str;
	} bputs;

	/*
	 * What writing events into the ring takes besides (ring_fill.h). A
	 * kernel whose BTF lacks one of these is still read; fill_missing then
	 * says why its ring cannot be filled ("" when it can).
	 */
	struct {
		struct ftrace_field time_start;		/* trace_array.array_buffer.time_start */
		struct ftrace_field buffer_flags;	/* trace_buffer.flags (RB_FL_OVERWRITE) */
		struct ftrace_field write;		/* buffer_page.write */
		struct ftrace_field entries_bytes, pages_touched, pages_lost; /* ring_buffer_per_cpu */
		struct ftrace_field write_stamp, before_stamp; /* their 64-bit .time */
		uint32_t fn_size, graph_ent_size, graph_ret_size; /* the entries' sizes */
		int64_t irqs_nosupport; /* TRACE_FLAG_IRQS_NOSUPPORT; -1 when unknown */
	} fill;
	char fill_missing[160];
};

/* Fills L from raw BTF bytes (what a .BTF section holds). 0, or -1 with an
 * error naming what is missing ("BTF: struct ring_buffer_per_cpu has no
 * member reader_page"). */
int ftrace_layout_from_btf(struct ftrace_layout *L, const void *btf, size_t size);

/* Same, from the kernel's .BTF section. */
int ftrace_layout_from_image(struct ftrace_layout *L, const struct kernel_image *img);

/*
 * What the layout reads, for tools that reproduce it (the test fixture
 * tests/fixtures/make_ftrace_btf.c copies exactly these members out of a
 * real kernel's BTF into a small one): the reader's and the fill's, and
 * the enum values, grouped by enum.
 */
struct ftrace_layout_member {
	const char *type_name; /* a struct in the BTF */
	const char *path;      /* member path, "a.b"; NULL: only the struct's size */
};
struct ftrace_layout_enum_value {
	const char *enum_name;
	const char *name;
};
const struct ftrace_layout_member *ftrace_layout_members(size_t *count);
const struct ftrace_layout_enum_value *ftrace_layout_enum_values(size_t *count);

/* One step of a member path: the member (anonymous struct/union members
 * appear as their own steps, with an empty name). */
struct btf;
struct ftrace_btf_hop {
	const char *name;     /* in the BTF's string table */
	uint32_t bit_offset;  /* within the enclosing type */
	uint32_t type_id;     /* the member's type, unresolved */
	uint32_t parent_id;   /* the enclosing struct/union */
};
#define FTRACE_BTF_MAX_HOPS 8
/* Resolves path within struct type_id: the hops, or -1 with an error. */
int ftrace_btf_member_path(const struct btf *btf, uint32_t type_id, const char *path,
			   struct ftrace_btf_hop *hops, int max_hops);

#ifdef __cplusplus
}
#endif

#endif /* VMM_FTRACE_LAYOUT_H */
