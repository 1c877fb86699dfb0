/* SPDX-License-Identifier: MIT */
/*
 * The trace file: a self-contained, append-only binary file written as the
 * run goes (docs/trace-format.md has the layout byte by byte).
 *
 *   header:  "ETTRACE\0", u32 version, u32 header length (16)
 *   records: u32 type, u32 payload length, payload, u32 CRC32 of the
 *            type, length and payload bytes (zlib's crc32)
 *
 * Records are written through a shared mapping of the file, each one
 * complete before its header is stored, with no system call per record:
 * a guest crash, --timeout, SIGINT or even a SIGKILL of the VMM leaves
 * every record written so far readable (the pages are the kernel's). The
 * file is allocated ahead in chunks, so a disk that is full or a file-size
 * limit shows when a chunk is added; the writer then counts the events it
 * could not store (trace_writer_lost()) instead of storing them, so
 * nothing is lost silently. Until close cuts it off, the allocated part
 * past the last record is zeros: readers stop at a zero record header.
 * All integers are little-endian.
 *
 * The reader checks every length against the record and the file, verifies
 * every CRC, stops cleanly at a truncated final record, and refuses a
 * corrupt one with an error naming its offset.
 */
#ifndef VMM_TRACE_TRACE_FILE_H
#define VMM_TRACE_TRACE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "earlytrace/abi.h"
#include "vmm/symbols/symtab.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TRACE_FILE_MAGIC "ETTRACE" /* 8 bytes with the NUL */
/* Version 2: EVENTS may hold returns and VM exits (kinds other than
 * ET_REC_CALL), which a version-1 reader would show as calls. Readers
 * accept every version from TRACE_FILE_MIN_VERSION on. */
#define TRACE_FILE_VERSION 2
#define TRACE_FILE_MIN_VERSION 1
#define TRACE_FILE_HEADER_SIZE 16
#define TRACE_RECORD_OVERHEAD 12	   /* type + length + CRC */
#define TRACE_MAX_PAYLOAD (64u << 20)	   /* readers refuse larger records */
#define TRACE_EVENTS_PER_RECORD 8192	   /* writers split larger batches */
#define TRACE_MAX_STRING 4096		   /* longer strings are cut */

enum trace_record_type {
	TRACE_REC_META = 1,    /* run description, written first */
	TRACE_REC_SYMBOLS = 2, /* function symbols, one or more records */
	TRACE_REC_EVENTS = 3,  /* a batch of struct et_ring_record */
	TRACE_REC_DROPS = 4,   /* dropped-event count so far, tsc, reason */
	TRACE_REC_MARK = 5,    /* a marker on the trace clock */
	TRACE_REC_END = 6,     /* final statistics; absent if the run died */
	/* An event of the guest kernel's own tracer that is not a call or a
	 * return (trace_printk text, or any other type kept raw): cpu, its
	 * type id and kind, tsc, ip, its bytes as the kernel wrote them, and
	 * its text. Readers that predate it skip it. */
	TRACE_REC_KEVENT = 7,
	/* The trace's time zero: u64 guest TSC just before the guest's first
	 * instruction (the VMM reads it as it starts the guest). Every text,
	 * JSON, CSV and KTAP time counts from it. Readers that predate it
	 * skip it. */
	TRACE_REC_CLOCK = 8,
	/* What the tracer's own exits cost the guest: the time it stood still
	 * for them, so reports can show durations without it (written at the
	 * end of the run; vmm/trace/overhead.h). Readers that predate it skip
	 * it. */
	TRACE_REC_OVERHEAD = 9,
	/* A vCPU's host thread waited for a host CPU (vmm/kvm/host_wait.h):
	 * the guest's TSC ran on without the guest. struct trace_wait; the
	 * first exit after the wait writes it. Readers that predate it skip
	 * it. */
	TRACE_REC_WAIT = 10,
};

/* The WAIT record: u64 tsc, the guest TSC at the exit that learnt of the
 * wait (it happened after the vCPU's previous exit); u32 cpu; u32 flags
 * (0); u64 ticks waited, in guest TSC ticks. */
struct trace_wait {
	uint64_t tsc;
	uint32_t cpu;
	uint64_t ticks;
};

#define TRACE_WAIT_LEN 24

