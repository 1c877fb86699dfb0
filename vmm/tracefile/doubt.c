/* SPDX-License-Identifier: MIT */
/*
 * Checks that doubt a trace file against itself: its END record's count,
 * records after END, a file that shrank between two passes
 * (vmm/tracefile/doubt.h).
 */
#include "vmm/tracefile/doubt.h"

#include <inttypes.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include "vmm/tracefile/reader_internal.h"
#include "vmm/util/error.h"

/* Records the first reason to doubt the file: what it holds disagrees with
 * its own END. */
static int doubt(struct trace_reader *r, const char *fmt, ...)
{
	char text[256];
	va_list ap;

	if (r->strings[STR_DOUBT])
		return 0;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return trace_reader_set_string(r, STR_DOUBT, (const uint8_t *)text, strlen(text));
}

int trace_doubt_end_count(struct trace_reader *r, const struct trace_record *end)
{
	/* The writer stores every EVENTS record before END and counts their
	 * events in it: a difference means records were removed, added or
	 * repeated, whatever their CRCs say. */
	if (end->written == r->info.nr_events)
		return 0;
	return doubt(r, "the file holds %" PRIu64 " events before its END, which says %" PRIu64
			" were written: records were removed or added after the run",
		     r->info.nr_events, end->written);
}

int trace_doubt_after_end(struct trace_reader *r)
{
	/* END is the last record: what follows it (a second copy of the
	 * records, another run's) is not read as this run's. */
	if (doubt(r, "%" PRIu64 " bytes follow the END record (not read): records "
		     "were added after the run",
		  r->limit - r->off))
		return -1;
	r->limit = r->off;
	return 0;
}

/* A second pass would silently give less than the first. */
int trace_doubt_shrank(struct trace_reader *r, uint64_t off)
{
	struct stat st;

	return et_error("trace file %s changed while it was read: it was %" PRIu64
			" bytes when opened, now %lld (nothing after offset %" PRIu64
			" could be read again)",
			r->path, r->file_size,
			fstat(fileno(r->f), &st) ? -1LL : (long long)st.st_size, off);
}
