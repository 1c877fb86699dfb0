/* SPDX-License-Identifier: MIT */
/*
 * Trace file writer. The file is written through a shared mapping of it:
 * a record is assembled in place, its header stored last, and once that
 * store is done the record is in the page cache, which outlives the VMM
 * (a SIGKILL loses nothing this writer returned from), without a system
 * call per record. The file is allocated ahead in large chunks
 * (posix_fallocate), so a full disk or a file-size limit shows when a
 * chunk is added, never as a fault on a page of the mapping; the
 * allocated but unwritten tail reads as zeros, which readers take as the
 * end of the records, and close cuts it off. When a chunk cannot be had,
 * the writer asks for just the record's room; when even that fails it
 * switches to counting what it loses. Room for END is always allocated
 * ahead, so the file can say how many events it lacks.
 *
 * An output that is not a regular file (/dev/null, a pipe), or a file on
 * a file system that cannot map it, gets each record assembled in a
 * buffer and handed to the kernel in one write().
 */
#include "vmm/tracefile/trace_file.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "vmm/util/error.h"
#include "vmm/util/version.h"

/*
 * END's exit reason is cut to END_REASON_MAX once a write has failed;
 * END_ROOM bytes are allocated ahead of the last record at all times.
 */
#define END_REASON_MAX 64
#define END_ROOM (TRACE_RECORD_OVERHEAD + 32 + END_REASON_MAX)
/* The file grows, and the mapping moves, this much at a time: four
 * system calls (allocate, map, populate, unmap) per 8 MiB, about 190,000
 * events. */
#define CHUNK (8ull << 20)

struct trace_writer {
	int fd;
	char *path;
	uint64_t off;	    /* end of the last complete record */
	uint64_t alloc_end; /* the file's size: allocated, zeros past off */
	uint8_t *map;	    /* the file from map_start, map_len bytes */
	uint64_t map_start;
	size_t map_len;
	size_t page;
	bool stream;	    /* not a regular file: write() each record */
	uint8_t *buf;	    /* stream: the record being assembled */
	size_t cap;
	bool failed;
	uint64_t written; /* events stored */
	uint64_t lost;	  /* events given to us but not stored */
	char error[256];  /* why the first write failed */
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

/* Allocates the file up to end bytes: 0, or an errno value. */
static int allocate(struct trace_writer *w, uint64_t end)
{
	sigset_t all, old;
	int err;

	if (end <= w->alloc_end)
		return 0;
	/* tmpfs gives up an allocation when a signal arrives (EINTR), and
	 * undoes it: the VMM signals its vCPU threads all the time, so a retry
	 * could start over forever. Signals wait until it is done instead. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = posix_fallocate(w->fd, (off_t)w->alloc_end, (off_t)(end - w->alloc_end));
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		/* Anything it did allocate would be zeros past our records:
		 * keep the file's size where it was. */
		(void)!ftruncate(w->fd, (off_t)w->alloc_end);
		return err;
	}
	w->alloc_end = end;
	return 0;
}

/* Maps the file from the page holding off to alloc_end. */
static int remap(struct trace_writer *w)
{
	uint64_t start = w->off / w->page * w->page;
	void *p;

	/* The new one first: if it cannot be had, the old one still holds
	 * the room kept for END. */
	p = mmap(NULL, (size_t)(w->alloc_end - start), PROT_READ | PROT_WRITE, MAP_SHARED, w->fd,
		 (off_t)start);
	if (p == MAP_FAILED)
		return errno;
#ifdef MADV_POPULATE_WRITE
	/* The pages' write faults now, in one call, rather than one fault
	 * every 93 events (the page cache's pages were allocated already:
	 * this takes no room). A kernel without it faults them one by one. */
	(void)madvise(p, (size_t)(w->alloc_end - start), MADV_POPULATE_WRITE);
#endif
	if (w->map)
		munmap(w->map, w->map_len);
	w->map = p;
	w->map_start = start;
	w->map_len = (size_t)(w->alloc_end - start);
	return 0;
}

static void fail(struct trace_writer *w, int err)
{
	w->failed = true;
	errno = err;
	et_error_errno("trace file %s: write failed at offset %llu "
		       "(events from here on are counted, not stored)",
		       w->path, (unsigned long long)w->off);
	if (!w->error[0])
		snprintf(w->error, sizeof(w->error), "%s", et_last_error());
}

