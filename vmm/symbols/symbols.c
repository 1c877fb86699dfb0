/* SPDX-License-Identifier: MIT */
/* Choosing a symbol source and refusing files that describe another kernel. */
#include "vmm/symbols/symbols.h"

#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/util/error.h"

const char *sym_source_name(enum sym_source source)
{
	switch (source) {
	case SYM_SOURCE_NONE:
		return "none";
	case SYM_SOURCE_ELF_SYMTAB:
		return "kernel .symtab";
	case SYM_SOURCE_FILE_ELF:
		return "--symbols ELF .symtab";
	case SYM_SOURCE_SYSTEM_MAP:
		return "--symbols System.map";
	case SYM_SOURCE_KALLSYMS:
		return "kallsyms";
	}
	return "?";
}

void symbols_free(struct symbols *syms)
{
	symtab_free(&syms->tab);
	free(syms->strings);
	if (syms->file) {
		kernel_image_close(syms->file);
		free(syms->file);
	}
	memset(syms, 0, sizeof(*syms));
}

int symbols_keep_functions(struct symbols *syms)
{
	struct symtab *tab = &syms->tab;
	size_t bytes = 0, n = 0;
	char *strings, *p;

	for (size_t i = 0; i < tab->nr; i++)
		if (!tab->syms[i].type || symtab_is_text_type(tab->syms[i].type))
			bytes += strlen(tab->syms[i].name) + 1;
	strings = malloc(bytes ? bytes : 1);
	if (!strings)
		return et_error("out of memory keeping %zu bytes of symbol names", bytes);
	p = strings;
	for (size_t i = 0; i < tab->nr; i++) {
		struct symbol s = tab->syms[i];
		size_t len;

		if (s.type && !symtab_is_text_type(s.type))
			continue;
		len = strlen(s.name) + 1;
		memcpy(p, s.name, len);
		s.name = p;
		p += len;
		tab->syms[n++] = s; /* order kept: the table stays sorted */
	}
	tab->nr = n;
	if (n) {
		struct symbol *fit = realloc(tab->syms, n * sizeof(*tab->syms));

		if (fit)
			tab->syms = fit;
	}
	free(syms->strings);
	syms->strings = strings;
	if (syms->file) {
		kernel_image_close(syms->file);
		free(syms->file);
		syms->file = NULL;
	}
	return 0;
}

int symbols_addr(const struct symbols *syms, const char *name, uint64_t *addr)
{
	const struct symbol *s = symtab_find(&syms->tab, name);

	if (!s)
		return -1;
	*addr = s->addr;
	return 0;
}

