/* SPDX-License-Identifier: MIT */
/*
 * Assertions a traced run cannot satisfy as meant: a function that the
 * run's --filter leaves out, or --notrace removes, is never in the trace,
 * so "not-called" of it passes and "called" of it fails whatever the guest
 * did. `trace --expect` warns about them before the guest starts.
 */
#include "vmm/check/expect.h"

#include <stdlib.h>

#include "vmm/sites/glob.h"

static int any_match(const char *const *patterns, size_t nr, const char *name, bool *matched)
{
	*matched = false;
	for (size_t i = 0; i < nr && !*matched; i++) {
		struct glob g;

		if (glob_compile(&g, patterns[i]))
			return -1;
		*matched = glob_match(&g, name);
	}
	return 0;
}

int expect_check_filters(const struct expect_list *l, const char *const *filters,
			 size_t nr_filters, const char *const *notrace, size_t nr_notrace,
			 void (*warn)(void *ctx, const struct expect_list *l, const struct expect *e,
				      const char *func, const char *why),
			 void *ctx)
{
	for (size_t i = 0; i < l->nr; i++) {
		const struct expect *e = &l->items[i];

		for (int k = 0; k < 2 && e->func[k]; k++) {
			struct glob g;
			bool in_filter = true, in_notrace;

			if (glob_compile(&g, e->func[k]))
				return -1;
			if (g.kind != GLOB_FULL)
				continue; /* a pattern may still match traced functions */
			if (nr_filters && any_match(filters, nr_filters, e->func[k], &in_filter))
				return -1;
			if (any_match(notrace, nr_notrace, e->func[k], &in_notrace))
				return -1;
			if (!in_filter)
				warn(ctx, l, e, e->func[k], "no --filter selects it");
			else if (in_notrace)
				warn(ctx, l, e, e->func[k], "--notrace leaves it out");
		}
	}
	return 0;
}