/*
 * Makes room for a record with a payload of len bytes behind the last
 * one, and returns the payload's place in the mapping (the header goes
 * before it), or NULL with the writer failed. keep_end_room: whether END
 * must still fit behind it (every record but END).
 */
static uint8_t *reserve(struct trace_writer *w, size_t len, bool keep_end_room)
{
	uint64_t need = w->off + len + TRACE_RECORD_OVERHEAD + (keep_end_room ? END_ROOM : 0);
	int err;

	if (!w->stream && !w->map && w->off == 0 && !w->alloc_end) {
		/* The first record (the header): a file system that cannot map
		 * files gets write() instead. */
		if (allocate(w, CHUNK) == 0 && remap(w)) {
			(void)!ftruncate(w->fd, 0);
			w->alloc_end = 0;
			w->stream = true;
		}
	}
	if (w->stream) {
		if (len + TRACE_RECORD_OVERHEAD > w->cap) {
			uint8_t *p = realloc(w->buf, len + TRACE_RECORD_OVERHEAD);

			if (!p) {
				fail(w, ENOMEM);
				return NULL;
			}
			w->buf = p;
			w->cap = len + TRACE_RECORD_OVERHEAD;
		}
		return w->buf + 8;
	}
	if (need > w->alloc_end) {
		uint64_t old_end = w->alloc_end;

		/* A chunk ahead; near a limit, just what this record needs. */
		err = allocate(w, (need + CHUNK - 1) / CHUNK * CHUNK);
		if (err == ENOSPC || err == EFBIG || err == EDQUOT)
			err = allocate(w, need);
		if (err) {
			fail(w, err);
			return NULL;
		}
		if (w->alloc_end != old_end && (err = remap(w))) {
			fail(w, err);
			return NULL;
		}
	}
	return w->map + (w->off - w->map_start) + 8;
}

/* A stream's record, written whole or not at all (as far as we can). */
static int write_record(struct trace_writer *w, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(w->fd, w->buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fail(w, n < 0 ? errno : ENOSPC);
			return -1;
		}
		done += (size_t)n;
	}
	return 0;
}

/* Finishes the record reserved with reserve(): CRC, then the header with
 * one store, so a record is either all there or reads as the zero tail.
 * -1 only when a stream's write fails. */
