/* SPDX-License-Identifier: MIT */
/*
 * Handing tracing over to the guest, both ways a guest takes it:
 *  - a guest linked with guestlib uses earlytrace's hypercall port
 *    (ET_PORT_HYPERCALL) to take over tracing into its own ring
 *    (ET_HC_HANDOFF: the VMM's early events are copied into the ring with
 *    their original timestamps; the ring is read at the end of the run)
 *    or to drop a marker in the trace (ET_HC_MARK);
 *  - a stock kernel reaches its handoff symbol (ftrace_init): a hardware
 *    breakpoint there restores every site before ftrace looks at them.
 * Either way the tracer's capture stops (a callback: the tracer owns the
 * sites). The guest is untrusted: every address, length and index it
 * hands over is checked against guest RAM and the ring's own size.
 */
#ifndef VMM_TRACE_HANDOFF_H
#define VMM_TRACE_HANDOFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trampolines/placement.h"
#include "vmm/kvm/vcpu.h"
#include "vmm/symbols/symbols.h"
#include "vmm/trace/recorder.h"

struct flight_recorder;

#ifdef __cplusplus
extern "C" {
#endif

/* Stops the VMM's capture and puts every site back; returns how many
 * sites were patched. `how` names the handoff. */
typedef size_t (*handoff_stop_fn)(void *ctx, const char *how);

struct handoff {
	struct recorder *rec;
	struct flight_recorder *fr; /* NULL: none */
	const struct guest_mem *gm;
	const struct trampolines *tramp; /* a ring may not lie in their region */
	handoff_stop_fn stop_capture;
	void *stop_ctx;
	const char *symbol;	/* the stock kernel's handoff symbol, or NULL */
	bool done;		/* tracing was handed over */
	/* The guest ring after a guestlib handoff. */
	uint64_t ring_paddr, ring_bytes, ring_vmm_events;
	uint64_t guest_events, guest_lost;
	uint64_t hypercalls, bad_hypercalls;
	char first_refusal[128]; /* why the first refused hypercall was */
};

/* Registers the hypercall port on vm's bus and, when syms has `symbol`
 * (NULL: none), a hardware breakpoint on it in vcpu. 0, or -1 with an
 * error. */
int handoff_attach(struct handoff *h, struct vm *vm, struct vcpu *vcpu,
		   const struct symbols *syms, const char *symbol, struct recorder *rec,
		   struct flight_recorder *fr, const struct trampolines *tramp,
		   handoff_stop_fn stop_capture, void *ctx);

/* After the run: appends what the guest recorded in its ring to the trace
 * file, and counts what it lost. Nothing when there was no handoff. */
void handoff_collect_guest_ring(struct handoff *h);

#ifdef __cplusplus
}
#endif

#endif /* VMM_TRACE_HANDOFF_H */
