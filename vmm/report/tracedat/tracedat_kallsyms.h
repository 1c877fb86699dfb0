/* SPDX-License-Identifier: MIT */
/*
 * The trace's symbols as /proc/kallsyms text ("ffffffff81000000 T
 * start_kernel"), so trace-cmd and KernelShark name functions without the
 * kernel or a debug package. libtraceevent names an address with the
 * nearest symbol at or below it, and only exactly at the last symbol, and
 * picks any of several names at one address; so the text has one line per
 * address, with the name earlytrace's own lookup gives there, and after
 * the last symbol an end line ("_earlytrace_symbols_end", at the end of
 * that symbol when its size is known, else at the top of the address
 * space), so an address inside the last function is named too. kallsyms
 * carries no sizes: an address in a gap after a sized symbol is named
 * after that symbol by these readers, where earlytrace prints 0x....
 */
#ifndef VMM_REPORT_TRACEDAT_TRACEDAT_KALLSYMS_H
#define VMM_REPORT_TRACEDAT_TRACEDAT_KALLSYMS_H

#include <stdint.h>

#include "vmm/report/tracedat/tracedat_out.h"
#include "vmm/symbols/symtab.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TRACEDAT_SYMBOLS_END "_earlytrace_symbols_end"

struct tracedat_kallsyms_stats {
	uint64_t lines;
	uint64_t renamed; /* names with spaces, which kallsyms cannot hold ('?' now) */
	uint64_t skipped; /* empty names, '$' names (libtraceevent drops them),
			   * names over 4096 bytes, or lines beyond the 4 GiB the
			   * section's size field holds */
};

/* The text's size in bytes (out NULL), or writes it (out set: returns
 * the bytes written, UINT64_MAX on a write error with et_error set). */
uint64_t tracedat_kallsyms(const struct symtab *tab, struct tracedat_out *out,
			   struct tracedat_kallsyms_stats *stats);

#ifdef __cplusplus
}
#endif

#endif /* VMM_REPORT_TRACEDAT_TRACEDAT_KALLSYMS_H */
