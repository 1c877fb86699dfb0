/* SPDX-License-Identifier: MIT */
#include "vmm/trace/breakpoints.h"

#include <stdlib.h>
#include <string.h>

#include "arch/x86/insn.h"
#include "vmm/error.h"

/* The first byte of each site kind: nop5 is 0f 1f 44 00 00, a call e8. */
static uint8_t first_byte(enum site_kind kind)
{
	return kind == SITE_KIND_CALL ? 0xe8 : 0x0f;
}

static int compare_paddr(const void *a, const void *b)
{
	const struct bp_site *x = a, *y = b;

	return x->paddr < y->paddr ? -1 : x->paddr > y->paddr;
}

int breakpoints_init(struct breakpoints *bp, const struct site_table *tab)
{
	size_t n = 0;

	memset(bp, 0, sizeof(*bp));
	for (size_t i = 0; i < tab->nr; i++)
		n += tab->sites[i].selected && tab->sites[i].reject == SITE_OK;
	bp->sites = calloc(n ? n : 1, sizeof(*bp->sites));
	if (!bp->sites)
		return et_error("out of memory for %zu breakpoints", n);
	for (size_t i = 0; i < tab->nr; i++) {
		const struct site *s = &tab->sites[i];

		if (!s->selected || s->reject != SITE_OK)
			continue;
		bp->sites[bp->nr++] = (struct bp_site){
			.paddr = s->paddr,
			.vaddr = s->vaddr,
			.name = s->name,
			.orig = first_byte(s->kind),
		};
	}
	qsort(bp->sites, bp->nr, sizeof(*bp->sites), compare_paddr);
	return 0;
}

void breakpoints_free(struct breakpoints *bp)
{
	free(bp->sites);
	memset(bp, 0, sizeof(*bp));
}

void breakpoints_arm(struct breakpoints *bp, const struct guest_mem *gm)
{
	for (size_t i = 0; i < bp->nr; i++) {
		struct bp_site *s = &bp->sites[i];
		uint8_t *code = guest_mem_ptr(gm, s->paddr, SITE_LEN);

		if (!code || code[0] != s->orig) {
			bp->refused++;
			continue;
		}
		code[0] = X86_OPCODE_INT3;
		s->armed = true;
		bp->armed++;
	}
}

struct bp_site *breakpoints_find(struct breakpoints *bp, uint64_t paddr)
{
	size_t lo = 0, hi = bp->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (bp->sites[mid].paddr < paddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < bp->nr && bp->sites[lo].paddr == paddr ? &bp->sites[lo] : NULL;
}

void breakpoints_disarm(struct breakpoints *bp, struct bp_site *s, const struct guest_mem *gm)
{
	uint8_t *code;

	if (!s->armed)
		return;
	s->armed = false;
	bp->armed--;
	code = guest_mem_ptr(gm, s->paddr, 1);
	if (!code || code[0] != X86_OPCODE_INT3) {
		bp->modified_by_guest++;
		return;
	}
	code[0] = s->orig;
}

void breakpoints_disarm_all(struct breakpoints *bp, const struct guest_mem *gm)
{
	for (size_t i = 0; i < bp->nr; i++)
		breakpoints_disarm(bp, &bp->sites[i], gm);
}
