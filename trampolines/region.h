/* SPDX-License-Identifier: MIT */
/*
 * Where trampolines may live in a guest: memory inside the kernel image
 * that nothing else uses, executable and mapped wherever the image's code
 * runs (before paging at its physical address, after it at its virtual
 * one), and within rel32 reach of the sites. In order of preference:
 *   1. the region the guest reserves for us: a section named
 *      .earlytrace.trampolines (guestlib's ET_TRAMPOLINE_REGION);
 *   2. the largest gap between an executable section and the next
 *      allocated section inside one executable PT_LOAD, such as Linux's
 *      padding between the end of .text (_etext) and .rodata (aligned to
 *      2 MiB): every byte of it must be the linker's fill (0x00 or 0xcc),
 *      and no symbol may lie inside it.
 * Linux maps its whole image [_text, _end) from startup_64 on and only
 * frees the .text/.rodata gap in free_initmem(), long after ftrace_init.
 */
#ifndef TRAMPOLINES_REGION_H
#define TRAMPOLINES_REGION_H

#include <stdint.h>

#include "vmm/loader/kernel_image.h"
#include "vmm/symbols/symbols.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TRAMP_REGION_SECTION ".earlytrace.trampolines"

struct tramp_region {
	uint64_t vaddr, paddr, size;
	char desc[128]; /* for messages and the trace file */
};

/* 0 and *r, or -1 with an error that says why no region fits. */
int tramp_region_find(struct tramp_region *r, const struct kernel_image *img,
		      const struct symbols *syms);

#ifdef __cplusplus
}
#endif

#endif /* TRAMPOLINES_REGION_H */
