/* SPDX-License-Identifier: MIT */
/*
 * The lines that report what the loader handed over (memory map, modules),
 * shared by the PVH and Linux boot protocol readers so both print exactly
 * the same format.
 */
#ifndef IMAGES_REPORT_H
#define IMAGES_REPORT_H

#include <stdint.h>

/* "memmap: <n> entries" */
void report_memmap_count(uint32_t n);
/* "memmap <addr-hex> <size-hex> <type>" */
void report_memmap_entry(uint64_t addr, uint64_t size, uint32_t type);
/* "modules: <n>" */
void report_modules_count(uint32_t n);
/* "module <paddr-hex> <size-hex> first=<text>": the module's first 16 bytes,
 * nonprintables as '.', or "(unreachable)" if they are out of reach. */
void report_module(uint64_t paddr, uint64_t size);

#endif /* IMAGES_REPORT_H */
