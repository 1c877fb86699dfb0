/* SPDX-License-Identifier: MIT */
/*
 * Evaluating expectations over a trace file.
 *
 * Each function pattern resolves to a set of symbols of the trace file's
 * own table: every symbol whose name matches, taken as the symbol that
 * names its address (so an alias such as memcpy/__memcpy counts the calls
 * recorded under either). Only call events count (returns and VM exits,
 * when a trace has them, are not calls).
 *
 * Order is guest time: events sorted by guest TSC, file order among equal
 * TSCs. (A file is not always in time order: a guest ring is appended at
 * the end of the run.) The first pass counts calls per symbol and keeps
 * each symbol's earliest call; a pattern's numbers are the sums and the
 * earliest over its set. The second pass ranks each pattern's first call
 * among all calls, for "within N events" and for the messages.
 */
#include "vmm/check/expect.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/sites/glob.h"
#include "vmm/util/error.h"

/* A call's place in time: guest TSC, then position in the file. */
struct when {
	uint64_t tsc;
	uint64_t pos; /* among the file's calls, from 1; 0: no call */
};

static bool earlier(const struct when *a, const struct when *b)
{
	return a->tsc < b->tsc || (a->tsc == b->tsc && a->pos < b->pos);
}

struct symstat {
	uint64_t calls;
	struct when first;
};

struct pattern {
	const char *text;
	size_t *syms;	 /* indexes into the table: the set */
	size_t nr;
	bool glob;	 /* a pattern rather than one name */
	/* over the set */
	uint64_t calls;
	struct when first;
	uint64_t rank;	 /* the first call's place among all calls, from 1 */
	const char *first_name;
};

struct eval {
	const struct trace_info *in;
	const struct symtab *tab;
	struct symstat *stat;
	uint64_t calls, unnamed;
};

static bool is_call(const struct et_ring_record *e)
{
	return (e->kind & 0xff) == ET_REC_CALL;
}

static void say(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(char *buf, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, EXPECT_TEXT_MAX, fmt, ap);
	va_end(ap);
}

static const char *plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}

/* Guest time of a TSC value: nanoseconds since the trace's time zero (the
 * guest's first instruction), as every report shows it. */
static uint64_t guest_ns(const struct trace_info *in, uint64_t tsc)
{
	int64_t ns = trace_time_ns(in, tsc);

	return ns > 0 ? (uint64_t)ns : 0;
}

/* "12.345678 ms": nanoseconds, in the unit the assertions mostly use. */
static const char *fmt_ms(char *buf, size_t len, uint64_t ns)
{
	snprintf(buf, len, "%" PRIu64 ".%06" PRIu64 " ms", ns / 1000000u, ns % 1000000u);
	return buf;
}

static int resolve(struct pattern *p, const char *text, const struct symtab *tab, bool *mark)
{
	struct glob g;

	memset(p, 0, sizeof(*p));
	p->text = text;
	if (glob_compile(&g, text))
		return -1;
	p->glob = g.kind != GLOB_FULL;
	p->syms = malloc((tab->nr ? tab->nr : 1) * sizeof(*p->syms));
	if (!p->syms)
		return et_error("out of memory");
	for (size_t i = 0; i < tab->nr; i++) {
		const struct symbol *s;
		size_t k;

		if (!glob_match(&g, tab->syms[i].name))
			continue;
		s = symtab_lookup(tab, tab->syms[i].addr, NULL);
		if (!s)
			continue;
		k = (size_t)(s - tab->syms);
		if (!mark[k]) {
			mark[k] = true;
			p->syms[p->nr++] = k;
		}
	}
	for (size_t i = 0; i < p->nr; i++)
		mark[p->syms[i]] = false;
	return 0;
}

static void aggregate(struct pattern *p, const struct eval *ev)
{
	for (size_t i = 0; i < p->nr; i++) {
		const struct symstat *s = &ev->stat[p->syms[i]];

		p->calls += s->calls;
		if (s->calls && (!p->first.pos || earlier(&s->first, &p->first))) {
			p->first = s->first;
			p->first_name = ev->tab->syms[p->syms[i]].name;
		}
	}
}

/* "'ct_leaf'", or "a function matching 'ct_*'" */
static const char *what(char *buf, size_t len, const struct pattern *p)
{
	snprintf(buf, len, p->glob ? "a function matching '%s'" : "'%s'", p->text);
	return buf;
}

