/* SPDX-License-Identifier: MIT */
/* trace=ring: the test kernels take tracing over with guestlib. */
#ifndef IMAGES_TRACERING_H
#define IMAGES_TRACERING_H

#include <stdint.h>

/*
 * Runs the call tree untraced by the guest ("phase=early"), hands a ring in
 * .bss to the VMM (et_trace_start), runs it again while the guest records
 * every call itself ("phase=ring"), stops tracing and prints what the ring
 * holds. phys_offset is guest-physical minus virtual for the kernel image
 * (et_guest_init). See README.md, "trace=ring", for the lines it prints.
 */
void tracering_run(int64_t phys_offset);

#endif /* IMAGES_TRACERING_H */
