/* SPDX-License-Identifier: MIT */
/*
 * The text of Linux's function_graph tracer, from a trace recorded with
 * --graph (default options: CPU, overhead marks, durations):
 *
 *   # CPU  DURATION                  FUNCTION CALLS
 *   # |     |   |                     |   |   |   |
 *    0)               |  ct_root() {
 *    0)   1.234 us    |    ct_leaf();
 *    0) + 12.345 us   |  }
 *
 * A call whose return follows directly is a leaf, "func();" with its
 * duration; otherwise "func() {" opens it and "}" closes it with the
 * duration. Durations are the guest TSC between the call and the return
 * (so they include the tracing's own exits), printed as ftrace does,
 * with its overhead marks: '+' over 10 us, '!' over 100 us, '#' over
 * 1 ms, '*' over 10 ms, '@' over 100 ms, '$' over 1 s. VM exits, marks
 * and drops are comment lines at the current depth. Calls recorded
 * without a return (after a handoff, or traced without --graph) print as
 * "func();" with no duration and a comment saying so. Lines deeper than
 * REPORT_MAX_DEPTH levels are indented as that level (report_util.h),
 * after a comment line that says so.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/report/report.h"
#include "vmm/report/report_util.h"
#include "vmm/trace/overhead.h"
#include "vmm/util/error.h"
#include "vmm/util/grow.h"

#define GRAPH_CPUS 256 /* exit records carry 8 bits of vCPU */
#define INDENT 2      /* TRACE_GRAPH_INDENT */

struct open_call {
	uint64_t ip, tsc;
};

struct cpu_stack {
	struct open_call *calls;
	size_t nr, cap;
};

struct graph_state {
	struct outbuf *ob;
	const struct trace_info *in;
	struct name_cache *names;
	struct note_merge notes;
	unsigned cpu_width;
	struct cpu_stack cpus[GRAPH_CPUS];
	bool capped;	/* a line was deeper than REPORT_MAX_DEPTH */
	size_t deepest;
	struct overhead_clock clock; /* durations without the tracer's exits */
};

/* The next event in time order, its tsc on the clock without the tracer's
 * exits, and as recorded in *raw. */
static int next_event(struct graph_state *st, struct trace_merge *m, struct et_ring_record *e,
		      uint64_t *raw)
{
	int ret = trace_merge_next(m, e);

	if (ret > 0) {
		*raw = e->tsc;
		e->tsc = overhead_clock_event(&st->clock, e);
	}
	return ret;
}

static struct cpu_stack *stack_of(struct graph_state *st, uint32_t cpu)
{
	return &st->cpus[cpu < GRAPH_CPUS ? cpu : GRAPH_CPUS - 1];
}

static int push(struct cpu_stack *s, uint64_t ip, uint64_t tsc)
{
	if (s->nr == s->cap) {
		struct open_call *c = array_grow(s->calls, &s->cap, sizeof(*c), 64);

		if (!c)
			return et_error("out of memory");
		s->calls = c;
	}
	s->calls[s->nr++] = (struct open_call){ ip, tsc };
	return 0;
}

/* ftrace's trace_find_mark(): the overhead mark of a duration in ns. */
static char overhead_mark(uint64_t ns)
{
	static const struct {
		uint64_t over;
		char sym;
	} marks[] = {
		{ 1000000000ull, '$' }, { 100000000ull, '@' }, { 10000000ull, '*' },
		{ 1000000ull, '#' },	{ 100000ull, '!' },    { 10000ull, '+' },
	};

	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
		if (ns > marks[i].over)
			return marks[i].sym;
	return ' ';
}

/* " 0) " */
static void cpu_column(struct graph_state *st, uint32_t cpu)
{
	ob_char(st->ob, ' ');
	ob_u64(st->ob, cpu, st->cpu_width, ' ');
	ob_str(st->ob, ") ");
}

/* ftrace's print_graph_duration(): "X 1.234 us    |  ", 7 digits at most
 * before " us", padded to one width; or the empty column. */
static void duration_column(struct graph_state *st, const uint64_t *ns)
{
	char usecs[24], nsecs[8];
	size_t len;

	if (!ns) {
		ob_str(st->ob, "              |  ");
		return;
	}
	ob_char(st->ob, overhead_mark(*ns));
	ob_char(st->ob, ' ');
	snprintf(usecs, sizeof(usecs), "%" PRIu64, *ns / 1000);
	ob_str(st->ob, usecs);
	len = strlen(usecs);
	if (len < 7) {
		/* As many nanosecond digits as fit in 7 characters. */
		snprintf(nsecs, 8 - len < 5 ? 8 - len : 5, "%03" PRIu64, *ns % 1000);
		ob_char(st->ob, '.');
		ob_str(st->ob, nsecs);
		len += strlen(nsecs) + 1;
	}
	ob_str(st->ob, " us ");
	for (; len < 8; len++)
		ob_char(st->ob, ' ');
	ob_str(st->ob, "|  ");
}

