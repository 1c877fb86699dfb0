/* SPDX-License-Identifier: MIT */
/*
 * The application processors (--cpus): vCPUs 1 to N-1, each run by a
 * thread of its own beside the boot processor's (machine_run()'s), all
 * stopped together; and kicking any vCPU out of KVM_RUN from any thread.
 */
#include "vmm/machine/aps.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>

#include "vmm/kvm/run_loop.h"
#include "vmm/machine/machine.h"
#include "vmm/machine/signals.h"
#include "vmm/util/error.h"

/* vCPUs 1..N-1, waiting for INIT and SIPI (KVM's reset state for a vCPU
 * other than 0 beside an in-kernel local APIC). More than the host has
 * CPUs is allowed, as QEMU allows it: they take turns. */
int machine_create_aps(struct machine *m, const struct run_options *o)
{
	unsigned want = o->nr_cpus ? o->nr_cpus : 1, most = vm_max_vcpus(&m->vm);
	unsigned recommended = vm_recommended_vcpus(&m->vm);

	if (want > most)
		return et_error("--cpus %u: KVM here takes at most %u vCPUs (KVM_CAP_MAX_VCPUS)",
				want, most);
	if (want > recommended)
		et_warn("--cpus %u: more vCPUs than KVM here recommends (%u, KVM_CAP_NR_VCPUS: "
			"the host's CPUs); they take turns on them",
			want, recommended);
	if (want == 1)
		return 0;
	m->aps = calloc(want - 1, sizeof(*m->aps));
	m->ap_threads = calloc(want - 1, sizeof(*m->ap_threads));
	if (!m->aps || !m->ap_threads)
		return et_error("out of memory");
	for (unsigned i = 1; i < want; i++) {
		m->aps[i - 1].fd = -1;
		if (vcpu_create(&m->aps[i - 1], &m->vm, i, m->model))
			return -1;
		m->nr_cpus = i + 1;
		if (vcpu_set_firmware_msrs(&m->aps[i - 1]))
			return -1;
	}
	return 0;
}

/* An application processor's thread: its run, then the others told. */
static void *ap_main(void *arg)
{
	struct vcpu *vcpu = arg;

	if (vcpu_run(vcpu))
		et_print_error();
	vm_kick_others(vcpu->vm, vcpu);
	return NULL;
}

/* Every ending signal goes to the boot processor's thread: the APs' block
 * them (the kick signal stays open). */
int machine_start_aps(struct machine *m)
{
	sigset_t mask, old;
	int err = 0;

	sigfillset(&mask);
	sigdelset(&mask, MACHINE_KICK_SIGNAL);
	pthread_sigmask(SIG_SETMASK, &mask, &old);
	for (unsigned i = 1; i < m->nr_cpus && !err; i++) {
		err = pthread_create(&m->ap_threads[i - 1], NULL, ap_main, &m->aps[i - 1]);
		if (!err)
			m->ap_threads_started = i;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		errno = err;
		return et_error_errno("cannot start a vCPU thread");
	}
	return 0;
}

/* All vCPUs stop together: whichever ended the run, the rest leave
 * KVM_RUN (a halted AP too) and their threads end. */
void machine_stop_aps(struct machine *m)
{
	if (!m->ap_threads_started)
		return;
	pthread_mutex_lock(&m->kick_lock);
	atomic_store(&m->running, false);
	pthread_mutex_unlock(&m->kick_lock);
	for (unsigned i = 1; i <= m->ap_threads_started; i++) {
		vcpu_kick(&m->aps[i - 1]);
		pthread_kill(m->ap_threads[i - 1], MACHINE_KICK_SIGNAL);
	}
	for (unsigned i = 1; i <= m->ap_threads_started; i++)
		pthread_join(m->ap_threads[i - 1], NULL);
	m->ap_threads_started = 0;
}

void machine_kick_vcpu(struct machine *m, struct vcpu *vcpu)
{
	vcpu_kick(vcpu);
	/* The signal takes a KVM_RUN that sleeps in a halt out of it; only
	 * while machine_run() has its handler installed and the vCPU's
	 * thread is there to take it. */
	pthread_mutex_lock(&m->kick_lock);
	if (atomic_load(&m->running) && vcpu->id <= m->ap_threads_started)
		pthread_kill(vcpu->id ? m->ap_threads[vcpu->id - 1] : m->run_thread,
			     MACHINE_KICK_SIGNAL);
	pthread_mutex_unlock(&m->kick_lock);
}

void machine_kick(struct machine *m)
{
	for (unsigned i = 0; i < m->nr_cpus; i++)
		machine_kick_vcpu(m, machine_vcpu(m, i));
}
