/* SPDX-License-Identifier: MIT */
/* Finding a kernel's function-entry sites and verifying each one. */
#include "vmm/sites/sites.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "vmm/util/error.h"

/* More entries than this is not a kernel (Linux has well under 100k). */
#define MAX_SITES (1u << 22)

const char *site_reject_reason(enum site_reject reject)
{
	switch (reject) {
	case SITE_OK:
		return "ok";
	case SITE_REJECT_UNMAPPED:
		return "not inside the kernel's code";
	case SITE_REJECT_BYTES:
		return "bytes are neither a 5-byte nop nor a call";
	case SITE_REJECT_CALL_TARGET:
		return "a call, but not to __fentry__ or mcount";
	case SITE_REJECT_NO_SYMBOL:
		return "no function symbol contains it";
	case SITE_REJECT_NOT_ENTRY:
		return "not at a symbol's entry (an overridden __weak function left in the "
		       "text keeps its record but loses its symbol; ftrace skips these too)";
	case SITE_REJECT_DUPLICATE:
		return "recorded more than once";
	case SITE_REJECT_MAX:
		break;
	}
	return "?";
}

const char *site_reject_tag(enum site_reject reject)
{
	static const char *const tags[SITE_REJECT_MAX] = {
		[SITE_OK] = "ok",
		[SITE_REJECT_UNMAPPED] = "unmapped",
		[SITE_REJECT_BYTES] = "bad-bytes",
		[SITE_REJECT_CALL_TARGET] = "call-target",
		[SITE_REJECT_NO_SYMBOL] = "no-symbol",
		[SITE_REJECT_NOT_ENTRY] = "not-entry",
		[SITE_REJECT_DUPLICATE] = "duplicate",
	};

	return reject < SITE_REJECT_MAX ? tags[reject] : "?";
}

const char *site_kind_name(enum site_kind kind)
{
	return kind == SITE_KIND_NOP5 ? "nop5" : kind == SITE_KIND_CALL ? "call" : "-";
}

void sites_free(struct site_table *tab)
{
	free(tab->sites);
	memset(tab, 0, sizeof(*tab));
}

/* Reads a table of pointer-sized addresses into tab->sites[].vaddr. */
static int read_table(struct site_table *tab, const uint8_t *bytes, uint64_t size,
		      unsigned ptr, const char *what)
{
	if (size % ptr)
		return et_error("%s: %llu bytes is not a whole number of %u-byte entries", what,
				(unsigned long long)size, ptr);
	if (size / ptr > MAX_SITES)
		return et_error("%s: %llu entries is implausible", what,
				(unsigned long long)(size / ptr));
	tab->nr = size / ptr;
	tab->sites = calloc(tab->nr ? tab->nr : 1, sizeof(*tab->sites));
	if (!tab->sites)
		return et_error("out of memory");
	for (size_t i = 0; i < tab->nr; i++) {
		uint64_t v = 0;

		memcpy(&v, bytes + i * ptr, ptr); /* little-endian host and guest */
		tab->sites[i].vaddr = v;
	}
	return 0;
}

/* __mcount_loc through its bracketing symbols (which stripped kernels keep
 * in kallsyms), else through its section; then __patchable_function_entries. */
static int find_recorded(struct site_table *tab, const struct kernel_image *img,
			 const struct symbols *syms)
{
	unsigned ptr = img->elf_class / 8;
	uint64_t start, stop;
	struct kernel_section sh;

	if (!symbols_addr(syms, "__start_mcount_loc", &start) &&
	    !symbols_addr(syms, "__stop_mcount_loc", &stop)) {
		const uint8_t *bytes;

		if (stop < start)
			return et_error("__stop_mcount_loc 0x%llx is below __start_mcount_loc 0x%llx",
					(unsigned long long)stop, (unsigned long long)start);
		bytes = kernel_image_vaddr_bytes(img, start, stop - start, NULL, NULL);
		if (!bytes)
			return et_error("__mcount_loc table 0x%llx-0x%llx lies outside the image",
					(unsigned long long)start, (unsigned long long)stop);
		tab->origin = SITE_ORIGIN_MCOUNT_LOC;
		snprintf(tab->origin_desc, sizeof(tab->origin_desc),
			 "__mcount_loc (__start_mcount_loc..__stop_mcount_loc)");
		return read_table(tab, bytes, stop - start, ptr, "__mcount_loc");
	}
	for (int i = 0; i < 2; i++) {
		const char *name = i ? "__patchable_function_entries" : "__mcount_loc";

		if (!kernel_image_section(img, name, &sh) || sh.type != SHT_PROGBITS)
			continue;
		if (sh.offset > img->size || sh.size > img->size - sh.offset)
			return et_error("section %s extends past the end of the file", name);
		tab->origin = i ? SITE_ORIGIN_PATCHABLE : SITE_ORIGIN_MCOUNT_LOC;
		snprintf(tab->origin_desc, sizeof(tab->origin_desc), "section %s", name);
		return read_table(tab, img->data + sh.offset, sh.size, ptr, name);
	}
	return 1; /* nothing recorded */
}

/* No recorded sites: decode every function's entry and keep calls to the
 * tracer hook, as the build would have recorded them. */
