/* SPDX-License-Identifier: MIT */
/* A stock kernel's handoff (handoff.h): the breakpoint on its handoff
 * symbol, and --follow's steps after it. */
#include "vmm/trace/handoff_symbol.h"

#include <stdarg.h>
#include <stdio.h>

#include "vmm/kvm/guest_debug.h"
#include "vmm/machine/machine.h"
#include "vmm/util/error.h"

/* Where ftrace begins patching code, first name found: each step of
 * ftrace_run_update_code() in 6.1 (the first checks every site before
 * it changes one). */
static const char *const patch_symbols[] = {
	"ftrace_arch_code_modify_prepare",
	"ftrace_run_update_code",
	"arch_ftrace_update_code",
	"ftrace_modify_all_code",
	"ftrace_replace_code",
};

__attribute__((format(printf, 2, 3))) static void mark(struct handoff *h, const char *fmt, ...)
{
	char text[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	recorder_mark_now(h->rec, text);
}

static void on_handoff_symbol(void *ctx, struct vcpu *vcpu, unsigned slot);

/* --follow's steps at each breakpoint (see handoff_symbol.h). */
static void follow_step(struct handoff *h, struct vcpu *vcpu, unsigned slot)
{
	size_t n;

	switch (h->phase) {
	case FOLLOW_NONE:
		/* ftrace_init: it checks every site holds `call __fentry__`. */
		n = h->ops->stop_capture(h->ctx, h->symbol);
		mark(h, "follow: %s reached, %zu sites restored for it; capture resumes "
				 "when it returns",
			      h->symbol, n);
		h->phase = FOLLOW_RESUMING;
		if (guest_debug_set_hw(vcpu, slot, h->resume_addr, on_handoff_symbol, h) == 0)
			return;
		break;
	case FOLLOW_RESUMING:
		n = h->ops->resume_capture(h->ctx);
		mark(h, "follow: capture resumed at %s on %zu sites", "early_trace_init", n);
		h->phase = FOLLOW_CAPTURING;
		if (guest_debug_set_hw(vcpu, slot, h->patch_addr, on_handoff_symbol, h) == 0)
			return;
		break;
	case FOLLOW_CAPTURING:
		n = h->ops->stop_capture(h->ctx, "ftrace");
		mark(h, "handoff: ftrace begins patching code (%s), %zu sites restored; "
				 "the kernel's ftrace ring is read from here",
			      h->patch_symbol, n);
		break;
	case FOLLOW_KERNEL:
		break;
	}
	/* The kernel's tracer takes over (also when a breakpoint could not
	 * be moved: capture is stopped then, never left in ftrace's way). */
	if (h->phase != FOLLOW_KERNEL) {
		h->ops->stop_capture(h->ctx, "ftrace");
		h->phase = FOLLOW_KERNEL;
		h->ops->follow_start(h->ctx);
	}
	guest_debug_set_hw(vcpu, slot, 0, NULL, NULL);
}

/* A stock kernel reached the handoff symbol: its own tracer is about to
 * inspect the sites, so they must be exactly as built. */
static void on_handoff_symbol(void *ctx, struct vcpu *vcpu, unsigned slot)
{
	struct handoff *h = ctx;
	size_t restored;

	h->done = true;
	if (h->follow) {
		follow_step(h, vcpu, slot);
		return;
	}
	restored = h->ops->stop_capture(h->ctx, h->symbol);
	mark(h, "handoff: %s reached, %zu sites restored", h->symbol, restored);
	guest_debug_set_hw(vcpu, slot, 0, NULL, NULL);
}

/* --follow needs the kernel's code-patching entry: without it capture
 * would still be armed when ftrace checks the sites. */
static int find_follow_symbols(struct handoff *h, const struct symbols *syms)
{
	if (symbols_addr(syms, "early_trace_init", &h->resume_addr))
		return et_error("--follow: no symbol early_trace_init in this kernel (not a "
				"Linux with ftrace?)");
	for (size_t i = 0; i < sizeof(patch_symbols) / sizeof(patch_symbols[0]); i++)
		if (symbols_addr(syms, patch_symbols[i], &h->patch_addr) == 0) {
			h->patch_symbol = patch_symbols[i];
			return 0;
		}
	return et_error("--follow: this kernel has none of the symbols where ftrace patches "
			"code (%s, ...)",
			patch_symbols[0]);
}

int handoff_symbol_attach(struct handoff *h, const struct symbols *syms)
{
	uint64_t addr;

	if (h->follow && (!h->symbol || symbols_addr(syms, h->symbol, &addr)))
		return et_error("--follow: no handoff symbol '%s' in this kernel",
				h->symbol ? h->symbol : "(none)");
	if (h->follow && find_follow_symbols(h, syms))
		return -1;
	/* A kernel without the handoff symbol simply keeps the breakpoints
	 * until it hands off through guestlib, or the run ends. */
	if (h->symbol && symbols_addr(syms, h->symbol, &addr) == 0 &&
	    guest_debug_set_hw(h->vcpu, MACHINE_HW_BP_HANDOFF, addr, on_handoff_symbol, h))
		return -1;
	return 0;
}
