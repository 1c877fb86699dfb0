/* SPDX-License-Identifier: MIT */
/* Shared report helpers, format selection, and the summary report. */
#include "vmm/report/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/report/report_util.h"
#include "vmm/trace/event.h"
#include "vmm/trace/overhead.h"
#include "vmm/util/error.h"
#include "vmm/util/grow.h"
#include "vmm/util/printable.h"
#include "vmm/util/sorted.h"

void ob_flush(struct outbuf *ob)
{
	if (ob->len)
		fwrite(ob->buf, 1, ob->len, ob->f);
	ob->len = 0;
}

int ob_finish(struct outbuf *ob)
{
	ob_flush(ob);
	if (fflush(ob->f) || ferror(ob->f))
		return et_error_errno("cannot write the report");
	return 0;
}

void ob_mem(struct outbuf *ob, const char *s, size_t n)
{
	if (n > sizeof(ob->buf) / 2) {
		ob_flush(ob);
		fwrite(s, 1, n, ob->f);
		return;
	}
	ob_reserve(ob, n);
	memcpy(ob->buf + ob->len, s, n);
	ob->len += n;
}

void ob_str(struct outbuf *ob, const char *s)
{
	ob_mem(ob, s, strlen(s));
}

void ob_char(struct outbuf *ob, char c)
{
	ob_reserve(ob, 1);
	ob->buf[ob->len++] = c;
}

void ob_u64(struct outbuf *ob, uint64_t v, unsigned width, char pad)
{
	char tmp[24];
	unsigned n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	ob_reserve(ob, (width > n ? width : n));
	for (; width > n; width--)
		ob->buf[ob->len++] = pad;
	while (n)
		ob->buf[ob->len++] = tmp[--n];
}

void ob_hex(struct outbuf *ob, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[16];
	unsigned n = 0;

	do {
		tmp[n++] = digits[v & 15];
		v >>= 4;
	} while (v);
	ob_reserve(ob, n + 2);
	ob->buf[ob->len++] = '0';
	ob->buf[ob->len++] = 'x';
	while (n)
		ob->buf[ob->len++] = tmp[--n];
}

void ob_json_str(struct outbuf *ob, const char *s)
{
	static const char digits[] = "0123456789abcdef";
	size_t n = 0;

	/* Fast path: nothing to escape (every kernel symbol). */
	while (printable_ascii((unsigned char)s[n]) && s[n] != '"' && s[n] != '\\')
		n++;
	if (!s[n]) {
		ob_reserve(ob, n + 2);
		if (ob->len + n + 2 <= sizeof(ob->buf)) {
			ob->buf[ob->len++] = '"';
			memcpy(ob->buf + ob->len, s, n);
			ob->len += n;
			ob->buf[ob->len++] = '"';
			return;
		}
	}
	ob_char(ob, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			ob_char(ob, '\\');
			ob_char(ob, (char)c);
		} else if (!printable_ascii(c)) {
			/* Reader strings are printable ASCII already; anything
			 * else still comes out as valid JSON. */
			ob_str(ob, "\\u00");
			ob_char(ob, digits[c >> 4]);
			ob_char(ob, digits[c & 15]);
		} else {
			ob_char(ob, (char)c);
		}
	}
	ob_char(ob, '"');
}

void ob_printf(struct outbuf *ob, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(tmp)) {
		ob_mem(ob, tmp, (size_t)n);
		return;
	}
	ob_flush(ob);
	va_start(ap, fmt);
	vfprintf(ob->f, fmt, ap);
	va_end(ap);
}

uint64_t report_tsc_ns(uint64_t tsc, uint64_t khz, uint64_t base)
{
	unsigned __int128 ns;

	if (!khz)
		return tsc > base ? tsc - base : 0;
	ns = (unsigned __int128)tsc * 1000000u / khz;
	return ns > UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
}

struct name_cache *name_cache_new(const struct symtab *tab)
{
	struct name_cache *c = malloc(sizeof(*c));
	const struct symbol *zero;

