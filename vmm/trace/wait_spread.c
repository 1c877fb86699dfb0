/* SPDX-License-Identifier: MIT */
#include "vmm/trace/wait_spread.h"

#include <stdlib.h>

#include "vmm/util/sorted.h"

struct gap {
	uint64_t len, taken;
	size_t next; /* the record after it (n: the end of the run) */
};

static int widest_first(const void *a, const void *b)
{
	const struct gap *x = a, *y = b;

	return x->len > y->len ? -1 : x->len < y->len;
}

static int earliest_first(const void *a, const void *b)
{
	const struct wait_piece *x = a, *y = b;

	return x->tsc < y->tsc ? -1 : x->tsc > y->tsc;
}

size_t wait_spread(uint64_t *tscs, size_t n, uint64_t lo, uint64_t hi, uint64_t ticks,
		   struct wait_piece *pieces, size_t max)
{
	size_t m = 0, nr, out = 0;
	struct gap *g;
	uint64_t median, left;

	for (size_t i = 0; i < n; i++)
		if (tscs[i] >= lo && tscs[i] <= hi)
			tscs[m++] = tscs[i];
	if (!m || !ticks || !max || hi < lo)
		return 0;
	qsort(tscs, m, sizeof(*tscs), sorted_compare_u64);
	nr = m + 1; /* before the first record, between each two, after the last */
	g = malloc(nr * sizeof(*g));
	if (!g)
		return 0;
	for (size_t k = 0; k < nr; k++) {
		uint64_t from = k ? tscs[k - 1] : lo, to = k < m ? tscs[k] : hi;

		g[k] = (struct gap){ .len = to - from, .next = k };
	}
	qsort(g, nr, sizeof(*g), widest_first);
	median = g[nr / 2].len; /* the lower median, counted from the widest */
	/* Each gap, widest first, takes what it stands out by over the usual
	 * one; a gap that does not stand out shows no wait. The gaps that
	 * took some are the first ones, most taken first (all take their
	 * whole excess, which shrinks with the width, but the last). */
	left = ticks;
	for (size_t i = 0; i < nr && left && g[i].len > median; i++) {
		g[i].taken = g[i].len - median < left ? g[i].len - median : left;
		left -= g[i].taken;
	}
	for (size_t i = 0; i < nr && out < max && g[i].taken; i++)
		pieces[out++] = (struct wait_piece){
			.tsc = g[i].next < m ? tscs[g[i].next] - 1 : hi,
			.ticks = g[i].taken,
		};
	free(g);
	qsort(pieces, out, sizeof(*pieces), earliest_first);
	return out;
}
