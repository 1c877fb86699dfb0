/* SPDX-License-Identifier: MIT */
/*
 * `earlytrace sites`: what a run would be able to trace. Loads the kernel
 * and its symbols, finds and verifies the sites, applies the filters, and
 * prints the selection like ftrace's available_filter_functions, then a
 * '#'-prefixed summary (so the list stays easy to parse).
 */
#include "vmm/cmd/sites.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vmm/cmd/cli.h"
#include "vmm/loader/kernel_image.h"
#include "vmm/run/end.h"
#include "vmm/sites/filter.h"
#include "vmm/sites/sites.h"
#include "vmm/symbols/symbols.h"
#include "vmm/util/error.h"

const char cli_sites_usage[] =
	"Usage: earlytrace sites --kernel FILE [OPTIONS]\n"
	"\n"
	"Lists the function-entry sites of FILE that a run would trace: name,\n"
	"virtual address, physical address and kind (nop5 or call), then a\n"
	"summary of sites found, verified, rejected (each reason once, with its\n"
	"count) and selected. With --filter or --notrace: the matching sites and a\n"
	"one-line summary.\n"
	"\n"
	"  -k, --kernel FILE    kernel ELF (a vmlinux, or one of our images)\n"
	"  -s, --symbols FILE   System.map or ELF with .symtab for a kernel without\n"
	"                       one; refused if it does not match the kernel\n"
	"  -f, --filter GLOB    trace only matching functions (repeatable)\n"
	"  -n, --notrace GLOB   never trace matching functions (repeatable)\n"
	"  -r, --rejected       list the rejected sites instead (name+offset, address,\n"
	"                       reason)\n"
	"  -h, --help           show this help\n"
	"\n"
	"GLOB is as in ftrace's set_ftrace_filter: name, foo*, *foo, *foo*, or a\n"
	"glob with *, ? and [...]. Symbols come from the kernel's .symtab, else\n"
	"--symbols, else kallsyms recovered from the image.\n";

static const struct option sites_options_table[] = {
	{ "kernel", required_argument, NULL, 'k' },
	{ "symbols", required_argument, NULL, 's' },
	{ "filter", required_argument, NULL, 'f' },
	{ "notrace", required_argument, NULL, 'n' },
	{ "rejected", no_argument, NULL, 'r' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

void sites_options_free(struct sites_options *opts)
{
	free(opts->filters);
	free(opts->notrace);
	memset(opts, 0, sizeof(*opts));
}

int cli_parse_sites(int argc, char **argv, struct sites_options *opts)
{
	int c;

	memset(opts, 0, sizeof(*opts));
	/* No more patterns than arguments, so one allocation each suffices. */
	opts->filters = calloc((size_t)argc + 1, sizeof(*opts->filters));
	opts->notrace = calloc((size_t)argc + 1, sizeof(*opts->notrace));
	if (!opts->filters || !opts->notrace) {
		sites_options_free(opts);
		return et_error("out of memory");
	}
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":k:s:f:n:rh", sites_options_table, NULL)) != -1) {
		switch (c) {
		case 'k':
			opts->kernel = optarg;
			break;
		case 's':
			opts->symbols = optarg;
			break;
		case 'f':
			opts->filters[opts->nr_filters++] = optarg;
			break;
		case 'n':
			opts->notrace[opts->nr_notrace++] = optarg;
			break;
		case 'r':
			opts->rejected = true;
			break;
		case 'h':
			opts->help = true;
			break;
		default:
			sites_options_free(opts);
			return cli_bad_option("sites", argc, argv, c);
		}
	}
	if (optind < argc) {
		et_error("unexpected argument '%s' (try 'earlytrace sites --help')", argv[optind]);
		sites_options_free(opts);
		return -1;
	}
	if (!opts->help && !opts->kernel) {
		sites_options_free(opts);
		return et_error("sites: --kernel FILE is required");
	}
	return 0;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* "kernel .symtab (42 symbols)": the description, after the source's name
 * only when the description does not start with it already. */
static void print_symbols(FILE *out, const struct symbols *syms)
{
	const char *source = sym_source_name(syms->source);

	if (!strncmp(syms->desc, source, strlen(source)))
		fprintf(out, "%s", syms->desc);
	else
		fprintf(out, "%s: %s", source, syms->desc);
}