	if (!c) {
		et_error("out of memory");
		return NULL;
	}
	c->tab = tab;
	zero = symtab_lookup(tab, 0, NULL);
	for (size_t i = 0; i < sizeof(c->slot) / sizeof(c->slot[0]); i++) {
		c->slot[i].ip = 0;
		c->slot[i].sym = zero;
	}
	return c;
}

const char *report_sources_text(const struct trace_info *in, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len,
				    "breakpoint %" PRIu64 ", trampoline %" PRIu64 ", guest %" PRIu64,
				    in->events_by_source[ET_REC_SRC_BREAKPOINT],
				    in->events_by_source[ET_REC_SRC_TRAMPOLINE],
				    in->events_by_source[ET_REC_SRC_GUEST]);

	if (in->nr_ftrace && n < len)
		n += (size_t)snprintf(buf + n, len - n, ", ftrace %" PRIu64, in->nr_ftrace);
	if (in->events_by_source[0] && n < len)
		snprintf(buf + n, len - n, ", unknown %" PRIu64, in->events_by_source[0]);
	return buf;
}

const char *report_counts_text(const struct trace_info *in, char *buf, size_t len)
{
	uint64_t calls = in->nr_events - in->nr_returns - in->nr_exits;

	snprintf(buf, len,
		 "%" PRIu64 " events: %" PRIu64 " calls, %" PRIu64 " returns, %" PRIu64
		 " exits, %" PRIu64 " kernel events",
		 in->nr_events + in->nr_kevents, calls, in->nr_returns, in->nr_exits, in->nr_kevents);
	return buf;
}

const char *report_exit_counts(const struct trace_info *in, char *buf, size_t len)
{
	size_t n;

	buf[0] = '\0';
	if (!in->nr_exits)
		return buf;
	n = (size_t)snprintf(buf, len, "%" PRIu64 " (", in->nr_exits);
	for (unsigned k = 0; k < TRACE_EXIT_KINDS && n < len; k++)
		if (in->exits_by_kind[k])
			n += (size_t)snprintf(buf + n, len - n, "%s%s %" PRIu64, buf[n - 1] == '(' ? "" : ", ",
					      event_exit_kind_name(ET_REC_EXIT_FIRST + k),
					      in->exits_by_kind[k]);
	if (n < len)
		snprintf(buf + n, len - n, ")");
	return buf;
}

const char *report_symbol_offset(struct name_cache *c, uint64_t ip, char *buf, size_t len)
{
	const struct symbol *s = name_cache_symbol(c, ip);

	if (!s)
		snprintf(buf, len, "0x%" PRIx64, ip);
	else if (ip == s->addr)
		snprintf(buf, len, "%s", s->name);
	else
		snprintf(buf, len, "%s+0x%" PRIx64, s->name, ip - s->addr);
	return buf;
}

void note_merge_init(struct note_merge *m, const struct trace_reader *r)
{
	m->notes = trace_reader_notes(r, &m->nr);
	m->next = 0;
}

const struct trace_note *note_merge_before(struct note_merge *m, uint64_t tsc)
{
	if (m->next < m->nr && m->notes[m->next].tsc < tsc)
		return &m->notes[m->next++];
	return NULL;
}

const struct trace_note *note_merge_rest(struct note_merge *m)
{
	return m->next < m->nr ? &m->notes[m->next++] : NULL;
}

static const struct {
	const char *name, *ext;
	int (*write)(struct trace_reader *r, FILE *out);
} formats[REPORT_FORMAT_COUNT] = {
#define REPORT_FORMAT_ROW(id, n, e, w) [REPORT_##id] = { .name = n, .ext = e, .write = w },
	REPORT_FORMATS(REPORT_FORMAT_ROW)
#undef REPORT_FORMAT_ROW
};

bool report_format_of_path(const char *path, enum report_format *fmt)
{
	size_t n = strlen(path);

	for (size_t i = 0; i < REPORT_FORMAT_COUNT; i++) {
		size_t e = formats[i].ext ? strlen(formats[i].ext) : 0;

		if (e && n > e && !strcmp(path + n - e, formats[i].ext) && path[n - e - 1] != '/') {
			*fmt = (enum report_format)i;
			return true;
		}
	}
	return false;
}

