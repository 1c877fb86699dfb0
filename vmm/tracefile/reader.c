/* SPDX-License-Identifier: MIT */
/*
 * Trace file reader: opens a file and reads it record by record. Files are
 * untrusted: every length is checked against the record, the file and
 * TRACE_MAX_PAYLOAD before anything is read, and every record's CRC is
 * verified before its payload is looked at. Records are streamed through
 * one payload buffer, so memory stays bounded by the largest record plus
 * the symbols and notes. What the opening pass learns from the records is
 * scan.c's; the checks against the file's own END, doubt.c's.
 */
#include "vmm/tracefile/trace_file.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "vmm/tracefile/doubt.h"
#include "vmm/tracefile/reader_internal.h"
#include "vmm/tracefile/scan.h"
#include "vmm/util/error.h"
#include "vmm/util/input_file.h"
#include "vmm/util/printable.h"

/* Reads exactly n bytes at the current position; 1 on success, 0 if the
 * file ends first, -1 on an I/O error. */
static int read_exact(struct trace_reader *r, void *buf, size_t n)
{
	size_t got = fread(buf, 1, n, r->f);

	if (got == n)
		return 1;
	if (ferror(r->f))
		return et_error_errno("trace file %s: read error", r->path);
	return 0;
}

static void mark_truncated(struct trace_reader *r, uint64_t off)
{
	if (r->scanning) {
		r->info.truncated = true;
		r->info.truncated_at = off;
	}
	r->limit = off;
}

/*
 * The file ends before the part the reader checked when it opened it. While
 * opening, that is a final record cut short; later, the file shrank under
 * the reader.
 */
static int ended_early(struct trace_reader *r, uint64_t off)
{
	if (r->scanning) {
		mark_truncated(r, off);
		return 0;
	}
	return trace_doubt_shrank(r, off);
}

/* Reads the record at r->off. 1, 0 at the end (or a truncated record),
 * -1 on corruption or I/O errors. */
/* Events read by every reader of this process, for progress lines: the
 * line's thread loads it while a reader adds to it. */
static uint64_t events_read;

uint64_t trace_reader_events_read(void)
{
	return __atomic_load_n(&events_read, __ATOMIC_RELAXED);
}

