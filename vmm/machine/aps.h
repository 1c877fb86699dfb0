/* SPDX-License-Identifier: MIT */
/*
 * The application processors' vCPUs and threads (vmm/machine/aps.c), for
 * machine_create() and machine_run(); machine_kick() and
 * machine_kick_vcpu() are in vmm/machine/machine.h.
 */
#ifndef VMM_MACHINE_APS_H
#define VMM_MACHINE_APS_H

#include "vmm/run/options.h"

struct machine;

/* vCPUs 1 to --cpus - 1, created beside the boot processor. 0, or -1 with
 * an error (more than KVM recommends, out of memory, KVM failed). */
int machine_create_aps(struct machine *m, const struct run_options *o);
/* A thread per application processor, which blocks the ending signals:
 * they come to the boot processor's thread. 0, or -1 with an error. */
int machine_start_aps(struct machine *m);
/* Every application processor out of KVM_RUN (a halted one too) and its
 * thread ended; nothing when none was started. */
void machine_stop_aps(struct machine *m);

#endif /* VMM_MACHINE_APS_H */
