/* SPDX-License-Identifier: MIT */
/*
 * Patching the selected sites, and putting them back. Each site gets one
 * of two patches, written into guest memory before the guest's first
 * instruction:
 *   int3         breakpoint mode: an int3 over the site's first byte; each
 *                call is a VM exit (vmm/trace/tracer.c records it);
 *   call rel32   trampoline mode: `call <trampoline>` over the whole site;
 *                the trampoline records the call in guest memory
 *                (trampolines/).
 * ftrace's rule holds in both directions: a site is patched only if its
 * bytes are what the kernel image says, and restored only if our patch is
 * still there (or the site's own bytes are back: a oneshot trampoline
 * restores its site itself); anything else is counted and left alone.
 */
#ifndef VMM_TRACE_SITE_PATCH_H
#define VMM_TRACE_SITE_PATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"
#include "vmm/loader/kernel_image.h"
#include "vmm/mem/guest_mem.h"
#include "vmm/sites/sites.h"

#ifdef __cplusplus
extern "C" {
#endif

enum patch_kind { PATCH_INT3, PATCH_CALL };

struct patched_site {
	uint64_t paddr;	  /* where the patch goes */
	uint64_t vaddr;	  /* the site as the kernel runs it */
	uint8_t orig[ARCH_SITE_LEN];	 /* the image's bytes */
	uint8_t patch[ARCH_SITE_LEN]; /* what we write over them */
	enum patch_kind kind;
	bool armed;	  /* our patch is in guest memory */
	uint64_t hits;
};

struct site_patches {
	struct patched_site *sites; /* sorted by paddr */
	size_t nr;
	size_t armed;
	size_t nr_int3, nr_call;  /* armed at the start, by kind */
	size_t refused;		  /* not patched: bytes differed from the image */
	size_t modified_by_guest; /* not restored: neither our patch nor the original */
	size_t rearm_refused;	  /* not re-armed: neither the original nor the nop */
};

/* Collects the selected, verified sites of tab, with their bytes from img;
 * every site starts as an int3 patch. */
int site_patches_init(struct site_patches *sp, const struct site_table *tab,
		      const struct kernel_image *img);
void site_patches_free(struct site_patches *sp);

/* Makes s an int3 patch again (how every site starts). */
void site_patch_set_int3(struct patched_site *s);

/* Removes the sites still patched with int3 (no trampoline reaches them)
 * from sp, before any is armed: they stay as the kernel built them, on a
 * KVM that does not report int3s. Returns how many. */
size_t site_patches_drop_int3(struct site_patches *sp);

/* Makes s a `call target` (both virtual, as the site runs). False if the
 * target is out of rel32 reach; s keeps its int3 patch then. */
bool site_patch_set_call(struct patched_site *s, uint64_t target);

/* Writes every site's patch; sites whose bytes in guest memory are not the
 * image's are refused (counted, never patched). */
void site_patches_arm(struct site_patches *sp, const struct guest_mem *gm);

/*
 * Arms again every site that is not armed (after a stop), over what the
 * site holds now: its original bytes, or the 5-byte nop the kernel's
 * ftrace made of a `call __fentry__` (which becomes the site's original
 * from then on). Sites holding anything else are counted in
 * rearm_refused; with skip_hit, sites that recorded a call stay as they
 * are (oneshot). Returns how many were armed.
 */
size_t site_patches_rearm(struct site_patches *sp, const struct guest_mem *gm, bool skip_hit);

/* The site patched at paddr, or NULL. */
struct patched_site *site_patches_find(struct site_patches *sp, uint64_t paddr);

/* Restores one site (only if our patch is still there; a site already back
 * to its own bytes is fine) / all armed sites. */
void site_patches_disarm(struct site_patches *sp, struct patched_site *s,
			 const struct guest_mem *gm);
void site_patches_disarm_all(struct site_patches *sp, const struct guest_mem *gm);

/* Marks s as restored by the guest's trampoline (oneshot) without touching
 * guest memory. */
void site_patches_forget(struct site_patches *sp, struct patched_site *s);

#ifdef __cplusplus
}
#endif

#endif /* VMM_TRACE_SITE_PATCH_H */
