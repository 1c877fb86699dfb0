/* SPDX-License-Identifier: MIT */
/* The boot sequence both test kernels share around their own phases. */
#ifndef IMAGES_BOOT_H
#define IMAGES_BOOT_H

#include <stdint.h>

#include "cmdline.h"
#include "compiler.h"

/* How the kernel was entered, and so what the loader's pointer points to. */
enum boot_proto {
	BOOT_PROTO_PVH,		/* 32-bit PVH entry: struct hvm_start_info */
	BOOT_PROTO_LINUX64,	/* Linux 64-bit boot protocol: struct boot_params */
};

/*
 * Prints the banner and "boot: <pvh|linux64>", checks the structure at
 * info_pa (exit status 3 if its magic is bad), prints the command line,
 * memory map and modules, applies the command line, and carries out
 * crash=... (which does not return). Must run while the first 4 GiB are
 * reachable at their physical addresses (see phys.h).
 */
void boot_begin(const char *arch, enum boot_proto proto, uint64_t info_pa);

/* The command line as boot_begin() parsed it. */
const struct boot_opts *boot_options(void);

/* Prints "done" and ends the run as the command line asked. */
__noreturn void boot_end(void);

#endif /* IMAGES_BOOT_H */
