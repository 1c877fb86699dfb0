/* SPDX-License-Identifier: MIT */
/*
 * Trampoline mode, the tracer's side: which sites call a trampoline
 * instead of hitting an int3 (routing), and draining the batch the
 * trampolines fill into the recorder (on the drain port when the batch is
 * full, and before every event the VMM records itself, so the stream
 * stays in time order). The trampolines themselves are trampolines/.
 */
#ifndef VMM_TRACE_TRAMP_MODE_H
#define VMM_TRACE_TRAMP_MODE_H

#include <stdbool.h>
#include <stdint.h>

#include "trampolines/placement.h"
#include "vmm/trace/recorder.h"
#include "vmm/trace/site_patch.h"

struct machine;

#ifdef __cplusplus
extern "C" {
#endif

enum trace_mode {
	TRACE_MODE_AUTO,       /* trampolines where possible, else breakpoints */
	TRACE_MODE_INT3,       /* breakpoints only */
	TRACE_MODE_TRAMPOLINE, /* trampolines; an error if the guest has no room */
};

int trace_mode_parse(const char *text, enum trace_mode *mode);

struct tramp_mode {
	struct trampolines tramp; /* vCPU 0's batch, and the region's owner */
	/* --cpus N: the drain's views of vCPU 1..N-1's batches (N - 1). */
	struct trampolines *more;
	unsigned nr_more;
	struct site_patches *patches;
	struct recorder *rec;
	const struct guest_mem *gm;
	struct vcpu *boot_vcpu; /* whose page tables name sites run at an alias */
	unsigned cpu;		/* the vCPU whose batch is being drained */
	bool oneshot;
	bool placed;		/* the trampolines were installed at attach */
	uint64_t events;	/* calls drained */
	uint64_t unknown_ip;	/* drained records naming no site */
	uint64_t corrupt;	/* drains that found the batch overwritten */
	struct exit_charge drain_charge; /* the drain exits the guest asked for */
};

/*
 * Places the trampolines and routes every site that can reach them
 * (before the guest runs). In int3 mode, or when the kernel has no room
 * and mode is auto, does nothing (a note says why): the sites keep their
 * int3. 0, or -1 with an error (trampoline mode without room, no memory).
 */
int tramp_mode_attach(struct tramp_mode *tm, enum trace_mode mode, struct machine *m,
		      struct site_patches *patches, struct recorder *rec, bool oneshot,
		      uint64_t batch_events);

/*
 * Makes site s call the trampolines (its own oneshot slot when oneshot).
 * False when it cannot: the site's physical-to-virtual offset differs from
 * the region's (a rel32 would not reach it in every phase), it is out of
 * rel32 reach, or the slots ran out; s then stays an int3.
 */
bool tramp_route_site(struct trampolines *tr, struct patched_site *s, bool oneshot,
		      const struct guest_mem *gm);

/* Moves the calls in the batch into the recorder and empties it: the
 * batch of the vCPU whose exit this is, every batch when called outside a
 * vCPU's run (after the run, when all are stopped). */
void tramp_mode_drain(struct tramp_mode *tm);
/* Every vCPU's batch (the run is over, or tracing stops). */
void tramp_mode_drain_all(struct tramp_mode *tm);
/* Records reserved and never completed, in every batch. */
unsigned tramp_mode_pending(const struct tramp_mode *tm);
/* The same when the VMM is about to record an event of its own and the
 * batch holds calls made before it (or --max-events must shrink it). */
void tramp_mode_drain_before_event(struct tramp_mode *tm);

/* vCPU cpu's batch cursor in guest memory, which moves with every call
 * the trampolines record on that vCPU (the hang watchdog watches each);
 * NULL when it has none. */
const volatile uint64_t *tramp_mode_progress(struct tramp_mode *tm, unsigned cpu);

/* The guest TSCs of the calls vCPU cpu's batch holds in [lo, hi] (not yet
 * drained): up to max into out; returns how many there are. For placing
 * a host wait in the KVM_RUN that recorded them (host_waits.h). tm is a
 * struct tramp_mode. */
size_t tramp_mode_batch_tscs(void *tm, unsigned cpu, uint64_t lo, uint64_t hi, uint64_t *out,
			     size_t max);

/* Puts the region's own bytes back (once no site calls it). */
void tramp_mode_detach(struct tramp_mode *tm);
/* Capture resumes (--follow): the trampolines go back into their region
 * with an empty batch (oneshot slots are not rewritten: false then, and
 * the caller gives those sites int3s). True when sites may call them. */
bool tramp_mode_reattach(struct tramp_mode *tm);
void tramp_mode_free(struct tramp_mode *tm);

#ifdef __cplusplus
}
#endif

#endif /* VMM_TRACE_TRAMP_MODE_H */