static int read_record(struct trace_reader *r, struct trace_record *rec)
{
	uint8_t hdr[8];
	uint32_t type, len, crc;
	uint64_t off = r->off;
	int got;

	if (off >= r->limit)
		return 0;
	/* A seek drops stdio's buffer: only when not already there. */
	if (r->fpos != off && fseeko(r->f, (off_t)off, SEEK_SET))
		return et_error_errno("trace file %s: seek failed", r->path);
	r->fpos = 0;
	if (r->limit - off < sizeof(hdr)) {
		mark_truncated(r, off);
		return 0;
	}
	got = read_exact(r, hdr, sizeof(hdr));
	if (got <= 0) {
		if (!got)
			return ended_early(r, off);
		return got;
	}
	type = get_u32(hdr);
	len = get_u32(hdr + 4);
	/* No record has type 0 or an empty payload: this is where the writer
	 * stopped, in the space it had allocated ahead (it was killed before
	 * it could cut that off). The records end here. */
	if (type == 0 && len == 0) {
		if (r->scanning)
			r->info.unwritten_tail = r->limit - off;
		r->limit = off;
		return 0;
	}
	if (len > TRACE_MAX_PAYLOAD)
		return trace_reader_corrupt(r, off, "payload length too large");
	if (r->limit - off - sizeof(hdr) < (uint64_t)len + 4) {
		/* Claims more than the file has: the final record, cut short. */
		mark_truncated(r, off);
		return 0;
	}
	if ((size_t)len + 5 > r->cap) {
		size_t cap = (size_t)len + 5 > 65536 ? (size_t)len + 5 : 65536;
		uint8_t *b = malloc(cap);

		if (!b)
			return et_error("out of memory");
		free(r->buf);
		r->buf = b;
		r->cap = cap;
	}
	got = read_exact(r, r->buf, (size_t)len + 4);
	if (got <= 0) {
		if (!got)
			return ended_early(r, off);
		return got;
	}
	r->fpos = off + sizeof(hdr) + len + 4;
	crc = (uint32_t)crc32(0L, hdr, sizeof(hdr));
	crc = (uint32_t)crc32(crc, r->buf, len);
	if (crc != get_u32(r->buf + len))
		return et_error("trace file %s: CRC mismatch in record at offset %" PRIu64
				" (type %u, %u bytes): the file is corrupt",
				r->path, off, type, len);
	r->buf[len] = '\0';

	memset(rec, 0, sizeof(*rec));
	rec->type = type;
	rec->len = len;
	rec->offset = off;
	rec->payload = r->buf;
	rec->text = "";
	switch (type) {
	case TRACE_REC_EVENTS:
		if (len % sizeof(struct et_ring_record))
			return trace_reader_corrupt(r, off,
						    "EVENTS length is not a whole number of events");
		/* malloc'ed buffer: suitably aligned for the records. */
		rec->events = (const struct et_ring_record *)(const void *)r->buf;
		rec->nr_events = len / sizeof(struct et_ring_record);
		__atomic_fetch_add(&events_read, rec->nr_events, __ATOMIC_RELAXED);
		break;
	case TRACE_REC_DROPS:
	case TRACE_REC_MARK:
		if (len < 16)
			return trace_reader_corrupt(r, off, "DROPS/MARK record too short");
		rec->dropped_total = get_u64(r->buf);
		rec->tsc = get_u64(r->buf + 8);
		rec->text = (const char *)r->buf + 16;
		printable_sanitize((char *)r->buf + 16, len - 16);
		break;
	case TRACE_REC_KEVENT: {
		uint64_t word = len >= 28 ? get_u64(r->buf) : 0;
		struct trace_kevent *k = &rec->kevent;

		if (len < 28 || get_u32(r->buf + 24) > len - 28)
			return trace_reader_corrupt(r, off, "KEVENT record too short");
		k->cpu = (uint32_t)word;
		k->type = (uint16_t)(word >> 32);
		k->kind = (uint8_t)(word >> 48);
		k->truncated = (word >> 56) & 1;
		k->tsc = rec->tsc = get_u64(r->buf + 8);
		k->ip = get_u64(r->buf + 16);
		k->payload_len = get_u32(r->buf + 24);
		k->payload = r->buf + 28;
		k->text = rec->text = (const char *)r->buf + 28 + k->payload_len;
		printable_sanitize((char *)k->text, len - 28 - k->payload_len);
		break;
	}
	case TRACE_REC_OVERHEAD:
		if (len < TRACE_OVERHEAD_LEN_V1)
			return trace_reader_corrupt(r, off, "OVERHEAD record too short");
		rec->tsc = get_u64(r->buf);
		break;
	case TRACE_REC_CLOCK:
		if (len < 8)
			return trace_reader_corrupt(r, off, "CLOCK record too short");
		rec->tsc = get_u64(r->buf);
		break;
	case TRACE_REC_WAIT:
		if (len < TRACE_WAIT_LEN)
			return trace_reader_corrupt(r, off, "WAIT record too short");
		rec->tsc = get_u64(r->buf);
		break;
	case TRACE_REC_END:
		if (len < 32)
			return trace_reader_corrupt(r, off, "END record too short");
		rec->recorded = get_u64(r->buf);
		rec->written = get_u64(r->buf + 8);
		rec->dropped = get_u64(r->buf + 16);
		rec->lost = get_u64(r->buf + 24);
		rec->text = (const char *)r->buf + 32;
		printable_sanitize((char *)r->buf + 32, len - 32);
		break;
	default:
		/* META, SYMBOLS are decoded by the scan; unknown types are
		 * skipped by readers that do not know them. */
		break;
	}
	r->off = off + sizeof(hdr) + len + 4;
	return 1;
}

static void fill_strings(struct trace_reader *r)
{
	const char **dst[9] = { &r->info.tool_version, &r->info.kernel_path,
				&r->info.build_id_hex, &r->info.symbol_source,
				&r->info.mode,	       &r->info.drop_reason,
				&r->info.last_mark,    &r->info.exit_reason,
				&r->info.doubt };

	for (int i = 0; i < 9; i++)
		*dst[i] = r->strings[i] ? r->strings[i] : "";
}

int trace_reader_open(struct trace_reader **rp, const char *path)
{
	struct trace_reader *r;
	uint8_t hdr[TRACE_FILE_HEADER_SIZE];
	struct trace_record rec;
	struct stat st;
	uint32_t hlen;
	int ret;

	*rp = NULL;
	r = calloc(1, sizeof(*r));
	if (!r || !(r->path = strdup(path))) {
		free(r);
		return et_error("out of memory");
	}
	fill_strings(r);
	r->f = input_fopen("trace file ", path); /* never blocks on a FIFO */
	if (!r->f)
		goto fail;
	if (fstat(fileno(r->f), &st)) {
		et_error_errno("trace file %s", path);
		goto fail;
	}
	r->file_size = (uint64_t)st.st_size;
	ret = read_exact(r, hdr, sizeof(hdr));
	if (ret <= 0) {
		if (!ret)
			et_error("%s: not an earlytrace trace file (too short)", path);
		goto fail;
	}
	if (memcmp(hdr, TRACE_FILE_MAGIC, 8)) {
		et_error("%s: not an earlytrace trace file (bad magic)", path);
		goto fail;
	}
	r->info.version = get_u32(hdr + 8);
	if (r->info.version < TRACE_FILE_MIN_VERSION || r->info.version > TRACE_FILE_VERSION) {
		et_error("%s: trace file version %u is not supported (this earlytrace reads "
			 "versions %d to %d)",
			 path, r->info.version, TRACE_FILE_MIN_VERSION, TRACE_FILE_VERSION);
		goto fail;
	}
	hlen = get_u32(hdr + 12);
	if (hlen < TRACE_FILE_HEADER_SIZE || hlen > 4096 || hlen > r->file_size) {
		et_error("%s: corrupt trace file header (header length %u)", path, hlen);
		goto fail;
	}
	r->first_record = r->off = hlen;
	r->limit = r->file_size;

	/* The validating pass: totals, META, SYMBOLS, notes. */
	r->scanning = true;
	while ((ret = read_record(r, &rec)) > 0) {
		if (trace_scan_record(r, &rec))
			goto fail;
		if (rec.type == TRACE_REC_END && r->off < r->limit) {
			if (trace_doubt_after_end(r))
				goto fail;
			break;
		}
	}
	if (ret < 0)
		goto fail;
	r->scanning = false;
	r->info.data_size = r->limit;
	trace_scan_finish(r);
	fill_strings(r);
	r->off = r->first_record;
	*rp = r;
	return 0;
fail:
	trace_reader_close(r);
	return -1;
}