/* "call 138 at 9.813349 ms" (", ct_fib" for a glob) */
static const char *first_call(char *buf, size_t len, const struct eval *ev,
			      const struct pattern *p)
{
	char t[48];
	size_t n = (size_t)snprintf(buf, len, "call %" PRIu64, p->rank);

	if (ev->in->tsc_khz && n < len)
		n += (size_t)snprintf(buf + n, len - n, " at %s",
				      fmt_ms(t, sizeof(t), guest_ns(ev->in, p->first.tsc)));
	if (p->glob && n < len)
		snprintf(buf + n, len - n, " (%s)", p->first_name);
	return buf;
}

/* An assertion about a pattern no symbol answers to cannot be decided:
 * most often a typo, which must not pass as "never called". */
static bool unknown(struct expect_outcome *o, const struct eval *ev, const struct pattern *p)
{
	if (p->nr)
		return false;
	o->status = EXPECT_ERROR;
	say(o->expected, "a function %s '%s' among the trace file's symbols",
	    p->glob ? "matching" : "named", p->text);
	say(o->detail, "none of the trace file's %zu symbols %s '%s'", ev->tab->nr,
	    p->glob ? "matches" : "is named", p->text);
	return true;
}

static void eval_called(const struct expect *e, struct expect_outcome *o, const struct eval *ev,
			const struct pattern *p)
{
	char w[EXPECT_TEXT_MAX / 2], f[128];

	if (unknown(o, ev, p))
		return;
	what(w, sizeof(w), p);
	if (e->kind == EXPECT_CALLED) {
		if (p->calls) {
			say(o->detail, "%" PRIu64 " call%s, the first is %s", p->calls,
			    plural(p->calls), first_call(f, sizeof(f), ev, p));
			return;
		}
		o->status = EXPECT_FAIL;
		say(o->expected, "%s to be called", w);
		say(o->detail, "it was never called (the trace holds %" PRIu64 " calls)", ev->calls);
		return;
	}
	if (!p->calls) {
		say(o->detail, "never called in %" PRIu64 " calls", ev->calls);
		return;
	}
	o->status = EXPECT_FAIL;
	say(o->expected, "%s never to be called", w);
	say(o->detail, "it was called %" PRIu64 " time%s, the first is %s", p->calls,
	    plural(p->calls), first_call(f, sizeof(f), ev, p));
}

static void eval_before(struct expect_outcome *o, const struct eval *ev, const struct pattern *a,
			const struct pattern *b)
{
	char wa[EXPECT_TEXT_MAX / 3], wb[EXPECT_TEXT_MAX / 3], fa[128], fb[128];

	if (unknown(o, ev, a) || unknown(o, ev, b))
		return;
	first_call(fa, sizeof(fa), ev, a);
	first_call(fb, sizeof(fb), ev, b);
	if (a->first.pos && b->first.pos && earlier(&a->first, &b->first)) {
		say(o->detail, "%s first is %s, %s first is %s", a->text, fa, b->text, fb);
		return;
	}
	o->status = EXPECT_FAIL;
	say(o->expected, "the first call of %s before the first call of %s",
	    what(wa, sizeof(wa), a), what(wb, sizeof(wb), b));
	if (!a->first.pos && !b->first.pos)
		say(o->detail, "neither was called");
	else if (!a->first.pos)
		say(o->detail, "%s was never called (%s first is %s)", a->text, b->text, fb);
	else if (!b->first.pos)
		say(o->detail, "%s was never called (%s first is %s)", b->text, a->text, fa);
	else
		say(o->detail, "%s came first (%s); %s only as %s", b->text, fb, a->text, fa);
}

static void eval_calls(const struct expect *e, struct expect_outcome *o, const struct eval *ev,
		       const struct pattern *p)
{
	static const char *const words[] = { "exactly", "at least", "at most" };
	char w[EXPECT_TEXT_MAX / 2];
	bool ok;

	if (unknown(o, ev, p))
		return;
	switch (e->cmp) {
	case EXPECT_CMP_EQ:
		ok = p->calls == e->count;
		break;
	case EXPECT_CMP_GE:
		ok = p->calls >= e->count;
		break;
	default:
		ok = p->calls <= e->count;
		break;
	}
	if (ok) {
		say(o->detail, "%" PRIu64 " call%s", p->calls, plural(p->calls));
		return;
	}
	o->status = EXPECT_FAIL;
	say(o->expected, "%s to be called %s %" PRIu64 " time%s", what(w, sizeof(w), p),
	    words[e->cmp], e->count, plural(e->count));
	say(o->detail, "it was called %" PRIu64 " time%s", p->calls, plural(p->calls));
}

