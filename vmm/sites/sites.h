/* SPDX-License-Identifier: MIT */
/*
 * A kernel's traceable sites: the guest addresses of function-entry
 * instructions we may patch. They come from the table the build recorded
 * (__mcount_loc, or __patchable_function_entries), or, when a kernel
 * recorded none, from decoding the first instruction of every function.
 * Every site is verified before it can be selected; a rejected site keeps
 * its reason so that reports can say why it is left alone.
 */
#ifndef VMM_SITES_SITES_H
#define VMM_SITES_SITES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/loader/kernel_image.h"
#include "vmm/symbols/symbols.h"

#ifdef __cplusplus
extern "C" {
#endif

enum site_origin {
	SITE_ORIGIN_NONE = 0,
	SITE_ORIGIN_MCOUNT_LOC,	/* __mcount_loc (symbols or section) */
	SITE_ORIGIN_PATCHABLE,	/* __patchable_function_entries section */
	SITE_ORIGIN_SCAN,	/* decoded function entries */
};

enum site_kind {
	SITE_KIND_NONE = 0,	/* not verified */
	SITE_KIND_NOP5,		/* 5-byte nop, as -mnop-mcount or ftrace leave it */
	SITE_KIND_CALL,		/* call __fentry__ / mcount */
};

enum site_reject {
	SITE_OK = 0,
	SITE_REJECT_UNMAPPED,	 /* not inside the initialized bytes of code */
	SITE_REJECT_BYTES,	 /* neither nop5 nor call */
	SITE_REJECT_CALL_TARGET, /* a call, but not to __fentry__/mcount */
	SITE_REJECT_NO_SYMBOL,	 /* no function contains it */
	SITE_REJECT_NOT_ENTRY,	 /* inside a function, not at its entry */
	SITE_REJECT_DUPLICATE,	 /* recorded twice */
	SITE_REJECT_MAX,
};

struct site {
	uint64_t vaddr;	   /* as the kernel runs it (paging on) */
	uint64_t paddr;	   /* where it is loaded (before paging) */
	const char *name;  /* the function, or NULL; points into the symbols */
	uint64_t offset;   /* from the function's start: 0, or 4 after endbr */
	enum site_kind kind;
	enum site_reject reject;
	bool selected;	   /* set by site_select() */
};

struct site_table {
	struct site *sites; /* sorted by vaddr */
	size_t nr;
	enum site_origin origin;
	char origin_desc[128];
	size_t nr_verified, nr_rejected;
	size_t rejects[SITE_REJECT_MAX]; /* count per reason */
};

/* Finds and verifies every site of img, naming them from syms. An image
 * with no recorded sites and no way to scan for them is an error. */
int sites_find(struct site_table *tab, const struct kernel_image *img,
	       const struct symbols *syms);
void sites_free(struct site_table *tab);

const char *site_reject_reason(enum site_reject reject);
const char *site_reject_tag(enum site_reject reject); /* short: "bad-bytes" */
const char *site_kind_name(enum site_kind kind);

#ifdef __cplusplus
}
#endif

#endif /* VMM_SITES_SITES_H */
