/* SPDX-License-Identifier: MIT */
/*
 * The trampoline region both test kernels reserve for a tracing VMM
 * (guestlib.h, ET_TRAMPOLINE_REGION). kernel.ld places it in the text
 * PT_LOAD right after .text, so it is file-backed zeroes the VMM can fill
 * before our first instruction (.bss would be zeroed by entry.S afterwards),
 * and it is mapped writable and executable wherever the text runs: see
 * kernel.ld. Nothing in the kernel refers to it. Built without -pg like
 * guestlib: it holds no code of ours.
 */
#include <earlytrace/guestlib.h>

#define TRAMPOLINE_AREA_SIZE (64u << 10)

ET_TRAMPOLINE_REGION(et_trampoline_area, TRAMPOLINE_AREA_SIZE);