static int emit(struct trace_writer *w, uint32_t type, size_t len)
{
	uint8_t *rec = w->stream ? w->buf : w->map + (w->off - w->map_start);
	uint8_t hdr[8];
	uint64_t word;
	uint32_t crc;

	put_u32(hdr, type);
	put_u32(hdr + 4, (uint32_t)len);
	crc = (uint32_t)crc32(0L, hdr, 8);
	crc = (uint32_t)crc32(crc, rec + 8, (uInt)len);
	put_u32(rec + 8 + len, crc);
	memcpy(&word, hdr, 8);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	memcpy(rec, &word, 8);
	if (w->stream && write_record(w, len + TRACE_RECORD_OVERHEAD))
		return -1;
	w->off += len + TRACE_RECORD_OVERHEAD;
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
 * start. The file is emptied only once the lock is held. A character
 * device (/dev/null, a terminal) is shared by design and not locked.
 */
static int open_locked(const char *path)
{
	struct stat st;
	/* Read and write: the file is mapped. A FIFO, a terminal or a device
	 * is written only, and so opened: a FIFO opened read-write would not
	 * wait for its reader, and what was written before one came would be
	 * gone with the last close. */
	bool stream = stat(path, &st) == 0 && !S_ISREG(st.st_mode);
	int fd = open(path, (stream ? O_WRONLY : O_RDWR) | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0)
		return et_error_errno("cannot create trace file %s", path);
	if (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode))
		return fd;
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
	w->page = (size_t)sysconf(_SC_PAGESIZE);
	w->fd = open_locked(path);
	if (w->fd < 0) {
		free(w->path);
		free(w);
		return -1;
	}
	{
		struct stat st;

		w->stream = fstat(w->fd, &st) || !S_ISREG(st.st_mode);
	}
	/* The header, as if it were a record without one of its own. */
	p = reserve(w, TRACE_FILE_HEADER_SIZE - TRACE_RECORD_OVERHEAD, true);
	if (!p)
		goto fail;
	p -= 8;
	memcpy(p, TRACE_FILE_MAGIC, 8);
	put_u32(p + 8, TRACE_FILE_VERSION);
	put_u32(p + 12, TRACE_FILE_HEADER_SIZE);
	if (w->stream && write_record(w, TRACE_FILE_HEADER_SIZE))
		goto fail;
	w->off = TRACE_FILE_HEADER_SIZE;

	/* META: u64 tsc_khz, u64 start time (ns), five strings. */
	strs[0] = EARLYTRACE_VERSION;
	strs[1] = meta->kernel_path;
	strs[2] = meta->build_id_hex;
	strs[3] = meta->symbol_source;
	strs[4] = meta->mode;
	for (int i = 0; i < 5; i++)
		len += 2 + str_len(strs[i]);
	p = reserve(w, len, true);
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
	/* Leaves the file with what was written (the reason is reported). */
	if (!w->stream)
		(void)!ftruncate(w->fd, (off_t)w->off);
	if (w->map)
		munmap(w->map, w->map_len);
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
		p = reserve(w, len, true);
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
		p = reserve(w, len, true);
		if (!p) {
			/* Nothing more is stored from here on, so the file has
			 * no gap. */
			w->lost += n;
			return -1;
		}
		/* The record layout is the ABI's, little-endian like the host. */
		memcpy(p, ev, len);
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
	p = reserve(w, 16 + n, true);
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
	p = reserve(w, 8, true);
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
	p = reserve(w, 28 + raw + n, true);
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

int trace_writer_overhead(struct trace_writer *w, const struct trace_overhead *o)
{
	const uint64_t v[TRACE_OVERHEAD_LEN / 8] = { o->tsc,	     o->exits,	     o->exit_ticks,
						     o->drains,	     o->drain_ticks, o->rest_ticks,
						     o->waited_ticks, o->flags };
	uint8_t *p;

	if (w->failed)
		return 0;
	p = reserve(w, sizeof(v), true);
	if (!p)
		return -1;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		put_u64(p + 8 * i, v[i]);
	return emit(w, TRACE_REC_OVERHEAD, sizeof(v));
}

int trace_writer_wait(struct trace_writer *w, const struct trace_wait *wait)
{
	uint8_t *p;

	if (w->failed)
		return 0;
	p = reserve(w, TRACE_WAIT_LEN, true);
	if (!p)
		return -1;
	put_u64(p, wait->tsc);
	put_u32(p + 8, wait->cpu);
	put_u32(p + 12, 0);
	put_u64(p + 16, wait->ticks);
	return emit(w, TRACE_REC_WAIT, TRACE_WAIT_LEN);
}

int trace_writer_close(struct trace_writer *w, uint64_t recorded, uint64_t dropped,
		       const char *exit_reason)
{
	bool was_failed;
	size_t n;
	uint8_t *p;
	int ret = 0;

	if (!w)
		return 0;
	/* END: recorded, written, dropped, lost, exit reason. Written even
	 * after a failure, into the room kept for it: it carries the exact
	 * lost count. A long reason that does not fit is cut. */
	was_failed = w->failed;
	n = str_len(exit_reason);
	p = was_failed ? NULL : reserve(w, 32 + n, false);
	if (!p) {
		if (n > END_REASON_MAX)
			n = END_REASON_MAX;
		if (!was_failed)
			ret = -1;
		/* Within END_ROOM; a stream has its buffer. */
		p = w->stream ? reserve(w, 32 + n, false)
			      : w->map + (w->off - w->map_start) + 8;
	}
	if (p) {
		put_u64(p, recorded);
		put_u64(p + 8, w->written);
		put_u64(p + 16, dropped);
		put_u64(p + 24, w->lost);
		if (n)
			memcpy(p + 32, exit_reason, n);
		if (emit(w, TRACE_REC_END, 32 + n) && !was_failed)
			ret = -1;
	}
	if (w->map)
		munmap(w->map, w->map_len);
	/* The allocated tail goes: the file ends with END. */
	if (!w->stream && ftruncate(w->fd, (off_t)w->off) && !w->failed && !ret)
		ret = et_error_errno("trace file %s: cannot cut the file to its records", w->path);
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
