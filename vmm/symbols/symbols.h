/* SPDX-License-Identifier: MIT */
/*
 * Where a kernel's symbols come from, in order of preference: the kernel's
 * own .symtab; a file given with --symbols (System.map, or an ELF with a
 * .symtab such as a -dbg vmlinux), refused when it does not match the
 * kernel; or kallsyms recovered from the image itself. Every source fills
 * the same sorted struct symtab, so lookups do not care which one it was.
 */
#ifndef VMM_SYMBOLS_SYMBOLS_H
#define VMM_SYMBOLS_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/loader/kernel_image.h"
#include "vmm/symbols/symtab.h"

#ifdef __cplusplus
extern "C" {
#endif

enum sym_source {
	SYM_SOURCE_NONE = 0,
	SYM_SOURCE_ELF_SYMTAB,	/* the kernel's own .symtab */
	SYM_SOURCE_FILE_ELF,	/* --symbols: another ELF's .symtab */
	SYM_SOURCE_SYSTEM_MAP,	/* --symbols: System.map text */
	SYM_SOURCE_KALLSYMS,	/* decoded from the image's kallsyms tables */
};

struct symbols {
	struct symtab tab;
	enum sym_source source;
	char desc[256];		   /* for reports: "System.map foo (1234 symbols)" */
	char *strings;		   /* owned name storage (System.map, kallsyms) */
	struct kernel_image *file; /* owned ELF given with --symbols */
};

/*
 * Picks the best source for img. symbols_path may be NULL; when given it is
 * always checked against the kernel (a mismatch is an error even if the
 * kernel has its own .symtab, so a wrong file never goes unnoticed).
 * A kernel without any source is an error naming what was tried.
 */
int symbols_load(struct symbols *syms, const struct kernel_image *img,
		 const char *symbols_path);
void symbols_free(struct symbols *syms);

/*
 * Keeps only the function symbols (text and untyped: what reports, crash
 * reports and breakpoints name) and copies their names into storage of
 * its own, so the kernel image and any --symbols file can be released.
 * Pointers to names obtained before are invalid afterwards. 0, or -1 with
 * an error (out of memory; the table is then unchanged).
 */
int symbols_keep_functions(struct symbols *syms);

const char *sym_source_name(enum sym_source source);

/* Address of a named symbol; 0 on success, -1 (no error recorded) if absent. */
int symbols_addr(const struct symbols *syms, const char *name, uint64_t *addr);

/* The individual sources; each fills syms (including source and desc). */
int symbols_from_system_map(struct symbols *syms, const char *path);
int symbols_parse_system_map(struct symbols *syms, const char *text, size_t len,
			     const char *name);
int symbols_from_elf_file(struct symbols *syms, const char *path);
int symbols_from_kallsyms(struct symbols *syms, const struct kernel_image *img);

/* Refuses syms (from --symbols) when it does not describe img; own is the
 * kernel's .symtab (may be empty). 0, or -1 with the reason. */
int symbols_check_match(const struct symbols *syms, const struct kernel_image *img,
			const struct symtab *own);

#ifdef __cplusplus
}
#endif

#endif /* VMM_SYMBOLS_SYMBOLS_H */
