/* SPDX-License-Identifier: MIT */
/*
 * A stock kernel's handoff (handoff.h), handoff_attach()'s second half: a
 * hardware breakpoint on the kernel's handoff symbol (ftrace_init) stops
 * capture and puts every site back before ftrace looks at them. With
 * --follow the same breakpoint then moves on, step by step: to where
 * ftrace_init returns (capture resumes over the nops ftrace made of the
 * sites), then to where ftrace begins patching code (capture stops, and
 * the kernel's ring is read from there: kernel_ring.h).
 */
#ifndef VMM_TRACE_HANDOFF_SYMBOL_H
#define VMM_TRACE_HANDOFF_SYMBOL_H

#include "vmm/symbols/symbols.h"
#include "vmm/trace/handoff.h"

#ifdef __cplusplus
extern "C" {
#endif

/* For h as handoff_attach() filled it: the breakpoint on h->symbol, when
 * syms has it (a kernel without it keeps tracing until a guestlib handoff
 * or the end of the run); with h->follow, the symbols the later steps
 * need, which the kernel must have. 0, or -1 with an error. */
int handoff_symbol_attach(struct handoff *h, const struct symbols *syms);

#ifdef __cplusplus
}
#endif

#endif /* VMM_TRACE_HANDOFF_SYMBOL_H */
