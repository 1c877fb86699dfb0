/* SPDX-License-Identifier: MIT */
/*
 * --graph: function exits, as ftrace's function_graph tracer sees them,
 * in breakpoint mode. At each traced call (its int3) the VMM swaps the
 * return address on the guest's stack for the address of a return
 * breakpoint, an int3 it places in the trampoline region (memory in the
 * kernel image nothing uses, mapped wherever the kernel's code runs), and
 * keeps the real return address, and where it was, on a shadow stack in
 * host memory, which the guest never sees. When the function returns it
 * lands on that int3: the VMM records the return, pops the frame and
 * resumes the guest at the real return address. Frames the guest skipped
 * (a longjmp past them) are popped as "unwound" when an outer one
 * returns. At the handoff, and whenever capture stops, every frame still
 * on the stack gets its real return address back (where our address is
 * still there) and the region its own byte, so the guest runs on as if
 * nothing had been there.
 *
 * While a traced function runs, its return address on the stack is the
 * return breakpoint's: code that reads its own return address (an
 * unwinder, __builtin_return_address) sees that, as with ftrace's
 * return_to_handler.
 *
 * With several vCPUs each frame carries its vCPU: a return matches, and
 * unwinds, only the frames of the vCPU it runs on (their stacks are
 * distinct memory, but a return on one must never end another's frames).
 */
#ifndef VMM_TRACE_GRAPH_H
#define VMM_TRACE_GRAPH_H

#include <linux/kvm.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"
#include "vmm/loader/kernel_image.h"
#include "vmm/symbols/symbols.h"

struct recorder;
struct vcpu;

struct graph_frame {
	uint64_t func;	     /* the traced function's entry (its site) */
	uint64_t ret;	     /* the real return address */
	uint64_t bp;	     /* what we wrote instead: the return breakpoint */
	uint64_t slot;	     /* the stack slot, as a linear address */
	uint64_t slot_paddr; /* and in guest-physical memory */
	uint64_t call_tsc;
	unsigned word;	     /* 8 or 4 bytes */
	unsigned cpu;	     /* the vCPU that made the call */
};

#define GRAPH_MAX_DEPTH 65536 /* deeper calls are recorded without returns */

struct graph {
	bool enabled;
	struct recorder *rec;	/* returns are recorded here */
	const struct guest_mem *gm;
	uint64_t bp_paddr;   /* the return breakpoint's int3 */
	uint64_t bp_virt_offset; /* its region's vaddr - paddr */
	uint8_t saved;	     /* the byte the int3 replaced */
	bool installed;
	bool stale;	     /* frames no longer describe the guest's stack */
	struct graph_frame *frames; /* the shadow stack; [nr - 1] innermost */
	size_t nr, cap;
	uint64_t returns;    /* returns recorded */
	uint64_t unwound;    /* frames popped without their own return */
	uint64_t not_redirected; /* calls recorded without a return */
	uint64_t restored, not_restored; /* frames handed back at the end of capture */
};

/* Places the return breakpoint in the kernel's trampoline region (no-op
 * unless enabled). 0, or -1 with an error. */
int graph_attach(struct graph *g, bool enabled, const struct kernel_image *img,
		 const struct symbols *syms, const struct guest_mem *gm, struct recorder *rec);

/* At a traced call's int3 (rip at the site): swaps the return address.
 * True when the return will be recorded (flag the call so). */
bool graph_on_call(struct graph *g, unsigned cpu, uint64_t func, const struct kvm_regs *regs,
		   const struct kvm_sregs *sregs, const struct arch_paging *pg, uint64_t tsc);

/* At an int3 that is no site: true when it was the return breakpoint
 * (the return is recorded and regs point the guest at the real return
 * address; the caller sets them). */
bool graph_on_return(struct graph *g, struct vcpu *vcpu, struct kvm_regs *regs,
		     const struct kvm_sregs *sregs, const struct arch_paging *pg);

/* Capture stops: every frame gets its real return address back, the
 * region its byte. The frames are kept for the flight recorder unless
 * this is a handoff (the guest runs on; they go stale). */
void graph_detach(struct graph *g, bool handoff);
/* Capture resumes (--follow): the return breakpoint goes back in, with
 * an empty shadow stack. 0, or -1 with an error. */
int graph_reattach(struct graph *g);

void graph_free(struct graph *g);

#endif /* VMM_TRACE_GRAPH_H */
