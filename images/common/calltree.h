/* SPDX-License-Identifier: MIT */
/* A deterministic call tree whose call counts tracing tests check. */
#ifndef IMAGES_CALLTREE_H
#define IMAGES_CALLTREE_H

/*
 * Resets the counters, runs the tree once and prints one line per function,
 * "calltree phase=<phase> fn=<name> calls=<n>", then
 * "calltree phase=<phase> total=<n>". See calltree.c for the expected counts.
 */
void calltree_run(const char *phase);

#endif /* IMAGES_CALLTREE_H */
