/* SPDX-License-Identifier: MIT */
/*
 * The trace file reader's state, shared by the files that make up the
 * reader (reader.c reads records one by one, scan.c learns what
 * the file holds from them at open, doubt.c checks the file against
 * its own END) and by nobody else: users see struct trace_reader only
 * through vmm/tracefile/trace_file.h.
 */
#ifndef VMM_TRACEFILE_READER_INTERNAL_H
#define VMM_TRACEFILE_READER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vmm/tracefile/trace_file.h"

struct name_block {
	struct name_block *next;
	char names[];
};

struct trace_reader {
	FILE *f;
	char *path;
	uint64_t file_size;
	uint64_t first_record; /* offset of the first record */
	uint64_t limit;	       /* end of the validated part */
	uint64_t off;	       /* next record */
	uint64_t fpos;	       /* where f stands after the last record read
				* (0: unknown), so reading on needs no seek */
	uint8_t *buf;	       /* payload + CRC + NUL */
	size_t cap;
	bool scanning;

	struct trace_info info;
	char *strings[9]; /* owned info strings */
	struct symtab tab;
	size_t tab_cap;
	struct name_block *names;
	struct trace_note *notes;
	size_t nr_notes, notes_cap;
	struct trace_wait *waits;
	size_t waits_cap;
	/* Each DROPS reason is its own running total (the host buffer's, the
	 * guest ring's, the kernel ring's): its last total, by reason. */
	struct drop_stream {
		char *reason;
		uint64_t total;
	} *drops;
	size_t nr_drops;
	/* Where each run of events in TSC order starts (the first
	 * TRACE_MERGE_MAX_RUNS of them; info.nr_runs counts them all). */
	struct {
		uint64_t offset;
		size_t index;
	} runs[TRACE_MERGE_MAX_RUNS];
	uint64_t last_event_tsc;
};

/* r->strings[], by what they hold. */
enum {
	STR_TOOL,
	STR_KERNEL,
	STR_BUILD_ID,
	STR_SYMBOLS,
	STR_MODE,
	STR_DROP_REASON,
	STR_LAST_MARK,
	STR_EXIT_REASON,
	STR_DOUBT,
};

/* The file is little-endian whatever the host. */
static inline uint16_t get_u16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t get_u64(const uint8_t *p)
{
	return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

/* (reader_shared.c) Replaces r->strings[idx] with a sanitized copy of n
 * bytes at p. 0, or -1 with an error. */
int trace_reader_set_string(struct trace_reader *r, int idx, const uint8_t *p, size_t n);
/* Fails with "record at offset off is corrupt: what". */
int trace_reader_corrupt(struct trace_reader *r, uint64_t off, const char *what);

#endif /* VMM_TRACEFILE_READER_INTERNAL_H */
