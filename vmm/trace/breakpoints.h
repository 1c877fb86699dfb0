/* SPDX-License-Identifier: MIT */
/*
 * Breakpoint-mode patching: an int3 over the first byte of every selected
 * site, written into guest memory before the guest's first instruction,
 * and restored at handoff. ftrace's rule holds in both directions: a site
 * is patched only if its bytes are what the kernel image says, and
 * restored only if our int3 is still there; anything else is counted and
 * left alone.
 */
#ifndef VMM_TRACE_BREAKPOINTS_H
#define VMM_TRACE_BREAKPOINTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/guest_mem.h"
#include "vmm/sites/sites.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SITE_LEN 5 /* every site is one 5-byte instruction */

struct bp_site {
	uint64_t paddr;	  /* where the int3 goes */
	uint64_t vaddr;	  /* the function entry as the kernel runs it */
	const char *name;
	uint8_t orig;	  /* the byte the int3 replaced */
	bool armed;
	uint64_t hits;
};

struct breakpoints {
	struct bp_site *sites; /* sorted by paddr */
	size_t nr;
	size_t armed;
	size_t refused;		  /* not patched: bytes differed from the image */
	size_t modified_by_guest; /* not restored: our int3 was gone */
};

/* Collects the selected, verified sites of tab. */
int breakpoints_init(struct breakpoints *bp, const struct site_table *tab);
void breakpoints_free(struct breakpoints *bp);

/* Writes the int3s; sites whose bytes in guest memory are not the site's
 * first byte are refused (counted, never patched). */
void breakpoints_arm(struct breakpoints *bp, const struct guest_mem *gm);

/* The site patched at paddr, or NULL. */
struct bp_site *breakpoints_find(struct breakpoints *bp, uint64_t paddr);

/* Restores one site (only if our int3 is still there) / all armed sites. */
void breakpoints_disarm(struct breakpoints *bp, struct bp_site *site,
			const struct guest_mem *gm);
void breakpoints_disarm_all(struct breakpoints *bp, const struct guest_mem *gm);

#ifdef __cplusplus
}
#endif

#endif /* VMM_TRACE_BREAKPOINTS_H */
