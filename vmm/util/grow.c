/* SPDX-License-Identifier: MIT */
#include "vmm/util/grow.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

void *array_grow(void *items, size_t *cap, size_t elem_size, size_t first)
{
	size_t n;
	void *bigger;

	if (*cap > SIZE_MAX / 2) {
		errno = ENOMEM;
		return NULL;
	}
	n = *cap ? *cap * 2 : first;
	if (n == 0 || elem_size == 0 || n > SIZE_MAX / elem_size) {
		errno = ENOMEM;
		return NULL;
	}
	bigger = realloc(items, n * elem_size);
	if (bigger)
		*cap = n;
	return bigger;
}
