/* SPDX-License-Identifier: MIT */
#include "vmm/trace/site_patch.h"

#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "vmm/util/error.h"
#include "vmm/util/sorted.h"

static int compare_paddr(const void *a, const void *b)
{
	const struct patched_site *x = a, *y = b;

	return x->paddr < y->paddr ? -1 : x->paddr > y->paddr;
}

void site_patch_set_int3(struct patched_site *s)
{
	memcpy(s->patch, s->orig, ARCH_SITE_LEN);
	s->patch[0] = ARCH_BREAKPOINT_INSN;
	s->kind = PATCH_INT3;
}

int site_patches_init(struct site_patches *sp, const struct site_table *tab,
		      const struct kernel_image *img)
{
	size_t n = 0;

	memset(sp, 0, sizeof(*sp));
	for (size_t i = 0; i < tab->nr; i++)
		n += tab->sites[i].selected && tab->sites[i].reject == SITE_OK;
	sp->sites = calloc(n ? n : 1, sizeof(*sp->sites));
	if (!sp->sites)
		return et_error("out of memory for %zu sites", n);
	for (size_t i = 0; i < tab->nr; i++) {
		const struct site *s = &tab->sites[i];
		const uint8_t *bytes;
		struct patched_site *p;

		if (!s->selected || s->reject != SITE_OK)
			continue;
		/* Verified sites lie in the image's initialized bytes. */
		bytes = kernel_image_vaddr_bytes(img, s->vaddr, ARCH_SITE_LEN, NULL, NULL);
		if (!bytes)
			continue;
		p = &sp->sites[sp->nr++];
		*p = (struct patched_site){ .paddr = s->paddr, .vaddr = s->vaddr };
		memcpy(p->orig, bytes, ARCH_SITE_LEN);
		site_patch_set_int3(p);
	}
	qsort(sp->sites, sp->nr, sizeof(*sp->sites), compare_paddr);
	return 0;
}

void site_patches_free(struct site_patches *sp)
{
	free(sp->sites);
	memset(sp, 0, sizeof(*sp));
}

size_t site_patches_drop_int3(struct site_patches *sp)
{
	size_t kept = 0, dropped;

	for (size_t i = 0; i < sp->nr; i++)
		if (sp->sites[i].kind != PATCH_INT3)
			sp->sites[kept++] = sp->sites[i]; /* order (by paddr) kept */
	dropped = sp->nr - kept;
	sp->nr = kept;
	return dropped;
}

bool site_patch_set_call(struct patched_site *s, uint64_t target)
{
	if (!arch_encode_site_call(s->patch, s->vaddr, target))
		return false;
	s->kind = PATCH_CALL;
	return true;
}

void site_patches_arm(struct site_patches *sp, const struct guest_mem *gm)
{
	for (size_t i = 0; i < sp->nr; i++) {
		struct patched_site *s = &sp->sites[i];
		uint8_t *code = guest_mem_ptr(gm, s->paddr, ARCH_SITE_LEN);

		if (!code || memcmp(code, s->orig, ARCH_SITE_LEN)) {
			sp->refused++;
			continue;
		}
		memcpy(code, s->patch, ARCH_SITE_LEN);
		s->armed = true;
		sp->armed++;
		if (s->kind == PATCH_INT3)
			sp->nr_int3++;
		else
			sp->nr_call++;
	}
}

size_t site_patches_rearm(struct site_patches *sp, const struct guest_mem *gm, bool skip_hit)
{
	size_t armed = 0;

	for (size_t i = 0; i < sp->nr; i++) {
		struct patched_site *s = &sp->sites[i];
		uint8_t *code = guest_mem_ptr(gm, s->paddr, ARCH_SITE_LEN);

		if (s->armed || (skip_hit && s->hits))
			continue;
		/* The kernel's ftrace turns every `call __fentry__` into the
		 * 5-byte nop: those are the site's own bytes from now on. */
		if (code && memcmp(code, s->orig, ARCH_SITE_LEN) &&
		    !memcmp(code, arch_site_nop, ARCH_SITE_LEN)) {
			memcpy(s->orig, arch_site_nop, ARCH_SITE_LEN);
			if (s->kind == PATCH_INT3)
				site_patch_set_int3(s);
		}
		if (!code || memcmp(code, s->orig, ARCH_SITE_LEN)) {
			sp->rearm_refused++;
			continue;
		}
		memcpy(code, s->patch, ARCH_SITE_LEN);
		s->armed = true;
		sp->armed++;
		armed++;
	}
	return armed;
}

static bool paddr_below(const void *site, const void *paddr)
{
	return ((const struct patched_site *)site)->paddr < *(const uint64_t *)paddr;
}

struct patched_site *site_patches_find(struct site_patches *sp, uint64_t paddr)
{
	size_t i = sorted_partition_point(sp->sites, sp->nr, sizeof(*sp->sites), &paddr,
					  paddr_below);

	return i < sp->nr && sp->sites[i].paddr == paddr ? &sp->sites[i] : NULL;
}

void site_patches_forget(struct site_patches *sp, struct patched_site *s)
{
	if (!s->armed)
		return;
	s->armed = false;
	sp->armed--;
}

void site_patches_disarm(struct site_patches *sp, struct patched_site *s,
			 const struct guest_mem *gm)
{
	uint8_t *code;

	if (!s->armed)
		return;
	site_patches_forget(sp, s);
	code = guest_mem_ptr(gm, s->paddr, ARCH_SITE_LEN);
	if (code && !memcmp(code, s->patch, ARCH_SITE_LEN))
		memcpy(code, s->orig, ARCH_SITE_LEN);
	else if (!code || memcmp(code, s->orig, ARCH_SITE_LEN))
		sp->modified_by_guest++;
}

void site_patches_disarm_all(struct site_patches *sp, const struct guest_mem *gm)
{
	for (size_t i = 0; i < sp->nr; i++)
		site_patches_disarm(sp, &sp->sites[i], gm);
}
