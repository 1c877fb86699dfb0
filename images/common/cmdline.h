/* SPDX-License-Identifier: MIT */
/* The test kernels' command-line knobs (space-separated words). */
#ifndef IMAGES_CMDLINE_H
#define IMAGES_CMDLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reset.h"

enum crash_mode {
	CRASH_NONE,
	CRASH_TRIPLE,	/* crash=triple: triple fault after the banner */
	CRASH_HLT,	/* crash=hlt: cli; hlt forever */
	CRASH_PANIC,	/* crash=panic: call panic(), which reboots like panic=-1 */
	CRASH_PANIC_HANG, /* crash=panic-hang: panic() that waits forever, like panic=0 */
	CRASH_HANG_LOOP, /* crash=hang-loop: spin forever in a traced function, no exits */
	CRASH_INTERNAL,	/* crash=internal: an instruction KVM cannot emulate, on MMIO */
};

struct boot_opts {
	uint32_t exit_status;	/* exit=N, written to the debug-exit port */
	enum crash_mode crash;
	enum reset_method reset; /* reset=<method> (or reboot=kbd): reset the
				  * machine instead of the debug exit */
	bool trace_ring;	/* trace=ring: take tracing over with guestlib */
	bool end_spin;		/* end=spin: after "done", spin instead of exiting */
	bool regcheck;		/* regcheck: check registers survive a site */
	bool smp;		/* smp: start the other CPUs, each runs its own
				 * call tree (x86_64, x86_64/smp.c) */
	bool smp_crash;		/* smp=crash: and CPU 1 then crashes */
	bool smp_ring;		/* smp=ring: the trees run after a per-CPU
				 * guestlib handoff (x86_64/smp_ring.c) */
	bool smp_race;		/* smp=race: then every CPU calls the
				 * race_fn_* at the same time */
	bool smp_busy;		/* smp=busy: CPU 1 then calls pc_leaf
				 * for ever */
	bool smp_only;		/* smp=only: no call-tree phase after
				 * (benchmarks) */
	uint32_t repeat;	/* repeat=N: each phase runs the call tree N times */
	bool exit_sequence;	/* exits=sequence: scripted port/MMIO/MSR accesses */
	char hostile[24];	/* hostile=<case>: misbehave towards the VMM (x86_64,
				 * common/hostile.c); "" when not asked */
	char nest[24];		/* nest=<case>: a traced call nested in a recording
				 * (x86_64, common/nest.c); "" when not asked */
};

/* Parses at most max bytes of s (stops at NUL). Unknown words are ignored,
 * as a kernel ignores parameters that are not its own. */
void cmdline_parse(const char *s, size_t max, struct boot_opts *opts);

#endif /* IMAGES_CMDLINE_H */
