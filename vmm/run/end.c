// SPDX-License-Identifier: MIT
#include "vmm/run/end.h"

#include <stdio.h>

/* A status of STATUS_FROM_VALUE is the value the end carries; of
 * STATUS_SIGNAL, 128 plus it. */
enum { STATUS_FROM_VALUE = -1, STATUS_SIGNAL = -2 };

static const struct {
	const char *name;
	int status;
} ends[RUN_END_COUNT] = {
	[RUN_END_NONE] = { "running", EXIT_STATUS_ERROR },
	[RUN_END_DEBUG_EXIT] = { "debug-exit port", STATUS_FROM_VALUE },
	[RUN_END_RESET] = { "guest reset", 0 },
	[RUN_END_POWER_OFF] = { "guest power-off", 0 },
	[RUN_END_TIMEOUT] = { "timeout", EXIT_STATUS_TIMEOUT },
	[RUN_END_SIGNAL] = { "signal", STATUS_SIGNAL },
	[RUN_END_CONSOLE_QUIT] = { "console quit", 0 },
	[RUN_END_GUEST_CRASH] = { "guest crash", EXIT_STATUS_GUEST_CRASH },
	/* Nothing can wake it: as good as a crash for whoever waits. */
	[RUN_END_HALTED] = { "guest halted", EXIT_STATUS_GUEST_CRASH },
	[RUN_END_VMM_ERROR] = { "VMM error", EXIT_STATUS_ERROR },
	[RUN_END_TRACE_DONE] = { "trace complete", 0 },
	/* A hang is a timeout of another kind: timeout(1)'s status. */
	[RUN_END_HANG] = { "hang (no new events)", EXIT_STATUS_TIMEOUT },
	[RUN_END_GUEST_PANIC] = { "the end of its panic output", EXIT_STATUS_GUEST_PANIC },
};

const char *run_end_name(enum run_end end)
{
	return (unsigned)end < RUN_END_COUNT ? ends[end].name : "?";
}

int run_end_status(enum run_end end, int value)
{
	if ((unsigned)end >= RUN_END_COUNT)
		return EXIT_STATUS_ERROR;
	switch (ends[end].status) {
	case STATUS_FROM_VALUE:
		return value;
	case STATUS_SIGNAL:
		return EXIT_STATUS_SIGNAL_BASE + value;
	default:
		return ends[end].status;
	}
}

const char *run_end_describe(enum run_end end, const char *detail, char *buf, size_t len)
{
	if (detail)
		snprintf(buf, len, "%s (%s)", run_end_name(end), detail);
	else
		snprintf(buf, len, "%s", run_end_name(end));
	return buf;
}