void sites_print_summary(FILE *out, const struct site_table *tab, const struct site_selection *sel,
			 const struct symbols *syms, bool filtered, double sym_ms, double site_ms)
{
	if (filtered) {
		/* Asked for some functions: those, and one line. */
		fprintf(out, "# %zu selected of %zu sites (%zu verified, %zu rejected) in %s; symbols: ",
			sel->nr, tab->nr, tab->nr_verified, tab->nr_rejected, tab->origin_desc);
		print_symbols(out, syms);
		fputc('\n', out);
		return;
	}
	fputs("# symbols: ", out);
	print_symbols(out, syms);
	fputc('\n', out);
	fprintf(out, "# sites: %zu found in %s, %zu verified, %zu rejected, %zu selected\n", tab->nr,
		tab->origin_desc, tab->nr_verified, tab->nr_rejected, sel->nr);
	/* Each reason once, with how many sites it turned away. */
	for (int r = 1; r < SITE_REJECT_MAX; r++)
		if (tab->rejects[r])
			fprintf(out, "# rejected %zu (%s): %s\n", tab->rejects[r],
				site_reject_tag((enum site_reject)r),
				site_reject_reason((enum site_reject)r));
	if (tab->nr_rejected)
		fputs("# 'earlytrace sites --rejected' lists the rejected sites\n", out);
	fprintf(out, "# time: symbols %.1f ms, sites %.1f ms\n", sym_ms, site_ms);
}

/* Everything after option parsing; -1 with et_last_error() on failure. */
static int list_sites(const struct sites_options *o, struct site_filter *filter)
{
	struct kernel_image img;
	struct symbols syms = { 0 };
	struct site_table tab = { 0 };
	struct site_selection sel = { 0 };
	double t0, t1, t2;
	int ret = -1;

	if (kernel_image_open(&img, o->kernel))
		return -1;
	t0 = now_ms();
	if (symbols_load(&syms, &img, o->symbols))
		goto out;
	t1 = now_ms();
	if (sites_find(&tab, &img, &syms))
		goto out;
	t2 = now_ms();
	if (site_select(&tab, filter, &sel))
		goto out;
	for (size_t i = 0; i < tab.nr; i++) {
		const struct site *s = &tab.sites[i];

		if (o->rejected && s->reject)
			printf("%s+0x%llx 0x%llx %s\n", s->name ? s->name : "?",
			       (unsigned long long)s->offset, (unsigned long long)s->vaddr,
			       site_reject_tag(s->reject));
		else if (!o->rejected && s->selected)
			printf("%s 0x%llx 0x%llx %s\n", s->name, (unsigned long long)s->vaddr,
			       (unsigned long long)s->paddr, site_kind_name(s->kind));
	}
	sites_print_summary(stdout, &tab, &sel, &syms, o->nr_filters || o->nr_notrace, t1 - t0,
			    t2 - t1);
	/* A full disk or a closed pipe under standard output is a failure. */
	if (fflush(stdout) || ferror(stdout))
		et_error_errno("cannot write the site list to standard output");
	else
		ret = 0;
out:
	site_selection_free(&sel);
	sites_free(&tab);
	symbols_free(&syms);
	kernel_image_close(&img);
	return ret;
}

int cmd_sites(int argc, char **argv)
{
	struct sites_options o;
	struct site_filter filter = { 0 };
	int ret = 0;

	if (cli_parse_sites(argc, argv, &o)) {
		et_print_error();
		return EXIT_STATUS_ERROR;
	}
	if (o.help) {
		fputs(cli_sites_usage, stdout);
		sites_options_free(&o);
		return 0;
	}
	/* Bad patterns are reported before any file is read. */
	for (size_t i = 0; i < o.nr_filters + o.nr_notrace && !ret; i++) {
		bool nt = i >= o.nr_filters;

		ret = site_filter_add(&filter, nt ? o.notrace[i - o.nr_filters] : o.filters[i], nt);
	}
	if (!ret)
		ret = list_sites(&o, &filter);
	if (ret)
		et_print_error();
	site_filter_free(&filter);
	sites_options_free(&o);
	return ret ? EXIT_STATUS_ERROR : 0;
}
