/* SPDX-License-Identifier: MIT */
/*
 * Recovering a kernel's symbols from its own kallsyms tables, for stock
 * kernels shipped without a .symtab (CONFIG_KALLSYMS, ideally _ALL).
 *
 * scripts/kallsyms.c writes these arrays into .rodata, each label aligned
 * to the pointer size:
 *
 *   up to 6.3:  addresses | (offsets, relative_base), num_syms, names,
 *               markers, [seqs_of_names: 6.2, 6.3], token_table, token_index
 *   6.4 on:     num_syms, names, markers, token_table, token_index,
 *               addresses | (offsets, relative_base), seqs_of_names
 *
 * names holds one entry per symbol: a length byte (two bytes, 7 bits each,
 * when the first has bit 7 set: 6.1 on) and that many token numbers; each
 * token expands through token_index (256 u16 offsets) into token_table
 * (256 NUL-terminated strings). The first expanded character is nm's type
 * letter. markers gives the names offset of every 256th entry (u32, or
 * unsigned long in older kernels). With relative offsets and absolute
 * per-cpu symbols (x86-64 SMP), an offset >= 0 is an absolute address and
 * a negative one means relative_base - 1 - offset.
 *
 * Nothing here trusts the image: the tables are found by their shape and
 * cross-checked (token_index against token_table, markers against names,
 * addresses sorted) before any name is believed.
 */
#ifndef VMM_SYMBOLS_KALLSYMS_H
#define VMM_SYMBOLS_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/symbols/symbols.h"

#ifdef __cplusplus
extern "C" {
#endif

enum kallsyms_addr_mode {
	KALLSYMS_ABSOLUTE,	   /* kallsyms_addresses[] */
	KALLSYMS_RELATIVE,	   /* relative_base + (u32)offset */
	KALLSYMS_ABSOLUTE_PERCPU,  /* relative, negative offsets; x86-64 SMP */
};

/* Where the tables were found: byte offsets in the searched buffer. */
struct kallsyms_info {
	size_t token_table, token_index, markers, names, addresses;
	uint32_t nr_syms;
	unsigned marker_size;	/* 4 or 8 */
	bool new_order;		/* the 6.4+ order (addresses after token_index) */
	bool has_seqs;		/* seqs_of_names sits between markers and tokens */
	enum kallsyms_addr_mode mode;
	uint64_t relative_base;
};

/*
 * Finds and decodes kallsyms in data[0..size) (an image's bytes) for a
 * kernel whose pointers are ptr_bytes (4 or 8) wide. Fills syms with every
 * symbol, types included; info (may be NULL) says where the tables were.
 */
int kallsyms_decode(const uint8_t *data, size_t size, unsigned ptr_bytes,
		    struct symbols *syms, struct kallsyms_info *info);

const char *kallsyms_mode_name(enum kallsyms_addr_mode mode);

#ifdef __cplusplus
}
#endif

#endif /* VMM_SYMBOLS_KALLSYMS_H */