void trace_reader_close(struct trace_reader *r)
{
	if (!r)
		return;
	if (r->f)
		fclose(r->f);
	for (size_t i = 0; i < sizeof(r->strings) / sizeof(r->strings[0]); i++)
		free(r->strings[i]);
	while (r->names) {
		struct name_block *next = r->names->next;

		free(r->names);
		r->names = next;
	}
	for (size_t i = 0; i < r->nr_notes; i++)
		free((char *)r->notes[i].text);
	free(r->notes);
	free(r->waits);
	for (size_t i = 0; i < r->nr_drops; i++)
		free(r->drops[i].reason);
	free(r->drops);
	free(r->tab.syms);
	free(r->buf);
	free(r->path);
	free(r);
}

int64_t trace_time_ns(const struct trace_info *in, uint64_t tsc)
{
	uint64_t d = tsc >= in->origin_tsc ? tsc - in->origin_tsc : in->origin_tsc - tsc;
	unsigned __int128 ns = in->tsc_khz ? (unsigned __int128)d * 1000000u / in->tsc_khz : d;
	int64_t t = ns > INT64_MAX ? INT64_MAX : (int64_t)ns;

	return tsc >= in->origin_tsc ? t : -t;
}

const char *trace_origin_text(const struct trace_info *in)
{
	return in->has_origin ? "guest time since its first instruction"
			      : "time since the earliest event (the file has no CLOCK record)";
}

const struct trace_info *trace_reader_info(const struct trace_reader *r)
{
	return &r->info;
}

const struct symtab *trace_reader_symtab(const struct trace_reader *r)
{
	return &r->tab;
}

const struct trace_note *trace_reader_notes(const struct trace_reader *r, size_t *nr)
{
	*nr = r->nr_notes;
	return r->notes;
}

int trace_reader_next(struct trace_reader *r, struct trace_record *rec)
{
	return read_record(r, rec);
}

int trace_reader_rewind(struct trace_reader *r)
{
	r->off = r->first_record;
	return 0;
}

bool trace_reader_run(const struct trace_reader *r, size_t i, uint64_t *offset, size_t *index)
{
	if (i >= r->info.nr_runs || i >= TRACE_MERGE_MAX_RUNS)
		return false;
	*offset = r->runs[i].offset;
	*index = r->runs[i].index;
	return true;
}

int trace_reader_dup(const struct trace_reader *r, uint64_t offset, struct trace_reader **out)
{
	struct trace_reader *d = calloc(1, sizeof(*d));
	char proc[64];

	*out = NULL;
	if (!d || !(d->path = strdup(r->path))) {
		free(d);
		return et_error("out of memory");
	}
	fill_strings(d);
	/* The same file the first reader has open, even when its name is
	 * gone (earlytrace trace removes its temporary file before printing
	 * it) or now names another file. */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fileno(r->f));
	d->f = fopen(proc, "rb");
	if (!d->f)
		d->f = input_fopen("trace file ", d->path);
	if (!d->f) {
		trace_reader_close(d);
		return -1;
	}
	/* Only the part the first reader validated, which is what it reports. */
	d->file_size = r->file_size;
	d->first_record = r->first_record;
	d->limit = r->limit;
	d->off = offset < r->first_record ? r->first_record : offset;
	*out = d;
	return 0;
}

const char *trace_reader_state(const struct trace_reader *r, char *buf, size_t len)
{
	const struct trace_info *in = &r->info;
	size_t n;

	if (in->has_end)
		n = (size_t)snprintf(buf, len, "finished: %s",
				     in->exit_reason[0] ? in->exit_reason : "no reason given");
	else if (in->nr_marks)
		n = (size_t)snprintf(buf, len,
				     "run did not finish cleanly: last mark '%s', %" PRIu64
				     " events written",
				     in->last_mark, in->nr_events);
	else
		n = (size_t)snprintf(buf, len,
				     "run did not finish cleanly: %" PRIu64 " events written",
				     in->nr_events);
	if (in->truncated && n < len)
		n += (size_t)snprintf(buf + n, len - n, "; file truncated after %" PRIu64 " events",
				      in->nr_events);
	if (in->doubt[0] && n < len)
		snprintf(buf + n, len - n, "; but %s", in->doubt);
	return buf;
}
