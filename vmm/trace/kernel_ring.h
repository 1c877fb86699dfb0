/* SPDX-License-Identifier: MIT */
/*
 * `trace --follow`, the reading side: once a stock kernel's own function
 * tracer has taken over (vmm/trace/handoff_symbol.c decides when), its ftrace
 * ring buffers are read from guest memory (vmm/ftrace/) into the same
 * trace file, on the same clock (the kernel runs with trace_clock=x86-tsc):
 * at a steady period while the guest runs (the vCPU stopped for each read,
 * so the buffer is consistent), at a panic, and once more at every end.
 *
 * Function entries become calls, function_graph entries and exits calls
 * and returns, all with source "ftrace" (ET_REC_SRC_GUEST with
 * ET_REC_F_FTRACE); trace_printk text and any other event type go in as
 * KEVENT records (the latter raw, with its type id). What the kernel
 * overwrote before a read, or could not write, is counted from its own
 * counters and written as drops. Nothing is skipped silently.
 */
#ifndef VMM_TRACE_KERNEL_RING_H
#define VMM_TRACE_KERNEL_RING_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch/arch.h"
#include "vmm/ftrace/layout.h"
#include "vmm/ftrace/ring_fill.h"
#include "vmm/ftrace/ring_reader.h"
#include "vmm/kvm/vcpu.h"
#include "vmm/loader/kernel_image.h"
#include "vmm/symbols/symbols.h"
#include "vmm/trace/host_buffer.h"
#include "vmm/trace/recorder.h"

#ifdef __cplusplus
extern "C" {
#endif

struct kernel_ring {
	struct ftrace_layout layout;
	uint64_t global_trace;		/* its guest-virtual address */
	struct ftrace_reader *reader;	/* NULL until the kernel's tracer takes over */
	struct recorder *rec;
	struct vcpu *vcpu;
	const struct symtab *syms;	/* names for %pS in trace_printk */
	struct arch_paging paging;	/* the kernel's page tables, taken at takeover */
	ftrace_read_fn read;		/* guest memory by virtual address, from takeover */
	ftrace_write_fn write;
	void *mem_ctx;
	uint64_t takeover_tsc;		/* earlytrace's last moment of capture */
	bool first_seen;		/* the kernel's first event is in */
	uint64_t calls, returns, texts, raw;
	uint64_t overwritten, not_written; /* drops, from the kernel's counters */
	uint64_t warnings;
	char first_warning[240];
	uint64_t reads;
	uint64_t read_ns;		/* VMM time spent reading, all reads */
	uint64_t read_events_max;	/* the most events one read brought */

	/* The fill (kernel_fill.c): earlytrace's early calls written into
	 * the kernel's ring at the takeover. */
	bool fill_tried;
	uint64_t filled;	/* calls now in the kernel's ring */
	uint64_t fill_overrun;	/* the oldest, that did not fit it */
	uint64_t fill_no_ring;	/* calls of a vCPU the kernel had no ring for */
	uint64_t fill_readback_mismatches; /* read back other than written */
	char fill_skipped[240];	/* why the fill was not done, "" if it was (or untried) */
};

/*
 * Before the guest runs, while the kernel file's bytes and all its symbols
 * are still there: the ring layouts from the image's BTF and global_trace's
 * address. 0, or -1 with an error that says why the kernel cannot be
 * followed (no BTF, no global_trace symbol).
 */
int kernel_ring_prepare(struct kernel_ring *kr, const struct kernel_image *img,
			const struct symbols *syms, struct recorder *rec, struct vcpu *vcpu);

/* The kernel's own tracer takes over now: reading starts, through the
 * page tables the vCPU has at this moment (the kernel's own). */
int kernel_ring_start(struct kernel_ring *kr);

/* The same with another way to read and write the kernel's memory (tests). */
int kernel_ring_start_with(struct kernel_ring *kr, ftrace_read_fn read, ftrace_write_fn write,
			   void *ctx);

/*
 * Right after kernel_ring_start(), the vCPU still stopped: writes the early
 * calls kept in `early` (calls, and with `graph` returns, in the kernel's
 * function_graph format) into the kernel's ring, each into its vCPU's
 * ring, as the kernel's writer would have (vmm/ftrace/ring_fill.h), and
 * reads them back once so that later reads never hand them over again:
 * the trace file has them already. When the ring cannot take them, says
 * why in one line (stderr and the trace) and the run goes on as without.
 */
void kernel_ring_fill(struct kernel_ring *kr, const struct host_buffer *early, bool graph);

/* The kernel's events for one vCPU's early calls (and with graph,
 * returns), in time order: what kernel_ring_fill() writes. Their number
 * with *out allocated (free it), or -1 with an error. */
ssize_t kernel_fill_events(const struct host_buffer *early, uint32_t cpu, bool graph,
			   struct ftrace_fill_event **out);

/* Reads what the kernel recorded since the last read into the trace;
 * `final` for the last read of the run. Nothing before the takeover. */
void kernel_ring_read(struct kernel_ring *kr, bool final);

void kernel_ring_free(struct kernel_ring *kr);

#ifdef __cplusplus
}
#endif

#endif /* VMM_TRACE_KERNEL_RING_H */
