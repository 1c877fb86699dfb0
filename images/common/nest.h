/* SPDX-License-Identifier: MIT */
/*
 * nest=<case>: a traced call nested inside the recording of another, at a
 * chosen instruction, to check that no record is lost or torn (x86_64;
 * images/README.md lists the cases and their lines).
 *
 * How the nesting is forced: the page the recording is about to store to
 * (or the page of the counter it reserves with) is made not-present, or
 * read-only, just before a traced call (nest_arm). The recording's store faults; the #PF
 * handler puts the page back and makes traced calls of its own, which
 * record while the interrupted recording waits half done; then the store
 * runs again and the recording finishes. A page fault is not masked by
 * cli, so it nests where an NMI would.
 */
#ifndef IMAGES_NEST_H
#define IMAGES_NEST_H

#include <stdint.h>

#include "compiler.h"

/* Traced calls a fault handler makes (nest.c). */
#define NEST_INNER_CALLS 3

/* Runs the case and ends the run. phys_offset is phys - virt for the
 * image, as for et_guest_init(). */
__noreturn void nest_run(const char *name, int64_t phys_offset);

/* The traced functions (nest_fns.c, built with -pg): each one's site is
 * where a recording happens. */
void nest_outer(void);
void nest_inner(void);
void nest_filler(void);

/* ---- the CPU side (x86_64/nest_cpu.c) ----------------------------------- */

/* Loads an IDT whose #PF handler calls on_fault (with the page already put
 * back) for faults on an armed page; any other page fault ends the run
 * with status 5. */
void nest_cpu_init(void (*on_fault)(void));

enum nest_arm {
	NEST_ABSENT,	/* the next access faults */
	NEST_READ_ONLY, /* the next write faults (a read-modify-write that is
			 * one instruction faults before it reads) */
};

/* The next access (or write) to the 4 KiB page holding addr faults, once. */
void nest_arm(const volatile void *addr, enum nest_arm how);

/* Faults taken on armed pages, and where the last one interrupted. */
extern volatile uint32_t nest_faults;
extern volatile uint64_t nest_fault_rip;

#endif /* IMAGES_NEST_H */
