/* SPDX-License-Identifier: MIT */
#include "vmm/ftrace/entries.h"

#include <stdio.h>
#include <string.h>

#include "vmm/ftrace/bprint.h"
#include "vmm/ftrace/ring_page.h"

const char *ftrace_event_kind_name(enum ftrace_event_kind kind)
{
	switch (kind) {
	case FTRACE_EVENT_RAW:
		return "raw";
	case FTRACE_EVENT_FUNCTION:
		return "function";
	case FTRACE_EVENT_GRAPH_ENTRY:
		return "funcgraph_entry";
	case FTRACE_EVENT_GRAPH_RETURN:
		return "funcgraph_exit";
	case FTRACE_EVENT_PRINT:
		return "print";
	case FTRACE_EVENT_BPRINT:
		return "bprint";
	case FTRACE_EVENT_BPUTS:
		return "bputs";
	}
	return "?";
}

/* True if every field lies within the payload. */
static bool fits(uint32_t len, const struct ftrace_field *fields, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fields[i].offset > len || fields[i].size > len - fields[i].offset)
			return false;
	return true;
}

#define FITS(len, ...)                                                               \
	fits(len, (const struct ftrace_field[]){ __VA_ARGS__ },                      \
	     sizeof((const struct ftrace_field[]){ __VA_ARGS__ }) / sizeof(struct ftrace_field))

static uint64_t get(const uint8_t *p, struct ftrace_field f)
{
	return ftrace_read_field(p, f);
}

/* A signed field of f.size bytes, sign-extended. */
static int64_t get_signed(const uint8_t *p, struct ftrace_field f)
{
	uint64_t v = get(p, f);
	unsigned bits = 8 * (f.size ? f.size : 8);

	return bits >= 64 ? (int64_t)v : (int64_t)(v << (64 - bits)) >> (64 - bits);
}

void ftrace_event_decode(const struct ftrace_layout *L, const uint8_t *p, uint32_t len,
			 struct ftrace_event *ev)
{
	int64_t type;

	memset(ev, 0, sizeof(*ev));
	ev->payload = p;
	ev->payload_len = len;
	ev->kind = FTRACE_EVENT_RAW;
	ev->type = 0xffff;
	if (!FITS(len, L->entry.type, L->entry.flags, L->entry.preempt_count, L->entry.pid)) {
		ev->malformed = true;
		if (FITS(len, L->entry.type))
			ev->type = (uint16_t)get(p, L->entry.type);
		return;
	}
	ev->type = (uint16_t)get(p, L->entry.type);
	ev->flags = (uint8_t)get(p, L->entry.flags);
	ev->preempt_count = (uint8_t)get(p, L->entry.preempt_count);
	ev->pid = (int32_t)get_signed(p, L->entry.pid);
	type = ev->type;

	if (type == L->type.fn) {
		if (!FITS(len, L->fn.ip, L->fn.parent_ip))
			goto short_payload;
		ev->kind = FTRACE_EVENT_FUNCTION;
		ev->ip = get(p, L->fn.ip);
		ev->parent_ip = get(p, L->fn.parent_ip);
	} else if (type == L->type.graph_ent) {
		if (!FITS(len, L->graph_ent.func, L->graph_ent.depth))
			goto short_payload;
		ev->kind = FTRACE_EVENT_GRAPH_ENTRY;
		ev->func = get(p, L->graph_ent.func);
		ev->depth = (int32_t)get_signed(p, L->graph_ent.depth);
	} else if (type == L->type.graph_ret) {
		if (!FITS(len, L->graph_ret.func, L->graph_ret.depth, L->graph_ret.overrun,
			  L->graph_ret.calltime, L->graph_ret.rettime))
			goto short_payload;
		ev->kind = FTRACE_EVENT_GRAPH_RETURN;
		ev->func = get(p, L->graph_ret.func);
		ev->depth = (int32_t)get_signed(p, L->graph_ret.depth);
		ev->overrun = (uint32_t)get(p, L->graph_ret.overrun);
		ev->calltime = get(p, L->graph_ret.calltime);
		ev->rettime = get(p, L->graph_ret.rettime);
	} else if (type == L->type.print) {
		if (!FITS(len, L->print.ip, L->print.buf))
			goto short_payload;
		ev->kind = FTRACE_EVENT_PRINT;
		ev->ip = get(p, L->print.ip);
	} else if (type == L->type.bprint) {
		if (!FITS(len, L->bprint.ip, L->bprint.fmt, L->bprint.buf))
			goto short_payload;
		ev->kind = FTRACE_EVENT_BPRINT;
		ev->ip = get(p, L->bprint.ip);
		ev->fmt = get(p, L->bprint.fmt);
	} else if (type == L->type.bputs) {
		if (!FITS(len, L->bputs.ip, L->bputs.str))
			goto short_payload;
		ev->kind = FTRACE_EVENT_BPUTS;
		ev->ip = get(p, L->bputs.ip);
		ev->fmt = get(p, L->bputs.str);
	}
	return;

short_payload:
	ev->malformed = true; /* known type, too short: raw, and said so */
}

