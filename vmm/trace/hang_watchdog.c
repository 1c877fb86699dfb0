/* SPDX-License-Identifier: MIT */
/* The hang watchdog's thread (--hang-timeout, flight_recorder.h): every
 * 20 ms it samples the progress of each vCPU and of the guest ring, and
 * asks hang_watch.c whether the run hangs; if so it stops the run as hung,
 * and flight_recorder_finish() reports it. */
#include "vmm/trace/flight_recorder.h"

#include <errno.h>
#include <signal.h>
#include <time.h>

#include "vmm/util/error.h"

#define FR_POLL_NS 20000000L /* the watchdog looks every 20 ms */

/* What it watches besides the events flight_recorder_add() counts: guest
 * memory that moves when the guest records without an exit. */
void flight_recorder_watch_batch(struct flight_recorder *fr, unsigned cpu,
				 const volatile uint64_t *cursor)
{
	if (fr->batches && cpu < fr->nr_cpus)
		atomic_store(&fr->batches[cpu], cursor);
}

void flight_recorder_watch_ring(struct flight_recorder *fr, const volatile uint64_t *head)
{
	atomic_store(&fr->guest_ring, head);
}

/* Guest memory, read while the guest runs: any change counts. */
static uint64_t guest_counter(const volatile uint64_t *_Atomic *slot)
{
	const volatile uint64_t *c = atomic_load(slot);

	return c ? *c : 0;
}

/* Each vCPU's progress: its events and its batch's cursor (a drain moves
 * both, never back to the same sum: an event counts 1, a record 32). */
static void progress(struct flight_recorder *fr, uint64_t *per_cpu, uint64_t *shared)
{
	for (unsigned i = 0; i < fr->nr_cpus; i++)
		per_cpu[i] = atomic_load_explicit(&fr->cpu_events[i], memory_order_relaxed) +
			     guest_counter(&fr->batches[i]);
	*shared = atomic_load_explicit(&fr->other_events, memory_order_relaxed) +
		  guest_counter(&fr->guest_ring);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *watchdog_main(void *arg)
{
	struct flight_recorder *fr = arg;
	const struct timespec poll = { 0, FR_POLL_NS };
	uint64_t *per_cpu = fr->hang.values, shared;

	while (!atomic_load(&fr->watchdog_stop)) {
		double now = now_s();

		progress(fr, per_cpu, &shared);
		if (hang_watch_sample(&fr->hang, per_cpu, shared, now)) {
			fr->hang_at = now;
			atomic_store(&fr->hung, true);
			vm_request_stop(&fr->m->vm, RUN_END_HANG);
			machine_kick(fr->m);
			break;
		}
		nanosleep(&poll, NULL);
	}
	return NULL;
}

int flight_recorder_start(struct flight_recorder *fr, double hang_timeout_s)
{
	sigset_t all, old;
	int err;

	if (hang_timeout_s <= 0)
		return 0;
	fr->hang_timeout_s = hang_timeout_s;
	if (hang_watch_init(&fr->hang, fr->nr_cpus, hang_timeout_s))
		return -1;
	/* The VMM's signals are for the vCPU thread, never this one. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&fr->watchdog, NULL, watchdog_main, fr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		errno = err;
		return et_error_errno("--hang-timeout: cannot start the watchdog thread");
	}
	fr->watchdog_running = true;
	return 0;
}

void flight_recorder_stop(struct flight_recorder *fr)
{
	if (!fr->watchdog_running)
		return;
	atomic_store(&fr->watchdog_stop, true);
	pthread_join(fr->watchdog, NULL);
	fr->watchdog_running = false;
}
