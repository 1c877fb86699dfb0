/* SPDX-License-Identifier: MIT */
/*
 * Symbols from another ELF file (e.g. the vmlinux of a -dbg package).
 */
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/symbols/symbols.h"
#include "vmm/util/error.h"

int symbols_from_elf_file(struct symbols *syms, const char *path)
{
	memset(syms, 0, sizeof(*syms));
	syms->file = calloc(1, sizeof(*syms->file));
	if (!syms->file)
		return et_error("out of memory");
	if (kernel_image_open(syms->file, path)) {
		free(syms->file);
		syms->file = NULL;
		return -1;
	}
	if (symtab_from_elf(&syms->tab, syms->file)) {
		symbols_free(syms);
		return -1;
	}
	if (syms->tab.nr == 0) {
		symbols_free(syms);
		return et_error("%s: ELF file has no .symtab to take symbols from", path);
	}
	syms->source = SYM_SOURCE_FILE_ELF;
	snprintf(syms->desc, sizeof(syms->desc), ".symtab of %s (%zu symbols)", path,
		 syms->tab.nr);
	return 0;
}