/* Past REPORT_MAX_DEPTH levels lines stop indenting (report_util.h). */
static void indent(struct graph_state *st, size_t depth)
{
	if (depth > REPORT_MAX_DEPTH)
		depth = REPORT_MAX_DEPTH;
	for (size_t i = 0; i < depth * INDENT; i++)
		ob_char(st->ob, ' ');
}

/* Before a call at this depth: the first one past the cap gets a line
 * that says so. */
static void depth_notice(struct graph_state *st, size_t depth)
{
	if (depth <= REPORT_MAX_DEPTH)
		return;
	if (depth + 1 > st->deepest)
		st->deepest = depth + 1; /* depth counts the open calls around it */
	if (st->capped)
		return;
	st->capped = true;
	ob_printf(st->ob, "# earlytrace: calls nest deeper than %d levels: deeper lines are "
			  "indented as that level\n", REPORT_MAX_DEPTH);
}

static void func_name(struct graph_state *st, uint64_t ip)
{
	const char *name = name_cache_lookup(st->names, ip);

	if (name)
		ob_str(st->ob, name);
	else
		ob_hex(st->ob, ip);
}

static uint64_t duration_ns(struct graph_state *st, uint64_t from, uint64_t to)
{
	uint64_t d = to > from ? to - from : 0;

	return st->in->tsc_khz ? report_tsc_ns(d, st->in->tsc_khz, 0) : d;
}

/* A comment line at the CPU's current depth: exits, marks. */
static void comment(struct graph_state *st, uint32_t cpu, const char *what, const char *text)
{
	cpu_column(st, cpu);
	duration_column(st, NULL);
	indent(st, stack_of(st, cpu)->nr);
	ob_str(st->ob, "/* ");
	ob_str(st->ob, what);
	ob_str(st->ob, text);
	ob_str(st->ob, " */\n");
}

static void note_line(struct graph_state *st, const struct trace_note *n)
{
	if (n->type == TRACE_REC_MARK) {
		comment(st, 0, "mark: ", n->text);
		return;
	}
	if (n->type == TRACE_REC_KEVENT) {
		comment(st, n->cpu, "", n->text);
		return;
	}
	ob_printf(st->ob, "# earlytrace: %" PRIu64 " events dropped (%s)\n", n->dropped,
		  n->text[0] ? n->text : "no reason given");
}

static void notes_before(struct graph_state *st, uint64_t tsc)
{
	const struct trace_note *n;

	while ((n = note_merge_before(&st->notes, tsc)))
		note_line(st, n);
}

static void exit_line(struct graph_state *st, const struct et_ring_record *e)
{
	char text[192], where[192], line[400];

	snprintf(line, sizeof(line), "%s in %s", event_exit_text(e, text, sizeof(text)),
		 report_symbol_offset(st->names, e->ip, where, sizeof(where)));
	comment(st, et_rec_cpu(e), "vm_exit: ", line);
}

static void return_line(struct graph_state *st, const struct et_ring_record *e)
{
	struct cpu_stack *s = stack_of(st, e->cpu);
	bool matched = s->nr && s->calls[s->nr - 1].ip == e->ip;
	uint64_t ns;

	cpu_column(st, e->cpu);
	if (!matched) {
		/* Its call is not in the file (dropped, or before it began). */
		duration_column(st, NULL);
		indent(st, s->nr);
		ob_str(st->ob, "} /* ");
		func_name(st, e->ip);
		ob_str(st->ob, " */\n");
		return;
	}
	s->nr--;
	ns = duration_ns(st, s->calls[s->nr].tsc, e->tsc);
	duration_column(st, &ns);
	indent(st, s->nr);
	ob_char(st->ob, '}');
	if (e->flags & ET_REC_F_UNWOUND) {
		ob_str(st->ob, " /* ");
		func_name(st, e->ip);
		ob_str(st->ob, ": unwound, its return was never seen */");
	}
	ob_char(st->ob, '\n');
}

/* A call, given the event after it (NULL at the end). */
static int call_line(struct graph_state *st, const struct et_ring_record *e,
		     const struct et_ring_record *next)
{
	struct cpu_stack *s = stack_of(st, e->cpu);
	uint64_t ns;

	depth_notice(st, s->nr);
	cpu_column(st, e->cpu);
	if (!(e->flags & ET_REC_F_RET_TRACED)) {
		duration_column(st, NULL);
		indent(st, s->nr);
		func_name(st, e->ip);
		ob_str(st->ob, "(); /* no return traced */\n");
		return 0;
	}
	if (next && et_rec_kind(next) == ET_REC_RET && next->ip == e->ip && next->cpu == e->cpu &&
	    !(next->flags & ET_REC_F_UNWOUND)) {
		ns = duration_ns(st, e->tsc, next->tsc);
		duration_column(st, &ns);
		indent(st, s->nr);
		func_name(st, e->ip);
		ob_str(st->ob, "();\n");
		return 1; /* the return is consumed */
	}
	duration_column(st, NULL);
	indent(st, s->nr);
	func_name(st, e->ip);
	ob_str(st->ob, "() {\n");
	return push(s, e->ip, e->tsc);
}

