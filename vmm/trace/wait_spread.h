/* SPDX-License-Identifier: MIT */
/*
 * Where in a KVM_RUN a host wait fell. KVM reports a vCPU thread's waits
 * for a host CPU only at its next entry into the guest, as one sum; when
 * the guest recorded calls itself during that KVM_RUN (trampoline
 * batches, with no exit per call), the wait was somewhere between them.
 * The guest's TSC runs on while the thread waits, so a wait shows as a
 * gap between the guest's records longer than the run's usual gap: the
 * sum is spread over the gaps that stand out, each taking its excess over
 * the median gap, widest first (a host time slice is milliseconds, a gap
 * between traced calls microseconds). Pure: no VMM state.
 */
#ifndef VMM_TRACE_WAIT_SPREAD_H
#define VMM_TRACE_WAIT_SPREAD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct wait_piece {
	uint64_t tsc;	/* just before the first record after its gap */
	uint64_t ticks; /* of the wait, in guest TSC ticks */
};

/*
 * Spreads a wait of `ticks` known to lie in [lo, hi] (guest TSC) over the
 * gaps between the n records' TSCs (any order; sorted in place; those
 * outside [lo, hi] are ignored). Fills up to max pieces, in TSC order, and
 * returns their number; their ticks add up to at most `ticks`. A piece is
 * never longer than its gap's excess over the median gap; what no gap
 * shows (the wait was before the run's first entry into the guest, or in
 * more than max gaps) is left to the caller. Returns 0 without records in
 * [lo, hi]: nothing tells where the wait was.
 */
size_t wait_spread(uint64_t *tscs, size_t n, uint64_t lo, uint64_t hi, uint64_t ticks,
		   struct wait_piece *pieces, size_t max);

#ifdef __cplusplus
}
#endif

#endif /* VMM_TRACE_WAIT_SPREAD_H */
