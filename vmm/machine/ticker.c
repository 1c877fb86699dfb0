/* SPDX-License-Identifier: MIT */
/*
 * machine_every(): a thread that asks the boot processor for periodic work
 * (the tracer's reads of the guest's rings), kicking it out of KVM_RUN so
 * the work runs in the vCPU's own thread with the guest stopped.
 */
#include "vmm/machine/ticker.h"

#include <errno.h>
#include <signal.h>
#include <time.h>

#include "vmm/machine/machine.h"
#include "vmm/util/error.h"

static void *ticker_main(void *arg)
{
	struct machine *m = arg;
	struct timespec period = {
		.tv_sec = (time_t)m->ticker.period_s,
		.tv_nsec = (long)((m->ticker.period_s - (double)(time_t)m->ticker.period_s) * 1e9),
	};

	while (!atomic_load(&m->ticker.stop)) {
		nanosleep(&period, NULL);
		if (atomic_load(&m->ticker.stop))
			break;
		__atomic_store_n(&m->vcpu.work_pending, 1, __ATOMIC_RELEASE);
		machine_kick_vcpu(m, &m->vcpu);
		/* The next period starts when this work is done: a request
		 * every period regardless would, once the work takes longer
		 * than the period, leave the guest no time to run at all. */
		while (sem_wait(&m->ticker.done) && errno == EINTR)
			;
	}
	return NULL;
}

/* The periodic work, in the vCPU's thread; then the ticker may go on. */
static void ticker_work(void *ctx, struct vcpu *vcpu)
{
	struct machine *m = ctx;

	m->ticker.fn(m->ticker.ctx, vcpu);
	sem_post(&m->ticker.done);
}

int machine_every(struct machine *m, double period_s, void (*fn)(void *ctx, struct vcpu *vcpu),
		  void *ctx)
{
	sigset_t all, old;
	int err;

	if (m->ticker.started)
		return et_error("one periodic task per machine");
	if (sem_init(&m->ticker.done, 0, 0))
		return et_error_errno("cannot start the periodic reader");
	m->ticker.fn = fn;
	m->ticker.ctx = ctx;
	m->vcpu.work_fn = ticker_work;
	m->vcpu.work_ctx = m;
	m->ticker.period_s = period_s;
	atomic_store(&m->ticker.stop, false);
	/* The VMM's signals are for the vCPU thread, never this one. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&m->ticker.thread, NULL, ticker_main, m);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		sem_destroy(&m->ticker.done);
		errno = err;
		return et_error_errno("cannot start the periodic reader's thread");
	}
	m->ticker.started = true;
	return 0;
}

void machine_ticker_stop(struct machine *m)
{
	if (!m->ticker.started)
		return;
	atomic_store(&m->ticker.stop, true);
	sem_post(&m->ticker.done); /* a ticker waiting on work that will not run */
	pthread_join(m->ticker.thread, NULL);
	sem_destroy(&m->ticker.done);
	m->ticker.started = false;
	m->vcpu.work_fn = NULL;
}
