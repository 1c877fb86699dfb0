/* SPDX-License-Identifier: MIT */
/*
 * One page of Linux's ftrace ring buffer (a struct buffer_data_page)
 * decoded into events with absolute timestamps.
 *
 * A page is {u64 time_stamp; local_t commit; data[]}: `commit` bytes of
 * data hold records that start with a u32 header `type_len:5,
 * time_delta:27`:
 *   type_len 1-28  a data event of type_len * 4 bytes at array[0]
 *   type_len 0     a data event of array[0] - 4 bytes at array[1]
 *   29 PADDING     time_delta 0: the rest of the page is unused;
 *                  otherwise a discarded event of 4 + array[0] bytes
 *   30 TIME_EXTEND the next event's delta is (array[0] << 27) + time_delta
 *   31 TIME_STAMP  an absolute time: (array[0] << 27) + time_delta, its
 *                  top bits (59 and up) taken from the page's time_stamp
 * Data events advance the time by time_delta from the page's time_stamp;
 * padding does not (as the kernel's own reader, rb_update_read_stamp).
 * Bits 31 and 30 of commit are RB_MISSED_EVENTS and RB_MISSED_STORED (the
 * count then follows the data, as a long).
 *
 * libtraceevent's kbuffer parses exactly these pages, but it is not used
 * here: it takes no page size and trusts `commit` (reads past a page whose
 * commit is bogus), reads a record's header and length without checking
 * they lie before commit, and computes the next record from a length it
 * keeps in a signed int, so a padding or type_len 0 record whose length
 * is negative (0xfffffffc) sends its internal do/while back to the same
 * record forever. The guest writes these pages, so they are hostile input;
 * this decoder checks every one of those and stops the page with a
 * warning instead.
 */
#ifndef VMM_FTRACE_RING_PAGE_H
#define VMM_FTRACE_RING_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/ftrace/layout.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RING_PAGE_TYPE_PADDING 29
#define RING_PAGE_TYPE_TIME_EXTEND 30
#define RING_PAGE_TYPE_TIME_STAMP 31
#define RING_PAGE_DATA_TYPE_LEN_MAX 28
#define RING_PAGE_TS_SHIFT 27
#define RING_PAGE_MISSED_EVENTS (1ull << 31)
#define RING_PAGE_MISSED_STORED (1ull << 30)

/* Where a buffer_data_page's header fields are (from the kernel's BTF),
 * and how large a page is (the kernel's PAGE_SIZE). */
struct ring_page_format {
	struct ftrace_field time_stamp, commit;
	uint32_t data_offset;
	uint32_t page_size;
};

/* The format of the layout's buffer_data_page in pages of page_size. */
void ring_page_format_from_layout(struct ring_page_format *f, const struct ftrace_layout *L,
				  uint32_t page_size);

/* Bytes of data a page can hold. */
static inline uint32_t ring_page_capacity(const struct ring_page_format *f)
{
	return f->page_size > f->data_offset ? f->page_size - f->data_offset : 0;
}

enum ring_page_status {
	RING_PAGE_OK = 0,	    /* decoded to its end */
	RING_PAGE_BAD_COMMIT,	    /* commit larger than the page */
	RING_PAGE_BAD_LENGTH,	    /* a record whose length is impossible */
	RING_PAGE_PAST_COMMIT,	    /* a record that runs past commit */
	RING_PAGE_TIME_BACKWARDS,   /* a TIME_STAMP before the time reached, or overflow */
	RING_PAGE_STOPPED,	    /* the callback asked to stop */
};

/* One data event. data/len point into the page passed in. */
struct ring_page_event {
	uint64_t ts;	    /* absolute, in the ring buffer's clock */
	uint32_t offset;    /* of its header within data[] */
	uint32_t next;	    /* offset just past it */
	const uint8_t *data;
	uint32_t len;
};

struct ring_page_info {
	uint64_t time_stamp;	/* the page's */
	uint64_t commit_raw;	/* commit with its flag bits */
	uint32_t commit;	/* bytes of data (flags masked) */
	bool missed_events;	/* RB_MISSED_EVENTS */
	bool missed_stored;	/* RB_MISSED_STORED: `missed` holds the count */
	uint64_t missed;
	uint32_t events, discarded, time_extends, time_stamps;
	uint32_t end;		/* offset in data[] where decoding stopped */
	uint64_t last_ts;	/* the time reached */
	enum ring_page_status status;
	char message[160];	/* one line saying why, when status is a fault */
};

/* Called for each data event at or after `emit_from`; non-zero stops the
 * decode (status RING_PAGE_STOPPED). */
typedef int (*ring_page_event_fn)(void *ctx, const struct ring_page_event *ev);

/*
 * Decodes the page (size bytes at page, normally f->page_size). Records
 * are decoded from offset 0 (timestamps are relative), and events whose
 * header is at an offset >= emit_from are passed to fn. `bound` is the
 * end of the data to decode: RING_PAGE_BOUND_COMMIT for the page's own
 * commit, or a byte count (a page the kernel's reader already recycled
 * keeps its events but not its commit). Returns 0 when the page decoded
 * to its end, -1 when a fault or the callback stopped it (info->status,
 * info->message); what was passed to fn before stays valid.
 */
#define RING_PAGE_BOUND_COMMIT UINT32_MAX
int ring_page_decode(const uint8_t *page, size_t size, const struct ring_page_format *f,
		     uint32_t bound, uint32_t emit_from, ring_page_event_fn fn, void *ctx,
		     struct ring_page_info *info);

/* The page's time_stamp and commit (flags masked); false if the page is
 * smaller than its header. */
bool ring_page_header(const uint8_t *page, size_t size, const struct ring_page_format *f,
		      uint64_t *time_stamp, uint64_t *commit_raw);

/* A little-endian integer of field.size bytes at base + field.offset,
 * which the caller has checked lies within its buffer. */
uint64_t ftrace_read_field(const uint8_t *base, struct ftrace_field field);

#ifdef __cplusplus
}
#endif

#endif /* VMM_FTRACE_RING_PAGE_H */
