/* SPDX-License-Identifier: MIT */
/*
 * The virtual machine earlytrace builds for a kernel: the KVM VM and its
 * vCPU, the devices, the loaded kernel and its symbols, ready to run from
 * the kernel's first instruction.
 */
#ifndef VMM_MACHINE_H
#define VMM_MACHINE_H

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>

#include "arch/arch.h"
#include "vmm/hw/arch_devices.h"
#include "vmm/kvm/vcpu.h"
#include "vmm/kvm/vm.h"
#include "vmm/loader/kernel_image.h"
#include "vmm/machine/console.h"
#include "vmm/machine/nmi_at.h"
#include "vmm/machine/panic_watch.h"
#include "vmm/run/options.h"
#include "vmm/symbols/symbols.h"

struct machine {
	struct vm vm;
	struct vcpu vcpu; /* the boot processor, vCPU 0 */
	/* --cpus N: the application processors, vCPUs 1 to N-1, each run by a
	 * thread of its own (the boot processor's is machine_run()'s), which
	 * wait for the guest's INIT and SIPI. */
	unsigned nr_cpus;
	struct vcpu *aps;
	pthread_t *ap_threads;
	unsigned ap_threads_started;
	pthread_mutex_t kick_lock; /* kicks against the threads' end */
	struct serial8250 uart;	      /* the console (COM1 on a PC) */
	struct arch_devices *devices; /* it, at its place, and the devices that end a run */
	struct console console;
	struct kernel_image kernel;
	struct symbols symbols; /* empty when the kernel has none */
	const struct run_options *opts;
	const struct cpu_model *model;
	struct panic_watch panic; /* whether the guest panicked, and why */
	/* Told when the guest enters panic(), at the breakpoint, once the
	 * message is read (the tracer's flight recorder); NULL when nobody
	 * asked. */
	void (*panic_hook)(void *ctx, struct vcpu *vcpu);
	void *panic_hook_ctx;
	/* Told of what the VMM did to the guest that belongs in its timeline
	 * (--nmi-at's NMI), in words; NULL when nobody records one. */
	void (*note_hook)(void *ctx, struct vcpu *vcpu, const char *text);
	void *note_hook_ctx;
	struct nmi_at nmi; /* --nmi-at */
	pthread_t run_thread;	/* the thread in machine_run(), for machine_kick() */
	_Atomic bool running;
	/* machine_every(): a thread that asks the vCPU for periodic work. */
	struct {
		pthread_t thread;
		bool started;
		_Atomic bool stop;
		double period_s;
		void (*fn)(void *ctx, struct vcpu *vcpu);
		void *ctx;
		sem_t done; /* posted after each fn (and to stop) */
	} ticker;
};

/* vCPU i of m (0: the boot processor), i < m->nr_cpus. */
static inline struct vcpu *machine_vcpu(struct machine *m, unsigned i)
{
	return i ? &m->aps[i - 1] : &m->vcpu;
}

/* Hardware breakpoint slots (struct guest_debug) by owner. */
enum {
	MACHINE_HW_BP_PANIC = 0, /* panic(), then the end of its output (panic_watch) */
	MACHINE_HW_BP_HANDOFF,	 /* the tracer's handoff symbol (ftrace_init) */
	MACHINE_HW_BP_UNTIL,	 /* the tracer's --until symbol */
	MACHINE_HW_BP_PANIC_END, /* the end of panic()'s output (panic_watch); before
				  * a panic, --nmi-at's symbol (nmi_at) */
};

/* Loads the kernel, builds the VM and puts the guest at its entry point
 * (nothing runs yet). 0, or -1 with et_last_error() set. */
int machine_create(struct machine *m, const struct run_options *o);

/* Runs until something stops the guest; returns the process exit status
 * and prints what the user must know about how the run ended. */
int machine_run(struct machine *m);

/* Makes every vCPU leave KVM_RUN now, even from a halt, from any thread
 * (a watchdog); each notices a stop requested before. */
void machine_kick(struct machine *m);
/* The same for one vCPU. */
void machine_kick_vcpu(struct machine *m, struct vcpu *vcpu);

void machine_destroy(struct machine *m);

/*
 * From now on, every signal that would end the process and can be caught
 * (SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGALRM, ...) stops the run instead:
 * one before machine_run() stops it as soon as it starts, one after it is
 * kept. Commands call this before they create anything a signal would
 * leave behind (a temporary file).
 */
void machine_signals_catch(void);

/* Puts the signals back as they were; returns the last one that came in
 * after the run (or with no run), 0 if none did. */
int machine_signals_release(void);

/* "SIGPIPE: the console's reader went away": what a signal means here. */
const char *machine_signal_describe(int sig);

/*
 * Calls fn in the vCPU's own thread, with the guest stopped, every
 * period_s seconds of the run (a thread kicks the vCPU out of KVM_RUN;
 * the guest TSC runs with host time, so this is a steady period of guest
 * time too). The period counts from the end of one call to the next
 * request, so however long fn takes the guest runs period_s between two.
 * One per machine. 0, or -1 with an error.
 */
int machine_every(struct machine *m, double period_s, void (*fn)(void *ctx, struct vcpu *vcpu),
		  void *ctx);

/*
 * Once the guest is loaded and every user of the kernel file's bytes is
 * done (the tracer after it attached): frees the file (a decompressed Linux
 * is ~50 MB) and keeps only function symbols, with names of their own, so
 * the VMM's own memory stays a few MiB for the rest of the run. 0, or -1
 * with an error.
 */
int machine_release_image(struct machine *m);

#endif /* VMM_MACHINE_H */
