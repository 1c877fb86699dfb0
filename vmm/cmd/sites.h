/* SPDX-License-Identifier: MIT */
#ifndef VMM_CMD_SITES_H
#define VMM_CMD_SITES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sites_options {
	const char *kernel;
	const char *symbols;
	const char **filters;	/* point into argv */
	size_t nr_filters;
	const char **notrace;
	size_t nr_notrace;
	bool rejected;		/* --rejected: list those instead */
	bool help;
};

/* Parses `sites`'s options (argv[0] is "sites"). 0, or -1 with an error. */
int cli_parse_sites(int argc, char **argv, struct sites_options *opts);
void sites_options_free(struct sites_options *opts);

/* `earlytrace sites`: lists a kernel's selected sites and a summary. */
int cmd_sites(int argc, char **argv);

extern const char cli_sites_usage[];

struct site_table;
struct site_selection;
struct symbols;
/* The '#' lines after the list: symbols, sites, each rejection reason once
 * with its count; one line when `filtered` (--filter/--notrace given). */
void sites_print_summary(FILE *out, const struct site_table *tab, const struct site_selection *sel,
			 const struct symbols *syms, bool filtered, double sym_ms, double site_ms);

#ifdef __cplusplus
}
#endif

#endif /* VMM_CMD_SITES_H */
