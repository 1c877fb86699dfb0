/* SPDX-License-Identifier: MIT */
/* TSC to nanoseconds for trace.dat readers (tracedat_clock.h). */
#include "vmm/report/tracedat/tracedat_clock.h"

void tracedat_clock_init(struct tracedat_clock *c, uint64_t tsc_khz)
{
	c->tsc_khz = tsc_khz;
	c->mult = 0;
	c->shift = 0;
	c->offset_ns = 0;
	if (!tsc_khz)
		return;
	/* ns per cycle = 10^6 / khz; mult = that << shift, rounded. */
	for (int shift = 32; shift >= 0; shift--) {
		unsigned __int128 m = (((unsigned __int128)1000000u << shift) + tsc_khz / 2) / tsc_khz;

		/* libtracecmd takes it as an int: 31 bits. */
		if (m && m <= INT32_MAX) {
			c->mult = (uint32_t)m;
			c->shift = (uint32_t)shift;
			return;
		}
	}
	/* Over 2 THz: no multiplier fits; readers show cycles. */
	c->tsc_khz = 0;
}

/* trace-cmd's mul_u64_u32_shr(), wrapping where it wraps. */
static uint64_t mul_shift(const struct tracedat_clock *c, uint64_t tsc)
{
	uint64_t lo = (uint32_t)tsc, hi = tsc >> 32, ns;

	ns = (lo * c->mult) >> c->shift;
	if (hi)
		ns += (hi * c->mult) << (32 - c->shift);
	return ns;
}

void tracedat_clock_anchor(struct tracedat_clock *c, uint64_t tsc)
{
	unsigned __int128 exact;

	if (!c->mult || tracedat_clock_wraps(c, tsc))
		return;
	exact = ((unsigned __int128)tsc * 1000000u + c->tsc_khz / 2) / c->tsc_khz;
	if (exact > INT64_MAX)
		return;
	/* Both below 2^63: the difference fits. */
	c->offset_ns = (int64_t)exact - (int64_t)mul_shift(c, tsc);
}

uint64_t tracedat_clock_ns(const struct tracedat_clock *c, uint64_t tsc)
{
	if (!c->mult)
		return tsc;
	return mul_shift(c, tsc) + (uint64_t)c->offset_ns;
}

bool tracedat_clock_wraps(const struct tracedat_clock *c, uint64_t tsc)
{
	__int128 ns;

	if (!c->mult)
		return false;
	if (((unsigned __int128)tsc * c->mult) >> c->shift > UINT64_MAX)
		return true;
	/* The offset, added in 64 bits too: a negative one (the rounding
	 * taken back at time zero) takes a TSC far before zero below 0. */
	ns = (__int128)mul_shift(c, tsc) + c->offset_ns;
	return ns < 0 || ns > (__int128)UINT64_MAX;
}
