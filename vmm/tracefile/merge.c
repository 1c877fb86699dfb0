/* SPDX-License-Identifier: MIT */
/*
 * Events of a trace file in TSC order. The reader's validating pass notes
 * where the file's runs start (stretches whose events are in TSC order by
 * themselves); each run gets a reader of its own, and the merge yields
 * the earliest head next. A run ends where the next one starts. Ties go
 * to the earlier run, so events with equal TSCs keep their file order.
 */
#include <stdlib.h>

#include "vmm/tracefile/trace_file.h"
#include "vmm/util/error.h"

struct merge_run {
	struct trace_reader *rd;
	bool own;		  /* rd is a duplicate we close */
	uint64_t start_offset;	  /* the run's first event ... */
	size_t start_index;
	uint64_t end_offset;	  /* ... and where the next run starts */
	size_t end_index;
	bool last;		  /* runs to the end of the file */
	struct trace_record rec;  /* the EVENTS record being read */
	size_t i;		  /* next event in rec */
	bool has;		  /* cur holds the run's next event */
	struct et_ring_record cur;
};

struct trace_merge {
	size_t nr;
	struct merge_run runs[];
};

/* Is (offset, index) at or past the run's end? */
static bool past_end(const struct merge_run *run, uint64_t offset, size_t index)
{
	if (run->last)
		return false;
	return offset > run->end_offset || (offset == run->end_offset && index >= run->end_index);
}

/* Loads the run's next event into cur. 0, or -1 on a read error. */
static int advance(struct merge_run *run)
{
	int ret;

	run->has = false;
	for (;;) {
		if (run->rec.type == TRACE_REC_EVENTS && run->i < run->rec.nr_events) {
			if (past_end(run, run->rec.offset, run->i))
				return 0;
			run->cur = run->rec.events[run->i++];
			run->has = true;
			return 0;
		}
		ret = trace_reader_next(run->rd, &run->rec);
		if (ret <= 0)
			return ret;
		run->i = run->rec.offset == run->start_offset ? run->start_index : 0;
	}
}

int trace_merge_open(struct trace_reader *r, struct trace_merge **out)
{
	const struct trace_info *in = trace_reader_info(r);
	size_t nr = in->nr_runs > 1 && in->nr_runs <= TRACE_MERGE_MAX_RUNS ? in->nr_runs : 1;
	struct trace_merge *m = calloc(1, sizeof(*m) + nr * sizeof(m->runs[0]));

	*out = NULL;
	if (!m)
		return et_error("out of memory");
	m->nr = nr;
	for (size_t k = 0; k < nr; k++) {
		struct merge_run *run = &m->runs[k];

		run->last = k + 1 == nr;
		if (nr == 1) {
			/* One run, or too many to merge: the file as it is. */
			trace_reader_rewind(r);
			run->rd = r;
			run->start_offset = UINT64_MAX;
		} else {
			trace_reader_run(r, k, &run->start_offset, &run->start_index);
			if (!run->last)
				trace_reader_run(r, k + 1, &run->end_offset, &run->end_index);
			if (trace_reader_dup(r, run->start_offset, &run->rd)) {
				trace_merge_close(m);
				return -1;
			}
			run->own = true;
		}
		if (advance(run)) {
			trace_merge_close(m);
			return -1;
		}
	}
	*out = m;
	return 0;
}

int trace_merge_next(struct trace_merge *m, struct et_ring_record *ev)
{
	struct merge_run *best = NULL;

	for (size_t k = 0; k < m->nr; k++)
		if (m->runs[k].has && (!best || m->runs[k].cur.tsc < best->cur.tsc))
			best = &m->runs[k];
	if (!best)
		return 0;
	*ev = best->cur;
	return advance(best) ? -1 : 1;
}

void trace_merge_close(struct trace_merge *m)
{
	if (!m)
		return;
	for (size_t k = 0; k < m->nr; k++)
		if (m->runs[k].own)
			trace_reader_close(m->runs[k].rd);
	free(m);
}
