// SPDX-License-Identifier: MIT
/*
 * What every part of the reader (reader.c, scan.c, doubt.c) does to the
 * reader's state: keep a string the file gave, and fail on a corrupt
 * record. Apart from reader.c, so the parts depend on this and not on
 * each other.
 */
#include "vmm/tracefile/reader_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/util/error.h"
#include "vmm/util/printable.h"

static char *dup_text(const uint8_t *p, size_t n)
{
	char *s = malloc(n + 1);

	if (!s)
		return NULL;
	memcpy(s, p, n);
	s[n] = '\0';
	printable_sanitize(s, n);
	return s;
}

int trace_reader_set_string(struct trace_reader *r, int idx, const uint8_t *p, size_t n)
{
	char *s = dup_text(p, n);

	if (!s)
		return et_error("out of memory");
	free(r->strings[idx]);
	r->strings[idx] = s;
	return 0;
}

int trace_reader_corrupt(struct trace_reader *r, uint64_t off, const char *what)
{
	return et_error("trace file %s: record at offset %" PRIu64 " is corrupt: %s", r->path,
			off, what);
}