static void set_text(struct ftrace_event *ev, char *buf, size_t len, bool truncated)
{
	buf[len] = '\0';
	ev->text = buf;
	ev->text_len = len;
	ev->text_truncated = truncated;
}

static void render_print(struct ftrace_event *ev, const struct ftrace_layout *L, char *buf,
			 size_t size)
{
	const uint8_t *s = ev->payload + L->print.buf.offset;
	size_t avail = ev->payload_len - L->print.buf.offset;
	const uint8_t *nul = memchr(s, '\0', avail);
	size_t n = nul ? (size_t)(nul - s) : avail;
	bool cut = !nul;

	if (n > size - 1) {
		n = size - 1;
		cut = true;
	}
	memcpy(buf, s, n);
	set_text(ev, buf, n, cut);
}

static void render_guest_string(struct ftrace_event *ev, struct guest_strings *gs, char *buf,
				size_t size)
{
	int more = 0;
	const char *s = gs ? guest_string_get(gs, ev->fmt, &more) : NULL;
	size_t n;

	if (!s) {
		n = (size_t)snprintf(buf, size, "<string at 0x%llx unreadable>",
				     (unsigned long long)ev->fmt);
		set_text(ev, buf, n < size ? n : size - 1, true);
		return;
	}
	n = strlen(s);
	if (n > size - 1) {
		n = size - 1;
		more = 1;
	}
	memcpy(buf, s, n);
	set_text(ev, buf, n, more);
}

static void render_bprint(struct ftrace_event *ev, const struct ftrace_layout *L,
			  struct guest_strings *gs, ftrace_symbol_fn sym, void *sym_ctx, char *buf,
			  size_t size)
{
	struct ftrace_bprint_result res;
	int more = 0;
	const char *fmt = gs ? guest_string_get(gs, ev->fmt, &more) : NULL;
	uint32_t off = L->bprint.buf.offset;

	if (!fmt) {
		size_t n = (size_t)snprintf(buf, size, "<format at 0x%llx unreadable>",
					    (unsigned long long)ev->fmt);

		set_text(ev, buf, n < size ? n : size - 1, true);
		return;
	}
	ftrace_bprint_render(fmt, ev->payload + off, ev->payload_len - off,
			     L->bprint.fmt.size, sym, sym_ctx, buf, size, &res);
	set_text(ev, buf, res.len, more || res.args_short || res.cut || res.invalid);
}

void ftrace_event_render_text(struct ftrace_event *ev, const struct ftrace_layout *L,
			      struct guest_strings *gs, ftrace_symbol_fn sym, void *sym_ctx,
			      char *buf, size_t size)
{
	if (size == 0)
		return;
	switch (ev->kind) {
	case FTRACE_EVENT_PRINT:
		render_print(ev, L, buf, size);
		break;
	case FTRACE_EVENT_BPUTS:
		render_guest_string(ev, gs, buf, size);
		break;
	case FTRACE_EVENT_BPRINT:
		render_bprint(ev, L, gs, sym, sym_ctx, buf, size);
		break;
	default:
		break;
	}
}
