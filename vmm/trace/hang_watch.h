/* SPDX-License-Identifier: MIT */
/*
 * The hang watchdog's decision, apart from its thread (hang_watchdog.c)
 * and from KVM: per vCPU a progress value (the events recorded from it,
 * its trampoline batch's cursor) and a shared one (progress no vCPU can
 * be named for: the guest ring's head). Any change is progress. The run hangs when no
 * vCPU and nothing shared has moved for the timeout; then each vCPU's
 * quiet time says which were stuck and for how long.
 */
#ifndef VMM_TRACE_HANG_WATCH_H
#define VMM_TRACE_HANG_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct hang_watch {
	unsigned nr_cpus;
	double timeout_s;
	bool primed;	     /* a first sample has set the baseline */
	uint64_t *last;	     /* per vCPU: the value last seen */
	double *since;	     /* per vCPU: when it last changed (or the start) */
	bool *moved;	     /* per vCPU: it changed at least once */
	uint64_t shared_last;
	double shared_since;
	uint64_t *values;    /* nr_cpus: the caller's scratch for one sample */
};

/* 0, or -1 with an error (out of memory). */
int hang_watch_init(struct hang_watch *hw, unsigned nr_cpus, double timeout_s);
void hang_watch_free(struct hang_watch *hw);

/* One look at time `now` (seconds, monotonic): values[i] is vCPU i's
 * progress value. True once nothing moved for timeout_s. */
bool hang_watch_sample(struct hang_watch *hw, const uint64_t *values, uint64_t shared,
		       double now);

/* How long vCPU cpu had not moved at `now`. */
double hang_watch_quiet_s(const struct hang_watch *hw, unsigned cpu, double now);
/* Whether vCPU cpu moved at all since the first sample. */
bool hang_watch_ever_moved(const struct hang_watch *hw, unsigned cpu);

#ifdef __cplusplus
}
#endif

#endif /* VMM_TRACE_HANG_WATCH_H */
