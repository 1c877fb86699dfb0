/* SPDX-License-Identifier: MIT */
/*
 * The trace.dat clock. Event timestamps stay the raw guest TSC (trace
 * clock "x86-tsc", as a kernel booted with trace_clock=x86-tsc records);
 * the TSC2NSEC option tells readers how to turn them into nanoseconds:
 *
 *	ns = ((tsc * mult) >> shift) + offset_ns
 *
 * where trace-cmd computes the product in two 32-bit halves
 * (mul_u64_u32_shr), so shift is at most 32, and reads mult as a signed
 * int that it widens with its sign, so mult stays below 2^31 (one at or
 * above it made every time wrong: a TSC under 2 GHz had one), and adds
 * offset_ns from the OFFSET option (the TSC2NSEC option has an offset
 * field too, but libtracecmd 3.1.6 reads and ignores it, so it stays 0).
 * A 31-bit multiplier is exact to 1 part in 2^30 to 2^31 for a TSC up
 * to 4 GHz: small, but applied to the raw TSC, which counts from the
 * host's boot, it grows to microseconds within hours; offset_ns takes
 * up that rounding at the trace's time zero (tracedat_clock_anchor), so
 * readers show the TSC's own time, exact there and off only by the
 * rounding of the time since.
 */
#ifndef VMM_REPORT_TRACEDAT_TRACEDAT_CLOCK_H
#define VMM_REPORT_TRACEDAT_TRACEDAT_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tracedat_clock {
	uint64_t tsc_khz; /* 0: unknown; readers then show raw cycles */
	uint32_t mult;	  /* 0 when tsc_khz is 0 */
	uint32_t shift;
	int64_t offset_ns; /* added after the conversion (tracedat_clock_anchor) */
};

/* mult and shift for tsc_khz: the largest shift (up to 32) whose
 * rounded multiplier still fits in 31 bits. */
void tracedat_clock_init(struct tracedat_clock *c, uint64_t tsc_khz);

/*
 * Makes the conversion exact at tsc (the trace's time zero): offset_ns
 * takes up the multiplier's rounding there. Without it the rounding grows
 * with the TSC's own age (the host's uptime: about 1.6 us after 4 hours
 * of a TSC under 2 GHz, past a microsecond-precise reader's tolerance);
 * with it only the time since tsc carries the error (a few ns a second).
 * Nothing when the frequency is unknown or tsc's time would wrap.
 */
void tracedat_clock_anchor(struct tracedat_clock *c, uint64_t tsc);

/* A TSC in nanoseconds exactly as libtracecmd computes it (the raw TSC
 * when the frequency is unknown). */
uint64_t tracedat_clock_ns(const struct tracedat_clock *c, uint64_t tsc);

/* Whether libtracecmd's conversion of tsc wraps: its time in ns is past
 * 2^64 (some 584 years of TSC) or, with the offset, below 0 (a TSC before
 * time zero by more than the offset's few ns of rounding), so readers
 * show it at a wrong time. Never with the frequency unknown. */
bool tracedat_clock_wraps(const struct tracedat_clock *c, uint64_t tsc);

#ifdef __cplusplus
}
#endif

#endif /* VMM_REPORT_TRACEDAT_TRACEDAT_CLOCK_H */