/* The OVERHEAD record: guest TSC ticks the guest stood still for the
 * tracer. exits: breakpoint exits that recorded a call or a return, and
 * exit_ticks the host's time in user space for them, measured at each;
 * drains: the drain exits trampoline batches asked for, drain_ticks the
 * same; rest_ticks: what each exit costs beyond that (into the guest and
 * back), timed at the start of the run; 0 when it could not be.
 * waited_ticks (48 bytes on; older records end before it): how long the
 * vCPU's host thread waited for a host CPU during the run (other
 * processes ran), which the guest's TSC counts as guest time; it is no
 * cost of the tracer's and reports leave it in, but say it. */
struct trace_overhead {
	uint64_t tsc; /* guest TSC when written */
	uint64_t exits, exit_ticks;
	uint64_t drains, drain_ticks;
	uint64_t rest_ticks;
	uint64_t waited_ticks;
	uint64_t flags; /* TRACE_OVERHEAD_* */
};

#define TRACE_OVERHEAD_LEN_V1 48 /* before waited_ticks */
#define TRACE_OVERHEAD_LEN 64
/* flags: waited_ticks was measured (the host says its threads' run
 * queue delays); rest_ticks was timed at the run's own breakpoint exits
 * (otherwise at the guest's first instruction, or not at all). */
#define TRACE_OVERHEAD_WAITED_KNOWN 1u
#define TRACE_OVERHEAD_REST_IN_RUN 2u

/* What a KEVENT is (vmm/ftrace/entries.h decodes them). */
enum trace_kevent_kind {
	TRACE_KEVENT_RAW = 0,	 /* a type earlytrace does not decode: bytes only */
	TRACE_KEVENT_PRINT = 1,	 /* trace_printk with a non-constant format */
	TRACE_KEVENT_BPRINT = 2, /* trace_printk, binary arguments rendered */
	TRACE_KEVENT_BPUTS = 3,	 /* trace_printk of a constant string */
};

struct trace_kevent {
	uint64_t tsc;
	uint32_t cpu;
	uint16_t type;		/* the kernel's event type id */
	uint8_t kind;		/* enum trace_kevent_kind */
	bool truncated;		/* the text is cut or could not all be read */
	uint64_t ip;		/* where trace_printk was called; 0 for raw */
	const uint8_t *payload; /* the event's bytes, as the kernel wrote them */
	uint32_t payload_len;
	const char *text;	/* the message ("" for raw) */
};

/* ---- writer -------------------------------------------------------- */

struct trace_meta {
	const char *kernel_path;
	const char *build_id_hex;  /* NULL or "" when the kernel has none */
	const char *symbol_source; /* struct symbols' desc */
	uint64_t tsc_khz;	   /* 0 when unknown */
	const char *mode;	   /* "breakpoint", "trampoline", ... */
};

struct trace_writer;

/* Creates (truncates) path and writes the header and the META record. */
int trace_writer_open(struct trace_writer **w, const char *path, const struct trace_meta *meta);
/* Writes the table's function symbols (text symbols and untyped ones). */
int trace_writer_symbols(struct trace_writer *w, const struct symtab *tab);
/* Writes n events (split into records of TRACE_EVENTS_PER_RECORD). */
int trace_writer_events(struct trace_writer *w, const struct et_ring_record *ev, size_t n);
/* dropped_total: the events dropped so far for this reason (each reason
 * text is its own running total; readers add the reasons up). */
int trace_writer_drops(struct trace_writer *w, uint64_t dropped_total, uint64_t tsc,
		       const char *reason);
int trace_writer_mark(struct trace_writer *w, uint64_t tsc, const char *text);
int trace_writer_kevent(struct trace_writer *w, const struct trace_kevent *k);
int trace_writer_overhead(struct trace_writer *w, const struct trace_overhead *o);
int trace_writer_wait(struct trace_writer *w, const struct trace_wait *wait);
/* The guest TSC at its first instruction (TRACE_REC_CLOCK); once, before the
 * guest runs. */
int trace_writer_clock(struct trace_writer *w, uint64_t origin_tsc);
/*
 * Writes END and closes the file; frees w (NULL is accepted). Call once.
 *
 * Errors: the call during which a write first fails (the file cannot
 * grow: disk full, file-size limit) returns -1 with the reason recorded
 * (et_error, and trace_writer_error()); the record it was writing is not
 * stored. From then on nothing more is written (so the file has no gap)
 * and every call returns 0, counting the events it was given in
 * trace_writer_lost(); close writes END, which carries the lost count,
 * into room that was allocated for it ahead (its exit reason cut to 64
 * bytes), cuts the file after it, and returns 0 unless that is the first
 * failure.
 */
