/* SPDX-License-Identifier: MIT */
/* Reading and reporting the PVH struct hvm_start_info. */
#ifndef IMAGES_START_INFO_H
#define IMAGES_START_INFO_H

#include <stddef.h>
#include <stdint.h>

#include <earlytrace/xen_pvh.h>

/* Longest command line we read; Linux/x86 allows 2048 bytes. */
#define START_INFO_CMDLINE_MAX 4096

/* The start_info at physical address pa, or NULL if it is out of reach or
 * its magic is wrong. */
const struct hvm_start_info *start_info_get(uint32_t pa);

/* The command line (at most START_INFO_CMDLINE_MAX bytes, maybe without a
 * NUL within them), or "" if there is none. */
const char *start_info_cmdline(const struct hvm_start_info *si);

/* "memmap: <n> entries", then "memmap <addr> <size> <type>" per entry. */
void start_info_print_memmap(const struct hvm_start_info *si);

/* "modules: <n>", then "module <paddr> <size> first=<text>" per module. */
void start_info_print_modules(const struct hvm_start_info *si);

#endif /* IMAGES_START_INFO_H */
