/* SPDX-License-Identifier: MIT */
/*
 * The periodic work thread behind machine_every() (vmm/machine/machine.h), for
 * the machine's own use: stopping it when a run ends or the machine goes.
 */
#ifndef VMM_MACHINE_TICKER_H
#define VMM_MACHINE_TICKER_H

struct machine;

/* Ends machine_every()'s thread and drops its work; nothing when none was
 * started. */
void machine_ticker_stop(struct machine *m);

#endif /* VMM_MACHINE_TICKER_H */
