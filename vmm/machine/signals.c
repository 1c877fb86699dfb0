/* SPDX-License-Identifier: MIT */
/*
 * The machine's signals and --timeout. Every signal that would end the
 * process by default and can be caught stops the run instead, so the trace
 * file gets its END and the user a line saying why (docs/reliability.md,
 * "How a run ends"). SIGXFSZ is ignored (main.c): a write past the file
 * size limit fails with EFBIG, which the trace writer handles as a full
 * disk. SIGSEGV and the other faults are the VMM's own bugs and are left
 * alone.
 */
#include "vmm/machine/signals.h"

#include <signal.h>
#include <stdbool.h>
#include <sys/time.h>
#include <time.h>

#include "vmm/machine/machine.h"

static const int ending_signals[] = { SIGHUP,  SIGINT,	  SIGQUIT, SIGTERM, SIGALRM,
				      SIGPIPE, SIGUSR2,	  SIGXCPU, SIGVTALRM, SIGPROF,
				      SIGIO,   SIGPWR,	  SIGSTKFLT };
#define NR_ENDING_SIGNALS (sizeof(ending_signals) / sizeof(ending_signals[0]))

/* The machine the signal handlers act on; one run per process. */
static struct machine *signal_target;
static struct sigaction saved_actions[NR_ENDING_SIGNALS], saved_kick;
static bool signals_caught;
static bool caught_by_run; /* machine_run() caught them itself: it releases them */
/* The latest ending signal no run has acted on yet; 0 for none. */
static volatile sig_atomic_t pending_signal;
/* --timeout's timer is armed: a SIGALRM from the kernel is the timeout. */
static volatile sig_atomic_t timer_armed;

const char *machine_signal_describe(int sig)
{
	switch (sig) {
	case SIGHUP: return "SIGHUP";
	case SIGINT: return "SIGINT";
	case SIGQUIT: return "SIGQUIT";
	case SIGTERM: return "SIGTERM";
	case SIGALRM: return "SIGALRM, not --timeout's";
	case SIGPIPE: return "SIGPIPE: the console's reader went away";
	case SIGUSR2: return "SIGUSR2";
	case SIGXCPU: return "SIGXCPU: CPU time limit";
	case SIGVTALRM: return "SIGVTALRM";
	case SIGPROF: return "SIGPROF";
	case SIGIO: return "SIGIO";
	case SIGPWR: return "SIGPWR";
	case SIGSTKFLT: return "SIGSTKFLT";
	default: return "?";
	}
}

static void on_stop_signal(int sig, siginfo_t *info, void *ucontext)
{
	struct machine *m = signal_target;
	/* The timer's SIGALRM comes from the kernel; kill(1)'s does not. */
	bool timeout = sig == SIGALRM && timer_armed && info && info->si_code == SI_KERNEL;

	(void)ucontext;
	if (!m) {
		if (!timeout)
			pending_signal = sig;
		return;
	}
	if (timeout)
		vm_request_stop(&m->vm, RUN_END_TIMEOUT);
	else
		vm_request_stop_detail(&m->vm, RUN_END_SIGNAL, sig,
				       machine_signal_describe(sig));
	/* The ending signals come to the boot processor's thread (the
	 * others block them); it stops the rest when its run ends. */
	vcpu_kick(&m->vcpu);
}

/* The kicker set the vCPU's immediate_exit already; the signal itself
 * ends a KVM_RUN in progress. */
static void on_kick_signal(int sig)
{
	struct vcpu *vcpu = vcpu_current();

	(void)sig;
	if (vcpu)
		vcpu_kick(vcpu);
}

void machine_signals_catch(void)
{
	/* No SA_RESTART: the point is to interrupt KVM_RUN. */
	struct sigaction stop = { .sa_sigaction = on_stop_signal, .sa_flags = SA_SIGINFO };
	struct sigaction kick = { .sa_handler = on_kick_signal };

	if (signals_caught)
		return;
	pending_signal = 0;
	for (size_t i = 0; i < NR_ENDING_SIGNALS; i++)
		sigaction(ending_signals[i], &stop, &saved_actions[i]);
	sigaction(MACHINE_KICK_SIGNAL, &kick, &saved_kick);
	signals_caught = true;
}

int machine_signals_release(void)
{
	int sig;

	if (!signals_caught)
		return 0;
	for (size_t i = 0; i < NR_ENDING_SIGNALS; i++)
		sigaction(ending_signals[i], &saved_actions[i], NULL);
	sigaction(MACHINE_KICK_SIGNAL, &saved_kick, NULL);
	signals_caught = false;
	sig = pending_signal;
	pending_signal = 0;
	return sig;
}

void machine_signals_install(struct machine *m, double timeout_s)
{
	caught_by_run = !signals_caught;
	machine_signals_catch();
	signal_target = m;
	/* A signal before the run (while the kernel loaded): stop at once. */
	if (pending_signal) {
		int sig = pending_signal;

		pending_signal = 0;
		vm_request_stop_detail(&m->vm, RUN_END_SIGNAL, sig,
				       machine_signal_describe(sig));
	}
	if (timeout_s > 0) {
		struct itimerval t = { .it_value = {
					       .tv_sec = (time_t)timeout_s,
					       .tv_usec = (suseconds_t)((timeout_s - (time_t)timeout_s) * 1e6),
				       } };

		if (!t.it_value.tv_sec && !t.it_value.tv_usec)
			t.it_value.tv_usec = 1;
		timer_armed = 1;
		setitimer(ITIMER_REAL, &t, NULL);
	}
}

/* The handlers stay until machine_signals_release(): a signal while the
 * command finishes the trace file is kept for it. */
void machine_signals_remove(void)
{
	struct itimerval off = { 0 };

	setitimer(ITIMER_REAL, &off, NULL);
	timer_armed = 0;
	signal_target = NULL;
	if (caught_by_run)
		machine_signals_release();
}
