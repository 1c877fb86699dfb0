/* SPDX-License-Identifier: MIT */
#include "vmm/symbols/symtab.h"

#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/util/error.h"
#include "vmm/util/sorted.h"

static int compare_addr(const void *a, const void *b)
{
	const struct symbol *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Among aliases prefer the sized one, then the name with fewer
	 * leading underscores (foo over __foo), then a stable name order. */
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	if (strspn(x->name, "_") != strspn(y->name, "_"))
		return strspn(x->name, "_") < strspn(y->name, "_") ? -1 : 1;
	return strcmp(x->name, y->name);
}

void symtab_sort(struct symtab *tab)
{
	if (tab->nr)
		qsort(tab->syms, tab->nr, sizeof(*tab->syms), compare_addr);
}

const struct symbol *symtab_find(const struct symtab *tab, const char *name)
{
	for (size_t i = 0; i < tab->nr; i++)
		if (!strcmp(tab->syms[i].name, name))
			return &tab->syms[i];
	return NULL;
}

/* nm's letter for an ELF symbol: functions are text, the rest unknown. */
static char elf_type_letter(const GElf_Sym *sym)
{
	if (GELF_ST_TYPE(sym->st_info) != STT_FUNC)
		return 0;
	return GELF_ST_BIND(sym->st_info) == STB_LOCAL ? 't' : 'T';
}

static bool wanted(const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);

	return sym->st_shndx != SHN_UNDEF && sym->st_shndx != SHN_ABS &&
	       (type == STT_FUNC || type == STT_NOTYPE);
}

int symtab_from_elf(struct symtab *tab, const struct kernel_image *img)
{
	Elf *elf = img->elf;
	Elf_Scn *scn = NULL;

	memset(tab, 0, sizeof(*tab));
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t count;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			return et_error("%s: unreadable .symtab: %s", img->name, elf_errmsg(-1));
		count = data->d_size / sh.sh_entsize;
		tab->syms = calloc(count ? count : 1, sizeof(*tab->syms));
		if (!tab->syms)
			return et_error("out of memory");
		for (size_t i = 0; i < count; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, (int)i, &sym) || !wanted(&sym))
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
			tab->syms[tab->nr++] = (struct symbol){ sym.st_value, sym.st_size, name,
								elf_type_letter(&sym) };
		}
		break;
	}
	symtab_sort(tab);
	return 0;
}

void symtab_free(struct symtab *tab)
{
	free(tab->syms);
	memset(tab, 0, sizeof(*tab));
}

static bool symbol_below(const void *sym, const void *addr)
{
	return ((const struct symbol *)sym)->addr < *(const uint64_t *)addr;
}

static bool symbol_at_or_below(const void *sym, const void *addr)
{
	return ((const struct symbol *)sym)->addr <= *(const uint64_t *)addr;
}

size_t symtab_first_at(const struct symtab *tab, uint64_t addr)
{
	return sorted_partition_point(tab->syms, tab->nr, sizeof(*tab->syms), &addr,
				      symbol_below);
}

const struct symbol *symtab_lookup(const struct symtab *tab, uint64_t addr, uint64_t *offset)
{
	/* Just past the last symbol with address <= addr. */
	size_t above = sorted_partition_point(tab->syms, tab->nr, sizeof(*tab->syms), &addr,
					      symbol_at_or_below);
	const struct symbol *s;

	if (above == 0)
		return NULL;
	s = &tab->syms[above - 1];
	/* Walk back over zero-sized aliases at the same address to the sized one. */
	while (s > tab->syms && (s - 1)->addr == s->addr)
		s--;
	if (s->size && addr - s->addr >= s->size)
		return NULL;
	if (offset)
		*offset = addr - s->addr;
	return s;
}

const char *symtab_format(const struct symtab *tab, uint64_t addr, char *buf, size_t len)
{
	uint64_t off;
	const struct symbol *s = symtab_lookup(tab, addr, &off);

	if (!s)
		return NULL;
	snprintf(buf, len, "%s+0x%llx", s->name, (unsigned long long)off);
	return buf;
}
