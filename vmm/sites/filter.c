/* SPDX-License-Identifier: MIT */
#include "vmm/sites/filter.h"

#include <stdlib.h>
#include <string.h>

#include "vmm/util/error.h"
#include "vmm/util/sorted.h"

int site_filter_add(struct site_filter *f, const char *pattern, bool notrace)
{
	struct glob g, **list = notrace ? &f->notrace : &f->filters;
	size_t *nr = notrace ? &f->nr_notrace : &f->nr_filters;
	struct glob *bigger;

	if (glob_compile(&g, pattern))
		return et_error_prefix(notrace ? "--notrace" : "--filter");
	bigger = realloc(*list, (*nr + 1) * sizeof(**list));
	if (!bigger)
		return et_error("out of memory");
	*list = bigger;
	(*list)[(*nr)++] = g;
	return 0;
}

void site_filter_free(struct site_filter *f)
{
	free(f->filters);
	free(f->notrace);
	memset(f, 0, sizeof(*f));
}

/* Sites ordered by name, so exact names (the common case) are found by
 * binary search instead of a pass over every site. */

static int compare_name(const void *a, const void *b, void *arg)
{
	const struct site_table *tab = arg;
	const struct site *x = &tab->sites[*(const size_t *)a];
	const struct site *y = &tab->sites[*(const size_t *)b];

	return strcmp(x->name, y->name);
}

struct name_key {
	const struct site_table *tab;
	const char *name;
};

/* For the search in the sorted index: the site's name sorts before the key's. */
static bool name_below(const void *index, const void *key)
{
	const struct name_key *k = key;

	return strcmp(k->tab->sites[*(const size_t *)index].name, k->name) < 0;
}

/* Sets .selected = value on every candidate matching g; returns the count. */
static size_t match_all(const struct site_table *tab, const size_t *idx, size_t nr_idx,
			const struct glob *g, bool value)
{
	size_t count = 0;

	if (g->kind == GLOB_FULL) {
		struct name_key key = { tab, g->text };
		size_t lo = sorted_partition_point(idx, nr_idx, sizeof(*idx), &key, name_below);

		for (; lo < nr_idx && !strcmp(tab->sites[idx[lo]].name, g->text); lo++, count++)
			tab->sites[idx[lo]].selected = value;
		return count;
	}
	for (size_t i = 0; i < nr_idx; i++) {
		if (glob_match(g, tab->sites[idx[i]].name)) {
			tab->sites[idx[i]].selected = value;
			count++;
		}
	}
	return count;
}

int site_select(struct site_table *tab, const struct site_filter *f,
		struct site_selection *sel)
{
	size_t *idx, nr_idx = 0;

	memset(sel, 0, sizeof(*sel));
	idx = calloc(tab->nr ? tab->nr : 1, sizeof(*idx));
	sel->vaddrs = calloc(tab->nr ? tab->nr : 1, sizeof(*sel->vaddrs));
	if (!idx || !sel->vaddrs) {
		free(idx);
		site_selection_free(sel);
		return et_error("out of memory");
	}
	/* Only verified, named sites take part; the rest stay unselected. */
	for (size_t i = 0; i < tab->nr; i++) {
		struct site *s = &tab->sites[i];

		s->selected = false;
		if (s->reject || !s->name)
			continue;
		s->selected = f->nr_filters == 0;
		idx[nr_idx++] = i;
	}
	qsort_r(idx, nr_idx, sizeof(*idx), compare_name, tab);
	for (size_t i = 0; i < f->nr_filters; i++) {
		if (!match_all(tab, idx, nr_idx, &f->filters[i], true)) {
			free(idx);
			site_selection_free(sel);
			return et_error("--filter '%s' matches no traceable function",
					f->filters[i].pattern);
		}
	}
	for (size_t i = 0; i < f->nr_notrace; i++)
		match_all(tab, idx, nr_idx, &f->notrace[i], false);
	free(idx);
	/* tab is sorted by vaddr, so the selection comes out sorted. */
	for (size_t i = 0; i < tab->nr; i++)
		if (tab->sites[i].selected)
			sel->vaddrs[sel->nr++] = tab->sites[i].vaddr;
	return 0;
}

void site_selection_free(struct site_selection *sel)
{
	free(sel->vaddrs);
	memset(sel, 0, sizeof(*sel));
}

static bool vaddr_below(const void *vaddr, const void *key)
{
	return *(const uint64_t *)vaddr < *(const uint64_t *)key;
}

bool site_selection_contains(const struct site_selection *sel, uint64_t vaddr)
{
	size_t i = sorted_partition_point(sel->vaddrs, sel->nr, sizeof(*sel->vaddrs), &vaddr,
					  vaddr_below);

	return i < sel->nr && sel->vaddrs[i] == vaddr;
}