static int scan_functions(struct site_table *tab, const struct kernel_image *img,
			  const struct symbols *syms, const uint64_t *targets, size_t nr_targets)
{
	arch_code_mode mode = arch_code_mode_of_elf(img->elf_class);
	struct arch_entry_scanner sc;
	size_t funcs = 0;

	if (!targets[0] && !targets[1])
		return et_error("no recorded sites (__mcount_loc, __patchable_function_entries) "
				"and no __fentry__ or mcount symbol to scan for");
	if (arch_entry_scanner_open(&sc, mode))
		return et_error("cannot open capstone");
	tab->sites = calloc(syms->tab.nr ? syms->tab.nr : 1, sizeof(*tab->sites));
	if (!tab->sites) {
		arch_entry_scanner_close(&sc);
		return et_error("out of memory");
	}
	for (size_t i = 0; i < syms->tab.nr; i++) {
		const struct symbol *s = &syms->tab.syms[i];
		uint32_t flags;
		uint64_t avail = 15, paddr;
		const uint8_t *code;
		size_t off;

		if (!symtab_is_text_type(s->type) || (i && s->addr == syms->tab.syms[i - 1].addr))
			continue;
		/* Up to endbr + a 15-byte instruction, fewer at a segment's end. */
		while (avail > ARCH_SITE_LEN &&
		       !kernel_image_vaddr_bytes(img, s->addr, avail + 4, &paddr, &flags))
			avail--;
		code = kernel_image_vaddr_bytes(img, s->addr, avail + 4, &paddr, &flags);
		if (!code || !(flags & PF_X))
			continue;
		funcs++;
		if (arch_scan_function_entry(&sc, code, avail + 4, s->addr, targets, nr_targets,
					    &off))
			tab->sites[tab->nr++].vaddr = s->addr + off;
	}
	arch_entry_scanner_close(&sc);
	tab->origin = SITE_ORIGIN_SCAN;
	snprintf(tab->origin_desc, sizeof(tab->origin_desc),
		 "capstone scan of %zu function entries", funcs);
	return 0;
}

static void verify(struct site *site, const struct kernel_image *img,
		   const struct symbols *syms, const uint64_t *targets, size_t nr_targets)
{
	arch_code_mode mode = arch_code_mode_of_elf(img->elf_class);
	const uint8_t *code, *entry;
	const struct symbol *sym;
	uint32_t flags = 0;

	code = kernel_image_vaddr_bytes(img, site->vaddr, ARCH_SITE_LEN, &site->paddr, &flags);
	if (!code || !(flags & PF_X)) {
		site->reject = SITE_REJECT_UNMAPPED;
		return;
	}
	sym = symtab_lookup(&syms->tab, site->vaddr, &site->offset);
	if (sym)
		site->name = sym->name;
	switch (arch_site_classify(code, site->vaddr, targets, nr_targets, mode)) {
	case ARCH_SITE_NOP:
		site->kind = SITE_KIND_NOP5;
		break;
	case ARCH_SITE_CALL:
		site->kind = SITE_KIND_CALL;
		break;
	case ARCH_SITE_CALL_ELSEWHERE:
		site->reject = SITE_REJECT_CALL_TARGET;
		return;
	case ARCH_SITE_OTHER:
		site->reject = SITE_REJECT_BYTES;
		return;
	}
	if (!sym) {
		site->reject = SITE_REJECT_NO_SYMBOL;
		return;
	}
	if (site->offset == 0)
		return;
	/* After an endbr64/endbr32 is the only other place a hook may sit. */
	entry = kernel_image_vaddr_bytes(img, sym->addr, site->offset, NULL, NULL);
	if (site->offset != 4 || !entry || arch_entry_landing_pad_len(entry, 4) != 4)
		site->reject = SITE_REJECT_NOT_ENTRY;
}

static int compare_vaddr(const void *a, const void *b)
{
	const struct site *x = a, *y = b;

	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

int sites_find(struct site_table *tab, const struct kernel_image *img,
	       const struct symbols *syms)
{
	uint64_t targets[2] = { 0, 0 };
	int ret;

	memset(tab, 0, sizeof(*tab));
	if (!arch_elf_machine_ok(img->machine))
		return et_error("sites: only x86 kernels are supported");
	symbols_addr(syms, "__fentry__", &targets[0]);
	symbols_addr(syms, "mcount", &targets[1]);
	ret = find_recorded(tab, img, syms);
	if (ret > 0)
		ret = scan_functions(tab, img, syms, targets, 2);
	if (ret < 0) {
		sites_free(tab);
		return -1;
	}
	if (tab->nr)
		qsort(tab->sites, tab->nr, sizeof(*tab->sites), compare_vaddr);
	for (size_t i = 0; i < tab->nr; i++) {
		struct site *s = &tab->sites[i];

		if (i && s->vaddr == tab->sites[i - 1].vaddr)
			s->reject = SITE_REJECT_DUPLICATE;
		else
			verify(s, img, syms, targets, 2);
		if (s->reject) {
			s->kind = SITE_KIND_NONE;
			tab->nr_rejected++;
		} else {
			tab->nr_verified++;
		}
		tab->rejects[s->reject]++;
	}
	return 0;
}
