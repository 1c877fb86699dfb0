/* SPDX-License-Identifier: MIT */
/* The boot sequence both test kernels share around their own phases. */
#ifndef IMAGES_BOOT_H
#define IMAGES_BOOT_H

#include <stdint.h>

#include "compiler.h"

/*
 * Prints the banner, checks start_info (exit status 3 if its magic is bad),
 * prints the command line, memory map and modules, applies the command line,
 * and carries out crash=... (which does not return). Must run while the
 * first 4 GiB are reachable at their physical addresses (see phys.h).
 */
void boot_begin(const char *arch, uint32_t start_info_pa);

/* Prints "done" and ends the run as the command line asked. */
__noreturn void boot_end(void);

#endif /* IMAGES_BOOT_H */
