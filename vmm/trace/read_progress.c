/* SPDX-License-Identifier: MIT */
#include "vmm/trace/read_progress.h"

#include <string.h>
#include <unistd.h>

#include "vmm/util/error.h"

static void sample(void *ctx, struct progress_sample *s)
{
	struct read_progress *rp = ctx;
	const struct trace_reader *r = __atomic_load_n(&rp->file, __ATOMIC_ACQUIRE);

	s->events = trace_reader_events_read() - rp->first;
	s->dropped = r ? trace_reader_info(r)->dropped : 0;
	/* Nothing else prints while a file is converted. */
	s->quiet_marker = 0;
}

void read_progress_start(struct read_progress *rp)
{
	memset(rp, 0, sizeof(*rp));
	rp->first = trace_reader_events_read();
	if (progress_start(&rp->line, STDERR_FILENO, 0.5, sample, rp))
		et_clear_error(); /* no line is no reason to fail the conversion */
}

void read_progress_file(struct read_progress *rp, const struct trace_reader *r)
{
	__atomic_store_n(&rp->file, r, __ATOMIC_RELEASE);
}

void read_progress_output(struct read_progress *rp, FILE *out)
{
	if (isatty(fileno(out)))
		progress_stop(&rp->line);
}

void read_progress_stop(struct read_progress *rp)
{
	progress_stop(&rp->line);
	__atomic_store_n(&rp->file, NULL, __ATOMIC_RELEASE);
}
