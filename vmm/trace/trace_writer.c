/* SPDX-License-Identifier: MIT */
/*
 * Trace file writer. Each record is assembled in a scratch buffer and
 * handed to the kernel in one write(); nothing is kept back in user space
 * between calls, so whatever happens to the VMM afterwards, the file holds
 * every record this writer returned from. A failed or short write is cut
 * back to the previous record boundary, so readers never see half a
 * record from us, and the writer switches to counting what it loses.
 */
#include "vmm/trace/trace_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "vmm/error.h"
#include "vmm/version.h"

/*
 * When a write first fails, the writer makes room for END behind the last
 * complete record, so the file itself says how many events it lacks: it
 * cuts back the newest records (at most RECENT of them; their events are
 * counted as lost too) until END_ROOM bytes are known to fit, that is the
 * bytes the failed write did store plus the bytes cut. END's exit reason
 * is then cut to END_REASON_MAX.
 */
#define END_REASON_MAX 64
#define END_ROOM (TRACE_RECORD_OVERHEAD + 32 + END_REASON_MAX)
#define RECENT 8

struct trace_writer {
	int fd;
	char *path;
	uint64_t off; /* end of the last complete record */
	bool failed;
	uint64_t written; /* events stored */
	uint64_t lost;	  /* events given to us but not stored */
	uint8_t *buf;	  /* scratch for one record */
	size_t cap;
	char error[256];  /* why the first write failed */
	/* The newest EVENTS, DROPS and MARK records (a ring), which a failed
	 * write may cut back to make room for END. */
	struct {
		uint64_t off, events;
	} recent[RECENT];
	unsigned recent_next, nr_recent;
	uint64_t emitting_events; /* events in the record being written */
};

static void put_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put_u64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Makes room for a record with a payload of len bytes; returns the payload
 * pointer (the record header goes before it). */
static uint8_t *reserve(struct trace_writer *w, size_t len)
{
	size_t need = len + TRACE_RECORD_OVERHEAD;

	if (need > w->cap) {
		uint8_t *p = realloc(w->buf, need);

		if (!p) {
			et_error("out of memory");
			return NULL;
		}
		w->buf = p;
		w->cap = need;
	}
	return w->buf + 8;
}

/* Writes all of buf at the end of the file, or cuts the file back. */
static int write_all(struct trace_writer *w, const uint8_t *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(w->fd, buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int saved = n < 0 ? errno : ENOSPC;
			uint64_t cut = w->off, room = done, bad_off = w->off;
			uint64_t popped = 0;

			/* The first failure: make room for END (see RECENT). */
			while (!w->failed && room < END_ROOM && w->nr_recent) {
				unsigned i = (w->recent_next + RECENT - 1) % RECENT;

				room += cut - w->recent[i].off;
				cut = w->recent[i].off;
				popped += w->recent[i].events;
				w->recent_next = i;
				w->nr_recent--;
			}
			/* Drop the partial record (and any cut) so readers see a
			 * clean end. */
			if ((done || cut != w->off) && ftruncate(w->fd, (off_t)cut) == 0 &&
			    lseek(w->fd, (off_t)cut, SEEK_SET) == (off_t)cut) {
				w->off = cut;
				w->written -= popped;
				w->lost += popped;
			}
			w->failed = true;
			errno = saved;
			et_error_errno("trace file %s: write failed at offset %llu "
				       "(events from here on are counted, not stored)",
				       w->path, (unsigned long long)bad_off);
			if (!w->error[0])
				snprintf(w->error, sizeof(w->error), "%s", et_last_error());
			return -1;
		}
		done += (size_t)n;
	}
	w->off += len;
	return 0;
}

/* Finishes the record reserved with reserve() and writes it. */
static int emit(struct trace_writer *w, uint32_t type, size_t len)
{
	uint32_t crc;

	put_u32(w->buf, type);
	put_u32(w->buf + 4, (uint32_t)len);
	crc = (uint32_t)crc32(0L, w->buf, (uInt)(len + 8));
	put_u32(w->buf + 8 + len, crc);
	if (write_all(w, w->buf, len + TRACE_RECORD_OVERHEAD)) {
		w->emitting_events = 0;
		return -1;
	}
	if (type == TRACE_REC_EVENTS || type == TRACE_REC_DROPS || type == TRACE_REC_MARK) {
		w->recent[w->recent_next].off = w->off - (len + TRACE_RECORD_OVERHEAD);
		w->recent[w->recent_next].events = w->emitting_events;
		w->recent_next = (w->recent_next + 1) % RECENT;
		if (w->nr_recent < RECENT)
			w->nr_recent++;
	}
	w->emitting_events = 0;
	return 0;
}

