/* SPDX-License-Identifier: MIT */
/*
 * Growing an array by doubling, written once for every list the VMM
 * appends to (the I/O bus's ranges, a report's open calls, a reader's
 * notes, ...):
 *
 *	if (nr == cap) {
 *		struct thing *p = array_grow(v, &cap, sizeof(*p), 64);
 *
 *		if (!p)
 *			return et_error("out of memory");
 *		v = p;
 *	}
 *	v[nr++] = thing;
 *
 * The caller keeps its own count, its own error message and any limit of
 * its own; the helper owns the arithmetic, so no size can overflow.
 */
#ifndef VMM_UTIL_GROW_H
#define VMM_UTIL_GROW_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* items (NULL when *cap is 0) holds *cap elements of elem_size bytes.
 * Returns it reallocated to hold twice *cap elements, or `first` when *cap
 * is 0, and sets *cap to that. NULL when memory runs out or the new size
 * would not fit a size_t (or would be 0): then items and *cap are as they
 * were, and items is still the caller's to free. */
void *array_grow(void *items, size_t *cap, size_t elem_size, size_t first);

#ifdef __cplusplus
}
#endif

#endif /* VMM_UTIL_GROW_H */