int trace_writer_close(struct trace_writer *w, uint64_t recorded, uint64_t dropped,
		       const char *exit_reason);
uint64_t trace_writer_bytes(const struct trace_writer *w);   /* file size so far */
uint64_t trace_writer_lost(const struct trace_writer *w);    /* events not stored */
uint64_t trace_writer_written(const struct trace_writer *w); /* events stored */
/* Why the first write failed ("" while none has). */
const char *trace_writer_error(const struct trace_writer *w);

/* ---- reader -------------------------------------------------------- */

#define TRACE_EXIT_KINDS (ET_REC_SHUTDOWN - ET_REC_EXIT_FIRST + 1)

/* What the whole file says, from a validating pass at open. Strings are
 * never NULL ("" when absent) and hold printable ASCII only (other bytes
 * read from the file become '?'). */
struct trace_info {
	uint32_t version;
	bool has_meta;
	const char *tool_version;
	const char *kernel_path;
	const char *build_id_hex;
	const char *symbol_source;
	const char *mode;
	uint64_t tsc_khz;
	uint64_t start_time_ns;	  /* CLOCK_REALTIME at open, ns since the epoch */

	uint64_t nr_records;
	uint64_t nr_symbols;
	uint64_t nr_events;	  /* events stored in the file, of every kind */
	uint64_t events_by_source[4]; /* calls and returns; index: flags & ET_REC_SRC_MASK,
				       * without the kernel ftrace ring's */
	uint64_t nr_ftrace;	  /* calls and returns from a stock kernel's ftrace ring */
	uint64_t nr_returns;	  /* ET_REC_RET events (--graph) */
	uint64_t nr_ret_traced;	  /* calls whose return was to be recorded (--graph) */
	uint64_t nr_exits;	  /* VM exit events */
	uint64_t exits_by_kind[TRACE_EXIT_KINDS]; /* index: kind - ET_REC_EXIT_FIRST */
	size_t nr_runs;		  /* stretches of events in TSC order (1 if all are) */
	uint64_t min_tsc, max_tsc;    /* over all events; 0 when none */
	uint64_t first_tsc, last_tsc; /* first and last event in file order */
	/* Time zero of every report: the guest TSC at its first instruction
	 * (the CLOCK record), or, in files without one, the earliest event's
	 * TSC. */
	uint64_t origin_tsc;
	bool has_origin;	  /* the file has a CLOCK record */
	uint32_t nr_cpus;	  /* highest cpu seen + 1 */
	uint64_t nr_marks;
	uint64_t nr_kevents;	  /* KEVENT records: the guest kernel's own text/raw events */
	uint64_t nr_drop_records;
	uint64_t dropped;	  /* over all DROPS reasons (each one's last total, summed),
				   * or END's count when that is larger */
	const char *drop_reason;  /* reason of the last DROPS record */
	const char *last_mark;	  /* text of the last MARK, "" if none */

	bool has_end;
	uint64_t end_recorded, end_written, end_dropped, end_lost;
	const char *exit_reason;

	bool truncated;		  /* the final record was cut short */
	uint64_t truncated_at;	  /* its offset */
	/* Why the file cannot be believed, "" when nothing says so: its
	 * events disagree with END's count (records removed from the middle
	 * or repeated, CRCs valid), records follow END (not read). */
	const char *doubt;
	uint64_t data_size;	  /* bytes of complete records incl. header */
	bool has_overhead;	  /* an OVERHEAD record: the last one */
	struct trace_overhead overhead;
	/* WAIT records in TSC order (owned by the reader), their ticks summed. */
	const struct trace_wait *waits;
	size_t nr_waits;
	uint64_t waits_ticks;
	uint64_t unwritten_tail;  /* bytes after the records that the writer had
				   * allocated but not written (a zero record
				   * header starts them): it did not close */
};

/* One record as the reader returns it. Pointers stay valid until the next
 * call on the reader. */
struct trace_record {
	uint32_t type;
	uint32_t len;	    /* payload length */
	uint64_t offset;    /* of the record in the file */
	const void *payload;
	/* EVENTS */
	const struct et_ring_record *events;
	size_t nr_events;
	/* DROPS, MARK, KEVENT */
	uint64_t tsc;
	struct trace_kevent kevent; /* KEVENT */
	uint64_t dropped_total;
	/* DROPS reason, MARK text, END exit reason (NUL-terminated, sanitized) */
	const char *text;
	/* END */
	uint64_t recorded, written, dropped, lost;
};

