/* SPDX-License-Identifier: MIT */
#include "vmm/trace/hang_watch.h"

#include <stdlib.h>
#include <string.h>

#include "vmm/util/error.h"

int hang_watch_init(struct hang_watch *hw, unsigned nr_cpus, double timeout_s)
{
	memset(hw, 0, sizeof(*hw));
	hw->nr_cpus = nr_cpus ? nr_cpus : 1;
	hw->timeout_s = timeout_s;
	hw->last = calloc(hw->nr_cpus, sizeof(*hw->last));
	hw->since = calloc(hw->nr_cpus, sizeof(*hw->since));
	hw->moved = calloc(hw->nr_cpus, sizeof(*hw->moved));
	hw->values = calloc(hw->nr_cpus, sizeof(*hw->values));
	if (!hw->last || !hw->since || !hw->moved || !hw->values) {
		hang_watch_free(hw);
		return et_error("out of memory for the hang watchdog");
	}
	return 0;
}

void hang_watch_free(struct hang_watch *hw)
{
	free(hw->last);
	free(hw->since);
	free(hw->moved);
	free(hw->values);
	hw->values = NULL;
	hw->last = NULL;
	hw->since = NULL;
	hw->moved = NULL;
}

bool hang_watch_sample(struct hang_watch *hw, const uint64_t *values, uint64_t shared,
		       double now)
{
	bool quiet = true;

	if (!hw->primed) {
		for (unsigned i = 0; i < hw->nr_cpus; i++) {
			hw->last[i] = values[i];
			hw->since[i] = now;
		}
		hw->shared_last = shared;
		hw->shared_since = now;
		hw->primed = true;
		return false;
	}
	for (unsigned i = 0; i < hw->nr_cpus; i++) {
		if (values[i] != hw->last[i]) {
			hw->last[i] = values[i];
			hw->since[i] = now;
			hw->moved[i] = true;
		}
		quiet = quiet && now - hw->since[i] >= hw->timeout_s;
	}
	if (shared != hw->shared_last) {
		hw->shared_last = shared;
		hw->shared_since = now;
	}
	/* One vCPU moving is progress: the others may just wait for it. */
	return quiet && now - hw->shared_since >= hw->timeout_s;
}

double hang_watch_quiet_s(const struct hang_watch *hw, unsigned cpu, double now)
{
	if (!hw->primed || cpu >= hw->nr_cpus)
		return 0;
	return now - hw->since[cpu];
}

bool hang_watch_ever_moved(const struct hang_watch *hw, unsigned cpu)
{
	return hw->primed && cpu < hw->nr_cpus && hw->moved[cpu];
}
