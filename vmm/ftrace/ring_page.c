/* SPDX-License-Identifier: MIT */
#include "vmm/ftrace/ring_page.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Top bits of an absolute timestamp that a TIME_STAMP record cannot hold
 * (it carries 59 bits); the kernel takes them from the page (rb_fix_abs_ts). */
#define TS_MSB (0x1full << 59)

uint64_t ftrace_read_field(const uint8_t *base, struct ftrace_field field)
{
	uint64_t v = 0;

	/* Little-endian guest and host; a short field fills the low bytes. */
	memcpy(&v, base + field.offset, field.size <= 8 ? field.size : 8);
	return v;
}

void ring_page_format_from_layout(struct ring_page_format *f, const struct ftrace_layout *L,
				  uint32_t page_size)
{
	f->time_stamp = L->data_page.time_stamp;
	f->commit = L->data_page.commit;
	f->data_offset = L->data_page.data.offset;
	f->page_size = page_size;
}

static bool field_fits(struct ftrace_field field, size_t size)
{
	return field.size <= 8 && field.offset <= size && field.size <= size - field.offset;
}

bool ring_page_header(const uint8_t *page, size_t size, const struct ring_page_format *f,
		      uint64_t *time_stamp, uint64_t *commit_raw)
{
	if (!field_fits(f->time_stamp, size) || !field_fits(f->commit, size) ||
	    f->data_offset > size)
		return false;
	*time_stamp = ftrace_read_field(page, f->time_stamp);
	*commit_raw = ftrace_read_field(page, f->commit);
	return true;
}

static int fault(struct ring_page_info *info, enum ring_page_status status, uint32_t at,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int fault(struct ring_page_info *info, enum ring_page_status status, uint32_t at,
		 const char *fmt, ...)
{
	va_list ap;

	info->status = status;
	info->end = at;
	va_start(ap, fmt);
	vsnprintf(info->message, sizeof(info->message), fmt, ap);
	va_end(ap);
	return -1;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

int ring_page_decode(const uint8_t *page, size_t size, const struct ring_page_format *f,
		     uint32_t bound, uint32_t emit_from, ring_page_event_fn fn, void *ctx,
		     struct ring_page_info *info)
{
	uint32_t capacity, off = 0;
	const uint8_t *data;
	uint64_t ts;

	memset(info, 0, sizeof(*info));
	if (size < f->page_size || f->data_offset > f->page_size ||
	    !ring_page_header(page, size, f, &info->time_stamp, &info->commit_raw))
		return fault(info, RING_PAGE_BAD_COMMIT, 0, "page smaller than its header");
	capacity = ring_page_capacity(f);
	data = page + f->data_offset;
	info->missed_events = info->commit_raw & RING_PAGE_MISSED_EVENTS;
	info->missed_stored = info->commit_raw & RING_PAGE_MISSED_STORED;
	/* The commit index proper is the low bits (the kernel's flags are 31/30). */
	info->commit = (uint32_t)(info->commit_raw & ~(RING_PAGE_MISSED_EVENTS |
						       RING_PAGE_MISSED_STORED) & 0xffffffffull);
	info->last_ts = ts = info->time_stamp;
	if ((info->commit_raw >> 32) || info->commit > capacity)
		return fault(info, RING_PAGE_BAD_COMMIT, 0,
			     "commit 0x%llx is past the page (%u bytes of data)",
			     (unsigned long long)info->commit_raw, capacity);
	if (info->missed_stored && info->commit + f->commit.size <= capacity)
		info->missed = ftrace_read_field(data + info->commit,
						 (struct ftrace_field){ 0, f->commit.size });
	if (bound == RING_PAGE_BOUND_COMMIT)
		bound = info->commit;
	if (bound > capacity)
		bound = capacity;

	while (off < bound) {
		uint32_t room = bound - off, hdr, type_len, delta, len = 0, skip;
		struct ring_page_event ev;

		if (room < 4)
			return fault(info, RING_PAGE_PAST_COMMIT, off,
				     "record header at %u runs past the data end %u", off, bound);
		hdr = rd32(data + off);
		type_len = hdr & 0x1f;
		delta = hdr >> 5;
		if (type_len == RING_PAGE_TYPE_PADDING && delta == 0)
			break; /* the rest of the page is unused */
		/* Every other record has at least array[0]... */
		if (type_len == 0 || type_len >= RING_PAGE_TYPE_PADDING) {
			if (room < 8)
				return fault(info, RING_PAGE_PAST_COMMIT, off,
					     "record at %u (type_len %u) runs past the data end %u",
					     off, type_len, bound);
			len = rd32(data + off + 4);
		}
		switch (type_len) {
		case RING_PAGE_TYPE_PADDING: /* a discarded event of 4 + len bytes */
			if (len < 4 || len % 4)
				return fault(info, RING_PAGE_BAD_LENGTH, off,
					     "discarded record at %u has length %u", off, len);
			if (len > room - 4)
				return fault(info, RING_PAGE_PAST_COMMIT, off,
					     "discarded record at %u (%u bytes) runs past the data end %u",
					     off, len + 4, bound);
			info->discarded++;
			off += 4 + len;
			continue;
		case RING_PAGE_TYPE_TIME_EXTEND:
		case RING_PAGE_TYPE_TIME_STAMP: {
			uint64_t t = ((uint64_t)len << RING_PAGE_TS_SHIFT) + delta;

			if (type_len == RING_PAGE_TYPE_TIME_EXTEND) {
				if (ts + t < ts)
					return fault(info, RING_PAGE_TIME_BACKWARDS, off,
						     "time extend at %u overflows the clock", off);
				ts += t;
				info->time_extends++;
			} else {
				/* rb_fix_abs_ts(): the page supplies the top bits. */
				if (info->time_stamp & TS_MSB) {
					t |= info->time_stamp & TS_MSB;
					if (t < info->time_stamp)
						t += 1ull << 59;
				}
				if (t < ts)
					return fault(info, RING_PAGE_TIME_BACKWARDS, off,
						     "time stamp at %u goes back from %llu to %llu", off,
						     (unsigned long long)ts, (unsigned long long)t);
				ts = t;
				info->time_stamps++;
			}
			info->last_ts = ts;
			off += 8;
			continue;
		}
		case 0: /* length in array[0], counting itself; data at array[1] */
			if (len < 4 || len % 4)
				return fault(info, RING_PAGE_BAD_LENGTH, off,
					     "event at %u has length %u", off, len);
			if (len > room - 4)
				return fault(info, RING_PAGE_PAST_COMMIT, off,
					     "event at %u (%u bytes) runs past the data end %u", off,
					     len + 4, bound);
			ev.data = data + off + 8;
			ev.len = len - 4;
			skip = 4 + len;
			break;
		default: /* 1..28: type_len * 4 bytes at array[0] */
			if (type_len * 4 > room - 4)
				return fault(info, RING_PAGE_PAST_COMMIT, off,
					     "event at %u (%u bytes) runs past the data end %u", off,
					     4 + type_len * 4, bound);
			ev.data = data + off + 4;
			ev.len = type_len * 4;
			skip = 4 + type_len * 4;
			break;
		}
		if (ts + delta < ts)
			return fault(info, RING_PAGE_TIME_BACKWARDS, off,
				     "event at %u overflows the clock", off);
		ts += delta;
		info->last_ts = ts;
		ev.ts = ts;
		ev.offset = off;
		ev.next = off + skip;
		info->events++;
		off += skip;
		if (ev.offset >= emit_from && fn && fn(ctx, &ev))
			return fault(info, RING_PAGE_STOPPED, ev.next, "stopped");
	}
	info->end = off;
	return 0;
}