/* A mark or a drop, for merging into the event stream by time. */
struct trace_note {
	uint64_t tsc;
	uint32_t type;	      /* TRACE_REC_MARK, TRACE_REC_DROPS or TRACE_REC_KEVENT */
	uint64_t dropped;     /* DROPS: events of its reason dropped since the previous one */
	uint64_t dropped_total; /* DROPS: the run's total so far, over all reasons */
	/* MARK, DROPS: the text; KEVENT: the message (a raw event: its type
	 * and first bytes in hex), what a report shows after ip's function. */
	const char *text;
	uint64_t offset;      /* of its record: orders notes with equal tsc */
	/* KEVENT */
	uint32_t cpu;
	uint16_t kevent_type;
	uint8_t kevent_kind;
	uint64_t ip;
};

struct trace_reader;

/* Opens path, validates it from end to end (CRCs, lengths, payloads) and
 * collects the META, SYMBOLS, totals and notes; then positions the reader
 * at the first record. A truncated final record is not an error (info
 * says so); a corrupt one is, naming its offset. */
int trace_reader_open(struct trace_reader **r, const char *path);
void trace_reader_close(struct trace_reader *r);

const struct trace_info *trace_reader_info(const struct trace_reader *r);
/* Symbols from the SYMBOLS records, sorted for symtab_lookup(). */
const struct symtab *trace_reader_symtab(const struct trace_reader *r);
/* Marks and drops, sorted by tsc (file order among equal ones). */
const struct trace_note *trace_reader_notes(const struct trace_reader *r, size_t *nr);

/* The next record: 1 with *rec filled, 0 at the end (of the part validated
 * at open), -1 with an error. */
int trace_reader_next(struct trace_reader *r, struct trace_record *rec);
/* Back to the first record. */
int trace_reader_rewind(struct trace_reader *r);
/* Events read so far by all the readers of this process (each EVENTS
 * record's events, each time one is read: the validating pass at open
 * and every later pass count): what a conversion's progress line shows.
 * Safe to call from any thread. */
uint64_t trace_reader_events_read(void);

/*
 * Events in TSC order. A file is made of runs, stretches whose events are
 * in TSC order by themselves: normally the VMM's stream, then the guest
 * ring appended at the end of the run (whose events interleave in time
 * with the VMM's later exits). The merge reads each run with its own
 * cursor and yields the earliest event next, file order among equal TSCs.
 * Files of more than TRACE_MERGE_MAX_RUNS runs (only a hostile or broken
 * writer makes them) are read in file order. Memory: one record buffer
 * per run.
 */
#define TRACE_MERGE_MAX_RUNS 64
struct trace_merge;
int trace_merge_open(struct trace_reader *r, struct trace_merge **m);
/* 1 with *ev, 0 after the last event, -1 with an error. */
int trace_merge_next(struct trace_merge *m, struct et_ring_record *ev);
void trace_merge_close(struct trace_merge *m);

/* For the merge: where run i starts (the record's file offset and the
 * event's index in it); false past the last run or the recorded ones. */
bool trace_reader_run(const struct trace_reader *r, size_t i, uint64_t *offset, size_t *index);
/* A second reader of the same, already validated file (the one r has open,
 * through /proc/self/fd: even after its name was removed or replaced),
 * positioned at the record at offset (one of trace_reader_run's). */
int trace_reader_dup(const struct trace_reader *r, uint64_t offset, struct trace_reader **out);

/* The guest time of tsc: nanoseconds since info->origin_tsc (negative
 * before it); TSC cycles when the frequency is unknown. */
int64_t trace_time_ns(const struct trace_info *in, uint64_t tsc);
/* "guest time since its first instruction" or, for files without a CLOCK
 * record, "time since the earliest event": what trace_time_ns counts from. */
const char *trace_origin_text(const struct trace_info *in);

/* One line about how the run ended, e.g. "finished: guest exited (0)",
 * "run did not finish cleanly: last mark 'handoff to guest ring', 12
 * events", with "; file truncated after N events" when it was. */
const char *trace_reader_state(const struct trace_reader *r, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* VMM_TRACE_TRACE_FILE_H */
