/* SPDX-License-Identifier: MIT */
#include "trampolines/region.h"

#include <elf.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/insn.h"
#include "vmm/util/error.h"

#define MIN_REGION 4096 /* less holds too few records to be worth it */

struct alloc_section {
	uint64_t addr, size;
	uint64_t flags;
	const char *name;
};

/* True if every byte is the linker's fill: nobody uses them. */
static bool all_fill(const uint8_t *p, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (p[i] != X86_FILL_ZERO && p[i] != X86_FILL_INT3)
			return false;
	return true;
}

/* True if a symbol starts strictly inside (start, end): something lives
 * there. A label at start (like Linux's _etext) marks the end of what came
 * before. */
static bool symbol_inside(const struct symbols *syms, uint64_t start, uint64_t end)
{
	uint64_t off;
	const struct symbol *s = symtab_lookup(&syms->tab, end - 1, &off);

	return s && s->addr > start && s->addr < end;
}

/* Fills r if [vaddr, vaddr + size) is unused, initialized, executable
 * image memory; false otherwise. */
static bool usable(struct tramp_region *r, const struct kernel_image *img,
		   const struct symbols *syms, uint64_t vaddr, uint64_t size, const char *what)
{
	uint64_t paddr;
	uint32_t flags;
	const uint8_t *bytes;

	if (size < MIN_REGION)
		return false;
	bytes = kernel_image_vaddr_bytes(img, vaddr, size, &paddr, &flags);
	if (!bytes || !(flags & PF_X) || !all_fill(bytes, size) ||
	    symbol_inside(syms, vaddr, vaddr + size))
		return false;
	r->vaddr = vaddr;
	r->paddr = paddr;
	r->size = size;
	snprintf(r->desc, sizeof(r->desc), "%s (%" PRIu64 " KiB at 0x%" PRIx64 ")", what,
		 size >> 10, vaddr);
	return true;
}

static int compare_addr(const void *a, const void *b)
{
	const struct alloc_section *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The image's allocated, addressed sections sorted by address; NULL when
 * it has no section headers. */
static struct alloc_section *alloc_sections(const struct kernel_image *img, size_t *nr)
{
	Elf *elf = img->elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx, shnum, n = 0;
	struct alloc_section *secs;

	*nr = 0;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) || elf_getshdrnum(elf, &shnum) || !shnum)
		return NULL;
	secs = calloc(shnum, sizeof(*secs));
	if (!secs)
		return NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL && n < shnum) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) || !sh.sh_addr)
			continue;
		secs[n++] = (struct alloc_section){
			.addr = sh.sh_addr,
			.size = sh.sh_size,
			.flags = sh.sh_flags,
			.name = elf_strptr(elf, shstrndx, sh.sh_name),
		};
	}
	qsort(secs, n, sizeof(*secs), compare_addr);
	*nr = n;
	return secs;
}

int tramp_region_find(struct tramp_region *r, const struct kernel_image *img,
		      const struct symbols *syms)
{
	size_t n;
	struct alloc_section *secs = alloc_sections(img, &n);
	struct tramp_region best = { 0 };

	memset(r, 0, sizeof(*r));
	if (!secs)
		return et_error("no section headers to find room for trampolines in");
	for (size_t i = 0; i < n; i++) {
		const struct alloc_section *s = &secs[i];
		struct tramp_region cand;
		uint64_t end = s->addr + s->size;
		char what[96];

		if (s->name && !strcmp(s->name, TRAMP_REGION_SECTION)) {
			if (!usable(&cand, img, syms, s->addr, s->size,
				    "the guest's " TRAMP_REGION_SECTION " section")) {
				free(secs);
				return et_error("section %s is not unused executable memory of "
						"at least %d bytes",
						TRAMP_REGION_SECTION, MIN_REGION);
			}
			*r = cand;
			free(secs);
			return 0;
		}
		if (!(s->flags & SHF_EXECINSTR) || i + 1 == n || secs[i + 1].addr <= end)
			continue;
		snprintf(what, sizeof(what), "the gap between %s and %s", s->name ? s->name : "?",
			 secs[i + 1].name ? secs[i + 1].name : "?");
		if (usable(&cand, img, syms, end, secs[i + 1].addr - end, what) &&
		    cand.size > best.size)
			best = cand;
	}
	free(secs);
	if (!best.size)
		return et_error("no %s section and no unused gap of at least %d bytes after "
				"an executable section",
				TRAMP_REGION_SECTION, MIN_REGION);
	*r = best;
	return 0;
}
