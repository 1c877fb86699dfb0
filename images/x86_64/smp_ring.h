/* SPDX-License-Identifier: MIT */
/* smp=ring: the per-CPU call trees run after a per-CPU guestlib handoff
 * (smp_ring.c). */
#ifndef IMAGES_X86_64_SMP_RING_H
#define IMAGES_X86_64_SMP_RING_H

#include <stdint.h>

/*
 * Before any AP starts: gives each of nr_cpus CPUs a per-CPU slot for
 * guestlib's et_fentry_ring pointing at its own ring, sets this CPU's (CPU
 * `self`'s) GS base, hands the rings over (et_trace_start_percpu) and
 * prints "smp ring: handoff result=<r> cpus=<n> vmm_events=<n>
 * patched=<n>". Returns 0 when guest tracing runs.
 */
int smp_ring_start(unsigned nr_cpus, unsigned self);

/* CPU i's GS base (the start page hands it to the AP): 0 before
 * smp_ring_start or without it. */
uint64_t smp_ring_gs_base(unsigned cpu);

/*
 * Once every CPU is done: stops tracing and prints, per CPU, what its ring
 * holds of the two functions at root and leaf:
 * "smp ring cpu=<i> root=<n> leaf=<n> lost=<n> incomplete=<n>".
 */
void smp_ring_stop(uintptr_t root, uintptr_t leaf);

#endif