static size_t str_len(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	return n > TRACE_MAX_STRING ? TRACE_MAX_STRING : n;
}

/* u16 length + bytes. */
static uint8_t *put_str(uint8_t *p, const char *s)
{
	size_t n = str_len(s);

	put_u16(p, (uint16_t)n);
	if (n)
		memcpy(p + 2, s, n);
	return p + 2 + n;
}

/*
 * Two runs writing one file would interleave their records: the first
 * takes a lock on it for as long as it writes, and the second refuses to
 * start. The file is emptied only once the lock is held.
 */
static int open_locked(const char *path)
{
	struct stat st;
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0)
		return et_error_errno("cannot create trace file %s", path);
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		if (errno == EWOULDBLOCK)
			et_error("trace file %s is being written by another earlytrace run (it "
				 "holds a lock on it)",
				 path);
		else
			et_error_errno("cannot lock trace file %s", path);
		close(fd);
		return -1;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ftruncate(fd, 0)) {
		et_error_errno("cannot empty trace file %s", path);
		close(fd);
		return -1;
	}
	return fd;
}

int trace_writer_open(struct trace_writer **wp, const char *path, const struct trace_meta *meta)
{
	static const struct trace_meta none;
	struct trace_writer *w;
	uint8_t hdr[TRACE_FILE_HEADER_SIZE];
	const char *strs[5];
	struct timespec now;
	size_t len = 16;
	uint8_t *p;

	*wp = NULL;
	if (!meta)
		meta = &none;
	w = calloc(1, sizeof(*w));
	if (!w || !(w->path = strdup(path))) {
		free(w);
		return et_error("out of memory");
	}
	w->fd = open_locked(path);
	if (w->fd < 0) {
		free(w->path);
		free(w);
		return -1;
	}
	memcpy(hdr, TRACE_FILE_MAGIC, 8);
	put_u32(hdr + 8, TRACE_FILE_VERSION);
	put_u32(hdr + 12, TRACE_FILE_HEADER_SIZE);
	if (write_all(w, hdr, sizeof(hdr)))
		goto fail;

	/* META: u64 tsc_khz, u64 start time (ns), five strings. */
	strs[0] = EARLYTRACE_VERSION;
	strs[1] = meta->kernel_path;
	strs[2] = meta->build_id_hex;
	strs[3] = meta->symbol_source;
	strs[4] = meta->mode;
	for (int i = 0; i < 5; i++)
		len += 2 + str_len(strs[i]);
	p = reserve(w, len);
	if (!p)
		goto fail;
	clock_gettime(CLOCK_REALTIME, &now);
	put_u64(p, meta->tsc_khz);
	put_u64(p + 8, (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec);
	p += 16;
	for (int i = 0; i < 5; i++)
		p = put_str(p, strs[i]);
	if (emit(w, TRACE_REC_META, len))
		goto fail;
	*wp = w;
	return 0;
fail:
	close(w->fd);
	free(w->buf);
	free(w->path);
	free(w);
	return -1;
}

static bool is_function(const struct symbol *s)
{
	return s->type == 0 || s->type == 't' || s->type == 'T' || s->type == 'w' ||
	       s->type == 'W';
}

#define SYMBOLS_CHUNK (1u << 20) /* payload bytes per SYMBOLS record, about */

int trace_writer_symbols(struct trace_writer *w, const struct symtab *tab)
{
	size_t i = 0;

	if (w->failed)
		return 0;
	while (i < tab->nr) {
		size_t len = 4, end = i;
		uint32_t count = 0;
		uint8_t *p;

		/* One record's worth: names up to TRACE_MAX_STRING each. */
		while (end < tab->nr && len < SYMBOLS_CHUNK) {
			if (is_function(&tab->syms[end])) {
				len += 20 + str_len(tab->syms[end].name);
				count++;
			}
			end++;
		}
		if (!count) {
			i = end;
			continue;
		}
		p = reserve(w, len);
		if (!p)
			return -1;
		put_u32(p, count);
		p += 4;
		for (; i < end; i++) {
			const struct symbol *s = &tab->syms[i];

			if (!is_function(s))
				continue;
			put_u64(p, s->addr);
			put_u64(p + 8, s->size);
			p[16] = (uint8_t)s->type;
			p[17] = 0;
			p = put_str(p + 18, s->name);
		}
		if (emit(w, TRACE_REC_SYMBOLS, len))
			return -1;
	}
	return 0;
}

int trace_writer_events(struct trace_writer *w, const struct et_ring_record *ev, size_t n)
{
	while (n) {
		size_t k = n < TRACE_EVENTS_PER_RECORD ? n : TRACE_EVENTS_PER_RECORD;
		size_t len = k * sizeof(*ev);
		uint8_t *p;

		if (w->failed) {
			w->lost += n;
			return 0;
		}
		p = reserve(w, len);
		if (!p) {
			/* Cannot even assemble the record: count it as lost and
			 * stop, so the file has no gap. */
			w->failed = true;
			snprintf(w->error, sizeof(w->error), "trace file %s: %s", w->path,
				 et_last_error());
			w->lost += n;
			return -1;
		}
		/* The record layout is the ABI's, little-endian like the host. */
		memcpy(p, ev, len);
		w->emitting_events = k;
		if (emit(w, TRACE_REC_EVENTS, len)) {
			w->lost += n;
			return -1;
		}
		w->written += k;
		ev += k;
		n -= k;
	}
	return 0;
}

/* u64, u64, then text to the end of the payload. */
static int write_text_record(struct trace_writer *w, uint32_t type, uint64_t a, uint64_t b,
			     const char *text)
{
	size_t n = str_len(text);
	uint8_t *p;

	if (w->failed)
		return 0;
	p = reserve(w, 16 + n);
	if (!p)
		return -1;
	put_u64(p, a);
	put_u64(p + 8, b);
	if (n)
		memcpy(p + 16, text, n);
	return emit(w, type, 16 + n);
}

int trace_writer_drops(struct trace_writer *w, uint64_t dropped_total, uint64_t tsc,
		       const char *reason)
{
	return write_text_record(w, TRACE_REC_DROPS, dropped_total, tsc, reason);
}

int trace_writer_mark(struct trace_writer *w, uint64_t tsc, const char *text)
{
	/* The first u64 is reserved (0) so MARK and DROPS share a layout. */
	return write_text_record(w, TRACE_REC_MARK, 0, tsc, text);
}

int trace_writer_clock(struct trace_writer *w, uint64_t origin_tsc)
{
	uint8_t *p;

	if (w->failed)
		return 0;
	p = reserve(w, 8);
	if (!p)
		return -1;
	put_u64(p, origin_tsc);
	return emit(w, TRACE_REC_CLOCK, 8);
}

/* The kernel's event bytes are kept up to this (a trace_entry and its
 * fields; an event is at most a page). */
#define KEVENT_MAX_PAYLOAD 4096

int trace_writer_kevent(struct trace_writer *w, const struct trace_kevent *k)
{
	uint32_t raw = k->payload_len > KEVENT_MAX_PAYLOAD ? KEVENT_MAX_PAYLOAD : k->payload_len;
	size_t n = str_len(k->text);
	uint8_t *p;

	if (w->failed)
		return 0;
	p = reserve(w, 28 + raw + n);
	if (!p)
		return -1;
	put_u64(p, (uint64_t)k->cpu | (uint64_t)k->type << 32 | (uint64_t)k->kind << 48 |
			   (uint64_t)(k->truncated ? 1 : 0) << 56);
	put_u64(p + 8, k->tsc);
	put_u64(p + 16, k->ip);
	put_u32(p + 24, raw);
	if (raw)
		memcpy(p + 28, k->payload, raw);
	if (n)
		memcpy(p + 28 + raw, k->text, n);
	return emit(w, TRACE_REC_KEVENT, 28 + raw + n);
}

int trace_writer_close(struct trace_writer *w, uint64_t recorded, uint64_t dropped,
		       const char *exit_reason)
{
	int ret = 0;

	if (!w)
		return 0;
	{
		/* END: recorded, written, dropped, lost, exit reason. Tried
		 * even after a failure, into the room kept for it: it carries
		 * the exact lost count. */
		size_t n = str_len(exit_reason);
		bool was_failed = w->failed;
		uint8_t *p;

		if (was_failed && n > END_REASON_MAX)
			n = END_REASON_MAX;
		p = reserve(w, 32 + n);

		if (!p) {
			ret = -1;
		} else {
			put_u64(p, recorded);
			put_u64(p + 8, w->written);
			put_u64(p + 16, dropped);
			put_u64(p + 24, w->lost);
			if (n)
				memcpy(p + 32, exit_reason, n);
			if (emit(w, TRACE_REC_END, 32 + n) && !was_failed)
				ret = -1;
		}
	}
	if (close(w->fd) && !w->failed && !ret)
		ret = et_error_errno("trace file %s: close failed", w->path);
	free(w->buf);
	free(w->path);
	free(w);
	return ret;
}

uint64_t trace_writer_bytes(const struct trace_writer *w)
{
	return w ? w->off : 0;
}

uint64_t trace_writer_lost(const struct trace_writer *w)
{
	return w ? w->lost : 0;
}

uint64_t trace_writer_written(const struct trace_writer *w)
{
	return w ? w->written : 0;
}

const char *trace_writer_error(const struct trace_writer *w)
{
	return w && w->failed ? w->error : "";
}
