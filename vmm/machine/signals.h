/* SPDX-License-Identifier: MIT */
/*
 * The machine's signals while it runs (vmm/machine/signals.c): the ending
 * signals and --timeout stop the run, the kick signal takes a vCPU's
 * thread out of KVM_RUN. What commands call (machine_signals_catch(),
 * machine_signals_release(), machine_signal_describe()) is in
 * vmm/machine/machine.h; this is machine_run()'s part.
 */
#ifndef VMM_MACHINE_SIGNALS_H
#define VMM_MACHINE_SIGNALS_H

#include <signal.h>

struct machine;

/* Sent to a vCPU's thread (and the console's) to end a KVM_RUN or a read
 * in progress; never blocked there. */
#define MACHINE_KICK_SIGNAL SIGUSR1

/* At the start of machine_run(): the signals now stop m (one that came
 * before stops it at once), and timeout_s > 0 arms --timeout's timer. */
void machine_signals_install(struct machine *m, double timeout_s);
/* At the end of machine_run(): the timer off, no machine to stop; the
 * handlers stay until machine_signals_release() when a command caught
 * them before the run. */
void machine_signals_remove(void);

#endif /* VMM_MACHINE_SIGNALS_H */