static void eval_reached(const struct expect *e, struct expect_outcome *o, const struct eval *ev,
			 const struct pattern *p)
{
	char w[EXPECT_TEXT_MAX / 2], f[128], t[48];
	bool in_time = e->kind == EXPECT_REACHED_TIME;

	if (unknown(o, ev, p))
		return;
	what(w, sizeof(w), p);
	if (in_time)
		say(o->expected, "%s to be called within %s of guest time", w,
		    fmt_ms(t, sizeof(t), e->ns));
	else
		say(o->expected, "%s to be called within the first %" PRIu64 " call%s", w, e->count,
		    plural(e->count));
	if (in_time && !ev->in->tsc_khz) {
		o->status = EXPECT_ERROR;
		say(o->detail, "the trace file does not record the guest TSC frequency, so it has "
			       "no guest time");
		return;
	}
	if (!p->first.pos) {
		o->status = EXPECT_FAIL;
		say(o->detail, "it was never called (the trace holds %" PRIu64 " calls)", ev->calls);
		return;
	}
	first_call(f, sizeof(f), ev, p);
	if (in_time ? guest_ns(ev->in, p->first.tsc) <= e->ns : p->rank <= e->count) {
		say(o->detail, "first is %s", f);
		return;
	}
	o->status = EXPECT_FAIL;
	say(o->detail, "it was first called only as %s", f);
}

/* The handoff marks the tracer writes: "handoff: guest ring at ...", or
 * "handoff: SYMBOL reached, N sites restored". */
static bool handoff_matches(const char *text, const char *what)
{
	size_t n;

	if (strncmp(text, "handoff", 7))
		return false;
	if (!what)
		return true;
	if (!strncmp(text, "handoff: ", 9))
		text += 9;
	if (!strcmp(what, "guest-ring"))
		return !strncmp(text, "guest ring", 10);
	n = strlen(what);
	return !strncmp(text, what, n) && !strncmp(text + n, " reached", 8);
}

static void eval_handoff(const struct expect *e, struct expect_outcome *o,
			 const struct trace_reader *r)
{
	const struct trace_info *in = trace_reader_info(r);
	const struct trace_note *notes;
	const char *other = NULL;
	size_t nr;

	notes = trace_reader_notes(r, &nr);
	for (size_t i = 0; i < nr; i++) {
		if (notes[i].type != TRACE_REC_MARK)
			continue;
		if (handoff_matches(notes[i].text, e->handoff)) {
			say(o->detail, "%s", notes[i].text);
			return;
		}
		if (handoff_matches(notes[i].text, NULL))
			other = notes[i].text;
	}
	o->status = EXPECT_FAIL;
	if (!e->handoff)
		say(o->expected, "a handoff: the guest taking tracing over with guestlib, or the "
				 "kernel reaching the --handoff symbol");
	else if (!strcmp(e->handoff, "guest-ring"))
		say(o->expected, "a handoff to the guest's ring (guestlib)");
	else
		say(o->expected, "a handoff when the kernel reached %s", e->handoff);
	if (other)
		say(o->detail, "the handoff was another: '%s'", other);
	else if (in->nr_marks)
		say(o->detail, "the trace has no handoff mark (%" PRIu64 " other mark%s, the last "
			       "'%s')", in->nr_marks, plural(in->nr_marks), in->last_mark);
	else
		say(o->detail, "the trace has no marks at all");
}

static void eval_no_drops(struct expect_outcome *o, const struct trace_info *in)
{
	const char *reason = in->drop_reason[0] ? in->drop_reason : "no reason given";

	/* Events missing from a file whose END counts them are lost too. */
	if (in->doubt[0]) {
		o->status = EXPECT_FAIL;
		say(o->expected, "no event dropped or lost");
		say(o->detail, "the trace file cannot be believed: %s", in->doubt);
		return;
	}
	if (!in->dropped && !in->end_lost) {
		say(o->detail, "none dropped");
		return;
	}
	o->status = EXPECT_FAIL;
	say(o->expected, "no event dropped or lost");
	if (in->dropped && in->end_lost)
		say(o->detail, "%" PRIu64 " event%s were dropped (%s) and %" PRIu64
			       " not written to the trace file", in->dropped, plural(in->dropped),
		    reason, in->end_lost);
	else if (in->dropped)
		say(o->detail, "%" PRIu64 " event%s were dropped (%s)", in->dropped,
		    plural(in->dropped), reason);
	else
		say(o->detail, "%" PRIu64 " event%s were not written to the trace file (a write "
			       "error)", in->end_lost, plural(in->end_lost));
}

