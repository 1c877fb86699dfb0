/* SPDX-License-Identifier: MIT */
/*
 * What the tracer's breakpoint exits cost the guest, measured while it
 * runs (vmm/trace/exit_cost.h).
 */
#include "vmm/trace/exit_cost.h"

#include <stdio.h>
#include <stdlib.h>

#include "vmm/kvm/kvm_traits.h"
#include "vmm/run/end.h"
#include "vmm/util/error.h"
#include "vmm/util/sorted.h"

void exit_cost_time_at_start(struct exit_cost *c, struct vcpu *vcpu)
{
	const struct kvm_traits *t = vcpu->vm->traits;

	if (!t || !t->int3_exit_ticks || !vcpu_guest_tsc_is_free(vcpu))
		return;
	c->exit_rest_ticks = t->int3_exit_ticks;
	c->exits_timed = true;
}

/* The nanoseconds this thread has spent waiting for a CPU on the host's
 * run queues (other processes ran), the second field of schedstat; -1
 * where the host does not say (no CONFIG_SCHED_INFO). The guest's TSC
 * runs on meanwhile: an untraced run is as exposed to it as a traced one,
 * per second, but a traced run is longer and gets more. */
static int host_wait_ns(uint64_t *ns)
{
	FILE *f = fopen("/proc/thread-self/schedstat", "r");
	unsigned long long run, wait;
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%llu %llu", &run, &wait) == 2;
	fclose(f);
	if (!ok)
		return -1;
	*ns = wait;
	return 0;
}

void exit_cost_start_waiting(struct exit_cost *c)
{
	c->host_wait_known = host_wait_ns(&c->host_wait_ns) == 0;
}

/* Whether this breakpoint exit (a call's or a return's; n of them came
 * before it) times its round trip again: the first EXIT_COST_FIRST,
 * then every rest_every-th; a full array keeps every other sample and
 * halves the rate. */
static bool rest_sample_due(struct exit_cost *c, uint64_t n)
{
	if (n < EXIT_COST_FIRST)
		return c->nr_rest_samples < EXIT_COST_FIRST;
	if (!c->rest_every)
		c->rest_every = EXIT_COST_EVERY;
	if (n % c->rest_every)
		return false;
	if (c->nr_rest_samples == EXIT_COST_SAMPLES) {
		for (unsigned i = 0; i < EXIT_COST_SAMPLES / 2; i++)
			c->rest_samples[i] = c->rest_samples[2 * i];
		c->nr_rest_samples = EXIT_COST_SAMPLES / 2;
		c->rest_every *= 2;
		return n % c->rest_every == 0;
	}
	return true;
}

/* In the guest's own state: this exit once more (its time is charged
 * with the rest of the exit). */
bool exit_cost_time_again(struct exit_cost *c, struct vcpu *vcpu, const struct kvm_regs *regs,
			  uint64_t exits)
{
	uint64_t waited = vcpu->wait.waited_ns;
	int timed;

	if (!rest_sample_due(c, exits))
		return true;
	timed = vcpu_time_exit_again(vcpu, regs, &c->rest_samples[c->nr_rest_samples]);
	/* A round trip the thread spent partly waiting for a host CPU is the
	 * host's time, which the WAIT records take out: not a sample. */
	if (timed == 0 && vcpu->wait.waited_ns != waited)
		return true;
	if (timed == 0) {
		c->nr_rest_samples++;
		c->rest_timed++;
	} else if (timed == -2) {
		/* Never resume the guest from registers it has left. */
		et_error("an exit timed at a breakpoint ended elsewhere (an NMI ran "
			 "first): the guest's state cannot be resumed");
		vm_request_stop(vcpu->vm, RUN_END_VMM_ERROR);
		return false;
	}
	return true;
}

void exit_cost_finish(struct exit_cost *c)
{
	uint64_t waited_ns = 0;

	c->waited_known = c->host_wait_known && host_wait_ns(&waited_ns) == 0 &&
			  waited_ns >= c->host_wait_ns;
	c->waited_ns = c->waited_known ? waited_ns - c->host_wait_ns : 0;
	/* The round trip as timed in the run where it could be. */
	if (c->nr_rest_samples) {
		uint64_t median, limit;
		unsigned __int128 sum = 0;
		unsigned n = 0;

		qsort(c->rest_samples, c->nr_rest_samples, sizeof(c->rest_samples[0]), sorted_compare_u64);
		median = c->rest_samples[c->nr_rest_samples / 2];
		limit = median > UINT64_MAX / EXIT_COST_OUTLIER ? UINT64_MAX : median * EXIT_COST_OUTLIER;
		for (; n < c->nr_rest_samples && c->rest_samples[n] <= limit; n++)
			sum += c->rest_samples[n];
		c->exit_rest_ticks = (uint64_t)(sum / n); /* n > 0: the median is in */
	}
}
