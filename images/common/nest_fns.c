/* SPDX-License-Identifier: MIT */
/*
 * The traced functions of nest=<case> (nest.c): built with -pg like the
 * call tree, so each has an fentry site, and kept real calls (__traced_fn).
 * They do nothing: their records are what the cases count.
 */
#include "nest.h"

__traced_fn void nest_outer(void)
{
	__asm__ volatile("" : : : "memory");
}

__traced_fn void nest_inner(void)
{
	__asm__ volatile("" : : : "memory");
}

__traced_fn void nest_filler(void)
{
	__asm__ volatile("" : : : "memory");
}