/* The first pass: calls and the earliest call per symbol. */
static int count_calls(struct eval *ev, struct trace_reader *r)
{
	struct trace_record rec;
	int ret;

	if (trace_reader_rewind(r))
		return -1;
	while ((ret = trace_reader_next(r, &rec)) > 0) {
		for (size_t i = 0; i < rec.nr_events; i++) {
			const struct et_ring_record *e = &rec.events[i];
			const struct symbol *s;
			struct symstat *st;
			struct when w;

			if (!is_call(e))
				continue;
			w = (struct when){ e->tsc, ++ev->calls };
			s = symtab_lookup(ev->tab, e->ip, NULL);
			if (!s) {
				ev->unnamed++;
				continue;
			}
			st = &ev->stat[s - ev->tab->syms];
			if (!st->calls++ || earlier(&w, &st->first))
				st->first = w;
		}
	}
	return ret;
}

/* The second pass: each first call's rank, 1 + the calls before it. */
static int rank_firsts(struct trace_reader *r, struct pattern *pat, size_t nr)
{
	struct trace_record rec;
	uint64_t pos = 0;
	int ret;

	for (size_t k = 0; k < nr; k++)
		pat[k].rank = pat[k].first.pos ? 1 : 0;
	if (trace_reader_rewind(r))
		return -1;
	while ((ret = trace_reader_next(r, &rec)) > 0) {
		for (size_t i = 0; i < rec.nr_events; i++) {
			struct when w;

			if (!is_call(&rec.events[i]))
				continue;
			w = (struct when){ rec.events[i].tsc, ++pos };
			for (size_t k = 0; k < nr; k++)
				if (pat[k].first.pos && earlier(&w, &pat[k].first))
					pat[k].rank++;
		}
	}
	return ret;
}

int expect_evaluate(const struct expect_list *l, struct trace_reader *r,
		    struct expect_outcome *out, struct expect_facts *facts)
{
	struct eval ev = { trace_reader_info(r), trace_reader_symtab(r), NULL, 0, 0 };
	size_t nr_pat = 0, n = ev.tab->nr ? ev.tab->nr : 1;
	struct pattern *pat = calloc(l->nr * 2 + 1, sizeof(*pat));
	bool *mark = calloc(n, sizeof(*mark));
	int ret = -1;

	ev.stat = calloc(n, sizeof(*ev.stat));
	if (!pat || !mark || !ev.stat) {
		et_error("out of memory");
		goto out;
	}
	for (size_t i = 0; i < l->nr; i++)
		for (int k = 0; k < 2 && l->items[i].func[k]; k++)
			if (resolve(&pat[nr_pat++], l->items[i].func[k], ev.tab, mark))
				goto out;
	if (count_calls(&ev, r))
		goto out;
	for (size_t i = 0; i < nr_pat; i++)
		aggregate(&pat[i], &ev);
	if (rank_firsts(r, pat, nr_pat))
		goto out;

	nr_pat = 0;
	for (size_t i = 0; i < l->nr; i++) {
		const struct expect *e = &l->items[i];
		struct expect_outcome *o = &out[i];
		struct pattern *p = e->func[0] ? &pat[nr_pat] : NULL;

		nr_pat += e->func[1] ? 2 : e->func[0] ? 1 : 0;
		memset(o, 0, sizeof(*o));
		o->status = EXPECT_PASS;
		switch (e->kind) {
		case EXPECT_CALLED:
		case EXPECT_NOT_CALLED:
			eval_called(e, o, &ev, p);
			break;
		case EXPECT_BEFORE:
			eval_before(o, &ev, p, p + 1);
			break;
		case EXPECT_CALLS:
			eval_calls(e, o, &ev, p);
			break;
		case EXPECT_REACHED_EVENTS:
		case EXPECT_REACHED_TIME:
			eval_reached(e, o, &ev, p);
			break;
		case EXPECT_HANDOFF:
			eval_handoff(e, o, r);
			break;
		case EXPECT_NO_DROPS:
			eval_no_drops(o, ev.in);
			break;
		}
	}
	if (facts) {
		facts->calls = ev.calls;
		facts->unnamed = ev.unnamed;
	}
	ret = 0;
out:
	for (size_t i = 0; pat && i < l->nr * 2 + 1; i++)
		free(pat[i].syms);
	free(pat);
	free(mark);
	free(ev.stat);
	return ret;
}