int report_parse_format(const char *name, enum report_format *fmt)
{
	char names[256] = "";
	size_t len = 0;

	for (size_t i = 0; i < REPORT_FORMAT_COUNT; i++) {
		if (!strcmp(name, formats[i].name)) {
			*fmt = (enum report_format)i;
			return 0;
		}
		len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
					i == 0 ? "" : i + 1 < REPORT_FORMAT_COUNT ? ", " : " or ",
					formats[i].name);
		if (len >= sizeof(names))
			len = sizeof(names) - 1;
	}
	return et_error("unknown report format '%s' (use %s)", name, names);
}

static char last_note[1024];
static bool raw_durations;

void report_set_raw_durations(bool raw)
{
	raw_durations = raw;
}

bool report_raw_durations(void)
{
	return raw_durations;
}

const char *report_note(void)
{
	return last_note;
}

void report_set_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_note, sizeof(last_note), fmt, ap);
	va_end(ap);
}

void report_note_clamped(const struct overhead_clock *c)
{
	char buf[256];

	if (!last_note[0] && overhead_clamped_text(c, buf, sizeof(buf))[0])
		report_set_note("%s", buf);
}

int report_write(struct trace_reader *r, enum report_format fmt, FILE *out)
{
	last_note[0] = '\0';
	if ((unsigned)fmt >= REPORT_FORMAT_COUNT)
		return et_error("unknown report format");
	return formats[fmt].write(r, out);
}

/* ---- summary ------------------------------------------------------- */

struct func_count {
	const char *name;
	uint64_t ip; /* for unknown functions */
	uint64_t count;
};

static int compare_counts(const void *a, const void *b)
{
	const struct func_count *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->name && y->name)
		return strcmp(x->name, y->name);
	if (x->name || y->name)
		return x->name ? -1 : 1;
	return x->ip < y->ip ? -1 : x->ip > y->ip;
}

static void print_time(struct outbuf *ob, const struct trace_info *in, uint64_t tsc)
{
	int64_t since = trace_time_ns(in, tsc);
	uint64_t t = since < 0 ? (uint64_t)-since : (uint64_t)since;

	if (in->tsc_khz)
		ob_printf(ob, "%s%" PRIu64 ".%06" PRIu64 " s (tsc %" PRIu64 ")", since < 0 ? "-" : "",
			  t / 1000000000u, t % 1000000000u / 1000u, tsc);
	else
		ob_printf(ob, "%s%" PRIu64 " cycles (tsc %" PRIu64 ")", since < 0 ? "-" : "", t, tsc);
}

