/* SPDX-License-Identifier: MIT */
/* A deterministic call tree whose call counts tracing tests check. */
#ifndef IMAGES_CALLTREE_H
#define IMAGES_CALLTREE_H

#include <stdint.h>

/*
 * Resets the counters, runs the tree once and prints one line per function,
 * "calltree phase=<phase> fn=<name> calls=<n>", then
 * "calltree phase=<phase> total=<n>". See calltree.c for the expected counts.
 */
void calltree_run(const char *phase);

/*
 * The ct_* functions by index (0 .. CALLTREE_NR_FNS - 1), in the order the
 * calltree lines print them: their names, and their entry addresses (where
 * their fentry site is, so a traced ip equals one of these), for tracers in
 * the kernel that want to count calls per function.
 */
#define CALLTREE_NR_FNS 4
const char *calltree_fn_name(unsigned i);
uintptr_t calltree_fn_addr(unsigned i);

#endif /* IMAGES_CALLTREE_H */
