/* SPDX-License-Identifier: MIT */
/*
 * Binary search over a sorted array, written once for every table the VMM
 * searches (symbols, sites, site patches, the I/O bus's ranges); and the
 * one qsort() comparison of plain u64 values.
 *
 * The caller says where to stop with before(elem, key): true for every
 * element that comes before the place looked for and false from there on,
 * which a sorted array guarantees for a test on its sort key. "elem < key"
 * finds the first element not below key (C++'s lower_bound, then check
 * for equality to find an exact match), "elem <= key" the first one above
 * it (upper_bound; the one before it is the last at or below key).
 */
#ifndef VMM_UTIL_SORTED_H
#define VMM_UTIL_SORTED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef bool (*sorted_before_fn)(const void *elem, const void *key);

/* The index of the first of base's n elements (each size bytes) for which
 * before(elem, key) is false; n when it holds for all of them. Inline, so
 * that the compiler can inline before() too where it is a known function. */
static inline size_t sorted_partition_point(const void *base, size_t n, size_t size,
					    const void *key, sorted_before_fn before)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (before((const char *)base + mid * size, key))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* qsort()'s comparison for an array of uint64_t, ascending. */
static inline int sorted_compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

#ifdef __cplusplus
}
#endif

#endif /* VMM_UTIL_SORTED_H */
