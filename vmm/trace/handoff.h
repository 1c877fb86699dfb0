/* SPDX-License-Identifier: MIT */
/*
 * Handing tracing over to the guest, both ways a guest takes it:
 *  - a guest linked with guestlib (handoff.c) uses earlytrace's hypercall
 *    port (ET_PORT_HYPERCALL) to take over tracing into its own ring
 *    (ET_HC_HANDOFF: the VMM's early events are copied into the ring with
 *    their original timestamps; the ring is read while the guest runs, at
 *    the tracer's period, and at the end of the run), or into one ring per
 *    CPU (ET_HC_HANDOFF_PERCPU: each early event goes to its vCPU's ring,
 *    and ring i's events are recorded as vCPU i's)
 *    or to drop a marker in the trace (ET_HC_MARK);
 *  - a stock kernel (handoff_symbol.c) reaches its handoff symbol
 *    (ftrace_init): a hardware breakpoint there restores every site
 *    before ftrace looks at them.
 *    With --follow the kernel's own tracer takes over instead, and the
 *    blind window between the two is kept small: capture resumes when
 *    ftrace_init returns (at early_trace_init, over the nops ftrace made
 *    of the sites) and stops only when ftrace begins patching code
 *    (ftrace_arch_code_modify_prepare, which checks every site first);
 *    from then on the kernel's ring is read (vmm/trace/kernel_ring.h).
 * The tracer's capture stops and resumes through callbacks: the tracer
 * owns the sites. The guest is untrusted: every address, length and index it
 * hands over is checked against guest RAM and the ring's own size.
 */
#ifndef VMM_TRACE_HANDOFF_H
#define VMM_TRACE_HANDOFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trampolines/placement.h"
#include "vmm/kvm/vcpu.h"
#include "vmm/kvm/vm.h"
#include "vmm/symbols/symbols.h"
#include "vmm/trace/recorder.h"

struct flight_recorder;

#ifdef __cplusplus
extern "C" {
#endif

/* What the tracer does at a handoff. */
struct handoff_ops {
	/* Stops the VMM's capture and puts every site back; returns how
	 * many sites were patched. `how` names the handoff. */
	size_t (*stop_capture)(void *ctx, const char *how);
	/* --follow: capture again over what the sites hold now; returns how
	 * many sites were armed. */
	size_t (*resume_capture)(void *ctx);
	/* --follow: the kernel's own tracer has taken over. */
	void (*follow_start)(void *ctx);
	/* A guestlib ring was handed over: read it periodically from now on
	 * (handoff_read_guest_ring). */
	void (*guest_ring_start)(void *ctx);
};

struct handoff_config {
	struct vm *vm;		  /* its bus gets the hypercall port */
	struct vcpu *vcpu;	  /* its breakpoints watch the symbols */
	unsigned nr_vcpus;	  /* the machine's (0: one) */
	const struct symbols *syms;
	const char *symbol;	  /* the stock kernel's handoff symbol, or NULL */
	bool follow;		  /* --follow */
	struct recorder *rec;
	struct flight_recorder *fr;	 /* NULL: none */
	const struct trampolines *tramp; /* a ring may not lie in their region */
	const struct handoff_ops *ops;
	void *ctx;
};

enum follow_phase {
	FOLLOW_NONE,	 /* no --follow, or before the handoff symbol */
	FOLLOW_RESUMING, /* ftrace_init runs: capture resumes at its end */
	FOLLOW_CAPTURING, /* capture again, until ftrace patches code */
	FOLLOW_KERNEL,	 /* the kernel's ring is read */
};

/* A guest ring handed over, as the VMM keeps it (the guest may rewrite
 * the ring's header at any time: it is checked again at every read). */
struct guest_ring {
	uint64_t paddr, bytes;
	uint64_t next;	/* the index of the next record to read */
	uint32_t cpu;	/* the vCPU its guest records are recorded as */
	bool broken;	/* its header went bad: reading it stopped */
};

struct handoff {
	struct recorder *rec;
	unsigned nr_vcpus;	/* how many vCPUs may have a ring */
	struct flight_recorder *fr; /* NULL: none */
	const struct guest_mem *gm;
	const struct trampolines *tramp;
	const struct handoff_ops *ops;
	void *ctx;
	struct vcpu *vcpu;	/* the handoff symbol's breakpoint is on it */
	const char *symbol;	/* the stock kernel's handoff symbol, or NULL */
	bool done;		/* tracing was handed over */
	bool follow;
	/* --follow: where capture resumes, and where ftrace patches code
	 * (handoff_symbol.c). */
	enum follow_phase phase;
	uint64_t resume_addr, patch_addr;
	const char *patch_symbol;
	/* The guest's rings after a guestlib handoff: one, or one per CPU. */
	struct guest_ring rings[VM_MAX_VCPUS];
	unsigned nr_rings;
	/* Over all rings. */
	uint64_t guest_events, guest_lost;
	uint64_t guest_overwritten, guest_incomplete; /* guest_lost, by reason */
	uint64_t hypercalls, bad_hypercalls;
	char first_refusal[128]; /* why the first refused hypercall was */
};

/* Registers the hypercall port and, when the kernel has the handoff
 * symbol, a hardware breakpoint on it. With follow, the kernel must also
 * have the symbols the later phases need. 0, or -1 with an error. */
int handoff_attach(struct handoff *h, const struct handoff_config *cfg);

/* Appends what the guest recorded in its rings since the last read to the
 * trace file, and counts what each ring overwrote before it was read.
 * Other vCPUs may be writing their rings meanwhile: a record is taken
 * only if its completion mark (abi.h) holds before and after the copy.
 * While the guest runs (the vCPU stopped, !final) a record still being
 * written ends the read and is read next time; at the end of the run
 * (final) such records are counted as lost. Nothing when there was no
 * handoff. */
void handoff_read_guest_ring(struct handoff *h, bool final);

/* The guest TSCs of the complete records vCPU cpu's guest ring holds in
 * [lo, hi] that the VMM has not read yet: up to max into out; returns how
 * many there are. Reads nothing else (for placing a host wait between the
 * calls of the KVM_RUN that recorded them, host_waits.h). */
size_t handoff_guest_tscs(const struct handoff *h, unsigned cpu, uint64_t lo, uint64_t hi,
			  uint64_t *out, size_t max);

#ifdef __cplusplus
}
#endif

#endif /* VMM_TRACE_HANDOFF_H */
