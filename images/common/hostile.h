/* SPDX-License-Identifier: MIT */
/*
 * hostile=<case>: the x86_64 test kernel misbehaves towards the VMM on
 * purpose, so tests can check that earlytrace keeps running or stops with
 * a clear message, and never reads or writes host memory outside guest
 * RAM. Each case prints "hostile: <case> ..." lines a test can check and
 * ends through boot_end() ("done", the debug exit), unless the point is a
 * crash. images/README.md lists the cases and what each line means;
 * docs/reliability.md says what the VMM does about each.
 *
 * The call tree (common/calltree.c) runs around each misbehaviour, so a
 * test tracing ct_* knows exactly how many calls the VMM must have seen.
 */
#ifndef IMAGES_HOSTILE_H
#define IMAGES_HOSTILE_H

#include <stdint.h>

#include "compiler.h"

/* Guest RAM the cases assume (the tests pass --mem 32M): addresses at and
 * past its end are outside RAM. */
#define HOSTILE_RAM_SIZE (32u << 20)

/*
 * Runs the case `name` (unknown names print "hostile: unknown case") and
 * ends the run. phys_offset is phys - virt for the kernel image, as for
 * et_guest_init().
 */
__noreturn void hostile_run(const char *name, int64_t phys_offset);

/* The cases that play with the CPU, per architecture (x86_64/hostile_cpu.c). */
void hostile_pt_loop(void);
void hostile_pt_outside(void);
void hostile_seg_base(void);

/* Shared with the page-table cases. */
void hostile_line(const char *what);
void hostile_hex_line(const char *what, uint64_t v);

#endif /* IMAGES_HOSTILE_H */
