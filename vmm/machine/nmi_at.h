/* SPDX-License-Identifier: MIT */
/*
 * --nmi-at SYMBOL: a non-maskable interrupt into the guest the first time
 * it reaches SYMBOL, the VMM's NMI button (QEMU's monitor `nmi`, kvmtool's
 * `lkvm debug --nmi`) pressed at a moment the user names instead of by
 * hand. A stock kernel given `unknown_nmi_panic` panics there, and with
 * `ftrace_dump_on_oops` prints its ftrace ring first: a way to stop a boot
 * at a chosen function and see everything up to it.
 *
 * It borrows the hardware breakpoint slot that panic_watch only needs
 * after a panic (MACHINE_HW_BP_PANIC_END) and gives it back once fired.
 */
#ifndef VMM_NMI_AT_H
#define VMM_NMI_AT_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct machine;

struct nmi_at {
	const char *symbol; /* --nmi-at's symbol, NULL when not given */
	uint64_t addr;
	bool sent;
};

/* Arms the breakpoint on m->opts->nmi_at's symbol; nothing without the
 * option. 0, or -1 with an error (no symbols, no such symbol). */
int nmi_at_start(struct machine *m);

#ifdef __cplusplus
}
#endif

#endif /* VMM_NMI_AT_H */