int report_summary(struct trace_reader *r, FILE *out)
{
	const struct trace_info *in = trace_reader_info(r);
	const struct symtab *tab = trace_reader_symtab(r);
	uint64_t *counts = calloc(tab->nr ? tab->nr : 1, sizeof(*counts));
	uint64_t *unknown = NULL;
	size_t nr_unknown = 0, cap_unknown = 0, nr_funcs = 0;
	struct func_count *funcs = NULL;
	struct trace_record rec;
	struct outbuf *ob = malloc(sizeof(*ob));
	struct name_cache *names = name_cache_new(tab);
	char state[512];
	int ret = -1;

	if (!counts || !ob || !names) {
		et_error("out of memory");
		goto out;
	}
	ob->f = out;
	ob->len = 0;
	trace_reader_rewind(r);
	while ((ret = trace_reader_next(r, &rec)) > 0) {
		for (size_t i = 0; i < rec.nr_events; i++) {
			uint64_t ip = rec.events[i].ip;
			const struct symbol *s;

			/* Calls only: not returns, not VM exits. */
			if (et_rec_is_exit(&rec.events[i]) || et_rec_kind(&rec.events[i]) == ET_REC_RET)
				continue;
			s = name_cache_symbol(names, ip);

			if (s) {
				counts[s - tab->syms]++;
				continue;
			}
			if (nr_unknown == cap_unknown) {
				uint64_t *u = array_grow(unknown, &cap_unknown, sizeof(*u), 256);

				if (!u) {
					ret = et_error("out of memory");
					goto out;
				}
				unknown = u;
			}
			unknown[nr_unknown++] = ip;
		}
	}
	if (ret < 0)
		goto out;
	ret = -1;
	if (nr_unknown)
		qsort(unknown, nr_unknown, sizeof(*unknown), sorted_compare_u64);
	funcs = calloc(tab->nr + nr_unknown + 1, sizeof(*funcs));
	if (!funcs) {
		et_error("out of memory");
		goto out;
	}
	for (size_t i = 0; i < tab->nr; i++)
		if (counts[i])
			funcs[nr_funcs++] = (struct func_count){ tab->syms[i].name, 0, counts[i] };
	for (size_t i = 0; i < nr_unknown;) {
		size_t j = i;

		while (j < nr_unknown && unknown[j] == unknown[i])
			j++;
		funcs[nr_funcs++] = (struct func_count){ NULL, unknown[i], j - i };
		i = j;
	}
	qsort(funcs, nr_funcs, sizeof(*funcs), compare_counts);

	ob_printf(ob, "# earlytrace trace summary (file format %u, written by earlytrace %s)\n",
		  in->version, in->tool_version[0] ? in->tool_version : "?");
	ob_printf(ob, "kernel:       %s", in->kernel_path[0] ? in->kernel_path : "(unknown)");
	if (in->build_id_hex[0])
		ob_printf(ob, " (build-id %s)", in->build_id_hex);
	ob_printf(ob, "\nmode:         %s\n", in->mode[0] ? in->mode : "(unknown)");
	ob_printf(ob, "symbols:      %s (%" PRIu64 " in the trace file)\n",
		  in->symbol_source[0] ? in->symbol_source : "(unknown)", in->nr_symbols);
	if (in->tsc_khz)
		ob_printf(ob, "clock:        guest TSC at %" PRIu64 " kHz; times are %s (tsc %" PRIu64 ")\n",
			  in->tsc_khz, trace_origin_text(in), in->origin_tsc);
	else
		ob_printf(ob, "clock:        guest TSC, frequency unknown; times are cycles of %s (tsc %" PRIu64 ")\n",
			  trace_origin_text(in), in->origin_tsc);
	ob_printf(ob, "state:        %s\n", trace_reader_state(r, state, sizeof(state)));
	ob_printf(ob, "recorded as:  %s\n", report_counts_text(in, state, sizeof(state)));
	ob_printf(ob, "by source:    %s (calls and returns)\n",
		  report_sources_text(in, state, sizeof(state)));
	if (in->nr_exits)
		ob_printf(ob, "exits:        %s\n", report_exit_counts(in, state, sizeof(state)));
	if (in->has_end)
		ob_printf(ob, "recorded:     %" PRIu64 "\n", in->end_recorded);
	ob_printf(ob, "dropped:      %" PRIu64, in->dropped);
	if (in->dropped && in->drop_reason[0])
		ob_printf(ob, " (%s)", in->drop_reason);
	ob_char(ob, '\n');
	if (in->end_lost)
		ob_printf(ob, "not written:  %" PRIu64 " (trace file write failed)\n", in->end_lost);
	if (in->nr_events) {
		ob_str(ob, "first event:  ");
		print_time(ob, in, in->min_tsc);
		ob_str(ob, "\nlast event:   ");
		print_time(ob, in, in->max_tsc);
		ob_char(ob, '\n');
	}
	ob_printf(ob, "marks:        %" PRIu64 "\n", in->nr_marks);
	ob_printf(ob, "functions:    %zu called\n\n", nr_funcs);
	ob_str(ob, "       calls  function\n");
	for (size_t i = 0; i < nr_funcs; i++) {
		ob_u64(ob, funcs[i].count, 12, ' ');
		ob_str(ob, "  ");
		if (funcs[i].name)
			ob_str(ob, funcs[i].name);
		else
			ob_hex(ob, funcs[i].ip);
		ob_char(ob, '\n');
	}
	ret = ob_finish(ob);
out:
	free(funcs);
	free(unknown);
	free(counts);
	free(ob);
	free(names);
	return ret;
}