static void header(struct graph_state *st, struct trace_reader *r)
{
	const struct trace_info *in = st->in;
	char state[512];

	ob_str(st->ob, "# tracer: function_graph\n#\n");
	ob_printf(st->ob, "# earlytrace %s: kernel %s, mode %s\n",
		  in->tool_version[0] ? in->tool_version : "?",
		  in->kernel_path[0] ? in->kernel_path : "(unknown)",
		  in->mode[0] ? in->mode : "(unknown)");
	ob_printf(st->ob, "# earlytrace: %" PRIu64 " calls, %" PRIu64 " returns, %" PRIu64
			  " VM exits\n",
		  in->nr_events - in->nr_returns - in->nr_exits, in->nr_returns, in->nr_exits);
	if (in->tsc_khz)
		ob_printf(st->ob, "# earlytrace: clock: guest TSC at %" PRIu64 " kHz\n", in->tsc_khz);
	else
		ob_str(st->ob, "# earlytrace: clock: guest TSC frequency unknown; DURATION is in "
			       "TSC cycles, not us\n");
	if (!in->nr_returns)
		ob_str(st->ob, "# earlytrace: no returns in this trace (record with --graph)\n");
	else
		ob_printf(st->ob, "# earlytrace: %s\n",
			  overhead_describe(in, report_raw_durations(), state, sizeof(state)));
	ob_printf(st->ob, "# earlytrace: %s\n", trace_reader_state(r, state, sizeof(state)));
	if (in->dropped)
		ob_printf(st->ob, "# earlytrace: %" PRIu64 " events dropped\n", in->dropped);
	ob_str(st->ob, "#\n");
	ob_str(st->ob, "# CPU  DURATION                  FUNCTION CALLS\n");
	ob_str(st->ob, "# |     |   |                     |   |   |   |\n");
}

int report_graph(struct trace_reader *r, FILE *out)
{
	struct graph_state *st = calloc(1, sizeof(*st));
	struct trace_merge *m = NULL;
	struct et_ring_record cur, next;
	uint64_t cur_raw = 0, next_raw = 0;
	const struct trace_note *n;
	bool have_cur, have_next;
	int ret = -1;

	if (!st || !(st->ob = calloc(1, sizeof(*st->ob))) ||
	    !(st->names = name_cache_new(trace_reader_symtab(r)))) {
		et_error("out of memory");
		goto out;
	}
	st->in = trace_reader_info(r);
	/* As --format folded: a trace of calls alone has no graph to show
	 * (every line would be a call "with no return traced"). */
	if (!st->in->nr_returns && !st->in->nr_ret_traced) {
		et_error("no returns in this trace: the function graph needs one recorded with "
			 "'earlytrace trace --graph' (--format ftrace shows its calls)");
		goto out;
	}
	if (trace_merge_open(r, &m))
		goto out;
	st->ob->f = out;
	st->ob->len = 0;
	st->in = trace_reader_info(r);
	for (uint32_t c = st->in->nr_cpus > 1 ? st->in->nr_cpus - 1 : 0; c; c /= 10)
		st->cpu_width++;
	if (!st->cpu_width)
		st->cpu_width = 1;
	note_merge_init(&st->notes, r);
	header(st, r);

	/* One event of lookahead: a call followed by its own return is a leaf.
	 * Events carry their time without the tracer's exits; notes are
	 * placed by the raw TSC. */
	overhead_clock_init(&st->clock, st->in, report_raw_durations());
	ret = next_event(st, m, &cur, &cur_raw);
	have_cur = ret > 0;
	while (have_cur) {
		ret = next_event(st, m, &next, &next_raw);
		if (ret < 0)
			goto out;
		have_next = ret > 0;
		notes_before(st, cur_raw);
		if (et_rec_is_exit(&cur)) {
			exit_line(st, &cur);
		} else if (et_rec_kind(&cur) == ET_REC_RET) {
			return_line(st, &cur);
		} else {
			int used = call_line(st, &cur, have_next ? &next : NULL);

			if (used < 0)
				goto out;
			if (used == 1 && have_next) {
				ret = next_event(st, m, &next, &next_raw);
				if (ret < 0)
					goto out;
				have_next = ret > 0;
			}
		}
		cur = next;
		cur_raw = next_raw;
		have_cur = have_next;
	}
	while ((n = note_merge_rest(&st->notes)))
		note_line(st, n);
	ret = ob_finish(st->ob);
	report_note_clamped(&st->clock);
	if (st->capped)
		report_set_note("calls nest %zu levels deep: lines deeper than %d are indented as "
				"level %d",
				st->deepest, REPORT_MAX_DEPTH, REPORT_MAX_DEPTH);
out:
	trace_merge_close(m);
	if (st) {
		if (st->ob && ret)
			ob_flush(st->ob);
		for (size_t c = 0; c < GRAPH_CPUS; c++)
			free(st->cpus[c].calls);
		free(st->ob);
		free(st->names);
		free(st);
	}
	return ret;
}