static bool is_elf_file(const char *path)
{
	/* Not blocking on a FIFO: what is not a regular file is refused by
	 * the System.map reader, with the reason. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	char magic[4] = { 0 };
	struct stat st;
	bool elf;

	if (fd < 0)
		return false;
	elf = !fstat(fd, &st) && S_ISREG(st.st_mode) && read(fd, magic, 4) == 4 &&
	      !memcmp(magic, ELFMAG, SELFMAG);
	close(fd);
	return elf;
}

/* The lowest virtual address of an executable segment: where _text is. */
static bool text_start(const struct kernel_image *img, uint64_t *start)
{
	bool found = false;

	for (unsigned i = 0; i < img->nr_segments; i++) {
		const struct kernel_segment *seg = &img->segments[i];

		if ((seg->flags & PF_X) && (!found || seg->vaddr < *start)) {
			*start = seg->vaddr;
			found = true;
		}
	}
	return found;
}

static bool has_name_at(const struct symtab *tab, const char *name, uint64_t addr)
{
	for (size_t i = symtab_first_at(tab, addr); i < tab->nr && tab->syms[i].addr == addr; i++)
		if (!strcmp(tab->syms[i].name, name))
			return true;
	return false;
}

int symbols_check_match(const struct symbols *syms, const struct kernel_image *img,
			const struct symtab *own)
{
	uint8_t id_k[64], id_s[64];
	size_t len_k, len_s, checked = 0, agree = 0;
	uint64_t a, b, lo = 0;
	struct kernel_section mcount;

	/* The build-id settles it whenever both carry one. */
	if (syms->file && !kernel_image_build_id(img, id_k, &len_k) &&
	    !kernel_image_build_id(syms->file, id_s, &len_s)) {
		if (len_k != len_s || memcmp(id_k, id_s, len_k))
			return et_error("%s does not match the kernel: build-ids differ",
					syms->desc);
		return 0;
	}
	/* Start of text: _text, _stext and startup_64 all sit there on Linux. */
	if (text_start(img, &lo)) {
		static const char *const anchors[] = { "_text", "startup_64", "startup_32" };

		for (size_t i = 0; i < sizeof(anchors) / sizeof(anchors[0]); i++) {
			if (symbols_addr(syms, anchors[i], &a))
				continue;
			if (a != lo && !(own->nr && has_name_at(own, anchors[i], a)))
				return et_error("%s does not match the kernel: %s is at 0x%llx, but "
						"the kernel's text starts at 0x%llx", syms->desc,
						anchors[i], (unsigned long long)a,
						(unsigned long long)lo);
			checked++;
			agree++;
		}
	}
	/* The mcount table, where the image still has its section. */
	if (!symbols_addr(syms, "__start_mcount_loc", &a) &&
	    !symbols_addr(syms, "__stop_mcount_loc", &b) &&
	    kernel_image_section(img, "__mcount_loc", &mcount)) {
		if (a != mcount.addr || b != mcount.addr + mcount.size)
			return et_error("%s does not match the kernel: __mcount_loc is 0x%llx-0x%llx "
					"in the kernel but 0x%llx-0x%llx in the symbols", syms->desc,
					(unsigned long long)mcount.addr,
					(unsigned long long)(mcount.addr + mcount.size),
					(unsigned long long)a, (unsigned long long)b);
		checked++;
		agree++;
	}
	/* Function symbols the kernel names itself must be at the same places. */
	if (own->nr) {
		size_t funcs = 0, same = 0;

		for (size_t i = 0; i < syms->tab.nr; i++) {
			const struct symbol *s = &syms->tab.syms[i];

			if (!symtab_is_text_type(s->type) || !symtab_find(own, s->name))
				continue;
			funcs++;
			same += has_name_at(own, s->name, s->addr);
		}
		/* Static functions may share a name; a few misses are tolerated. */
		if (funcs && same * 100 < funcs * 95)
			return et_error("%s does not match the kernel: only %zu of %zu functions "
					"are at the kernel's addresses", syms->desc, same, funcs);
		checked += funcs;
		agree += same;
	}
	if (!checked)
		return et_error("%s: cannot confirm it matches the kernel (no build-id, and none "
				"of _text, startup_64, __start_mcount_loc or the kernel's own "
				"functions to compare)", syms->desc);
	return 0;
}

static int load_file(struct symbols *syms, const char *path)
{
	if (is_elf_file(path))
		return symbols_from_elf_file(syms, path);
	return symbols_from_system_map(syms, path);
}

int symbols_load(struct symbols *syms, const struct kernel_image *img,
		 const char *symbols_path)
{
	struct symbols own;

	memset(syms, 0, sizeof(*syms));
	memset(&own, 0, sizeof(own));
	if (symtab_from_elf(&own.tab, img))
		return -1;
	own.source = SYM_SOURCE_ELF_SYMTAB;
	snprintf(own.desc, sizeof(own.desc), "kernel .symtab (%zu symbols)", own.tab.nr);

	if (symbols_path) {
		if (load_file(syms, symbols_path) ||
		    symbols_check_match(syms, img, &own.tab)) {
			symbols_free(syms);
			symbols_free(&own);
			return -1;
		}
		/* The kernel's own table is preferred; the file only had to agree. */
		if (!own.tab.nr)
			return 0;
		symbols_free(syms);
		*syms = own;
		return 0;
	}
	if (own.tab.nr) {
		*syms = own;
		return 0;
	}
	symbols_free(&own);
	if (symbols_from_kallsyms(syms, img))
		return et_error_prefix("no symbols: no .symtab, no --symbols, and no kallsyms");
	return 0;
}
