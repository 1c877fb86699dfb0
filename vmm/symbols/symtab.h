/* SPDX-License-Identifier: MIT */
/*
 * Kernel symbols: a table sorted by address, looked up by binary search.
 * Names point into the kernel image, which must outlive the table.
 */
#ifndef VMM_SYMBOLS_SYMTAB_H
#define VMM_SYMBOLS_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/loader/kernel_image.h"

#ifdef __cplusplus
extern "C" {
#endif

struct symbol {
	uint64_t addr;
	uint64_t size; /* 0 when the source does not say */
	const char *name;
	char type;     /* nm's letter ('T', 't', 'D', ...), 0 when unknown */
};

struct symtab {
	struct symbol *syms;
	size_t nr;
};

/* Collects function and text symbols from the image's .symtab. A kernel
 * without one gives an empty table, not an error. */
int symtab_from_elf(struct symtab *tab, const struct kernel_image *img);
void symtab_free(struct symtab *tab);

/* The symbol containing addr (the nearest one at or below it, within its
 * size when known), or NULL; *offset gets addr - symbol address. */
const struct symbol *symtab_lookup(const struct symtab *tab, uint64_t addr, uint64_t *offset);
/* The index of the first symbol at or above addr (nr if none): aliases at
 * one address follow it. */
size_t symtab_first_at(const struct symtab *tab, uint64_t addr);

/* "name+0xoff" into buf; returns buf, or NULL when nothing matches. */
const char *symtab_format(const struct symtab *tab, uint64_t addr, char *buf, size_t len);

/* Sorts an assembled table by address (aliases: sized first, then the name
 * with fewer leading underscores, as kallsyms prefers). */
void symtab_sort(struct symtab *tab);

/* The first symbol called name (a linear scan: for the few anchors a
 * command needs, not for hot paths), or NULL. */
const struct symbol *symtab_find(const struct symtab *tab, const char *name);

/* True for nm's text letters (t, T, W on functions), used to count and
 * name functions from sources that only give a letter. */
static inline int symtab_is_text_type(char type)
{
	return type == 't' || type == 'T';
}

#ifdef __cplusplus
}
#endif

#endif /* VMM_SYMBOLS_SYMTAB_H */
