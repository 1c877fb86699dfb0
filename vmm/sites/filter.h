/* SPDX-License-Identifier: MIT */
/*
 * Which verified sites to trace, with ftrace's rules: no --filter means
 * every site; with filters, the sites whose function matches any of them;
 * --notrace then removes matches (so naming a function in both leaves it
 * out). Rejected sites are never selected. The result is a sorted address
 * array searched with binary search, like the early-trace RFC's lists, so
 * the per-event "is this traced?" question costs O(log n).
 */
#ifndef VMM_SITES_FILTER_H
#define VMM_SITES_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/sites/glob.h"
#include "vmm/sites/sites.h"

#ifdef __cplusplus
extern "C" {
#endif

struct site_filter {
	struct glob *filters;
	size_t nr_filters;
	struct glob *notrace;
	size_t nr_notrace;
};

/* Adds one pattern (kept by pointer, not copied). 0, or -1 if malformed. */
int site_filter_add(struct site_filter *f, const char *pattern, bool notrace);
void site_filter_free(struct site_filter *f);

struct site_selection {
	uint64_t *vaddrs; /* sorted */
	size_t nr;
};

/*
 * Marks tab's sites selected and fills sel. A --filter that matches no
 * verified site is an error (ftrace refuses such a filter too); a
 * --notrace that matches nothing is not.
 */
int site_select(struct site_table *tab, const struct site_filter *f,
		struct site_selection *sel);
void site_selection_free(struct site_selection *sel);
bool site_selection_contains(const struct site_selection *sel, uint64_t vaddr);

#ifdef __cplusplus
}
#endif

#endif /* VMM_SITES_FILTER_H */
