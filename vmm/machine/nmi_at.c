/* SPDX-License-Identifier: MIT */
#include "vmm/machine/nmi_at.h"

#include <stdio.h>

#include "vmm/machine/machine.h"
#include "vmm/util/error.h"

static void on_nmi_symbol(void *ctx, struct vcpu *vcpu, unsigned slot)
{
	struct machine *m = ctx;
	char text[160];

	/* Once: the slot goes back to panic_watch, which needs it only after
	 * a panic (which the NMI may well cause). */
	if (guest_debug_set_hw(vcpu, slot, 0, NULL, NULL) || vcpu_inject_nmi(vcpu)) {
		et_error("--nmi-at %s: KVM could not deliver the NMI", m->nmi.symbol);
		vm_request_stop(&m->vm, RUN_END_VMM_ERROR);
		return;
	}
	m->nmi.sent = true;
	snprintf(text, sizeof(text), "NMI sent at %s (--nmi-at)", m->nmi.symbol);
	if (m->note_hook)
		m->note_hook(m->note_hook_ctx, vcpu, text);
}

int nmi_at_start(struct machine *m)
{
	struct nmi_at *n = &m->nmi;

	n->symbol = m->opts->nmi_at;
	if (!n->symbol)
		return 0;
	if (!m->symbols.tab.nr)
		return et_error("--nmi-at %s: the kernel has no symbols (give --symbols FILE)",
				n->symbol);
	if (symbols_addr(&m->symbols, n->symbol, &n->addr))
		return et_error("--nmi-at: no function '%s' in the kernel's symbols", n->symbol);
	return guest_debug_set_hw(&m->vcpu, MACHINE_HW_BP_PANIC_END, n->addr, on_nmi_symbol, m);
}
