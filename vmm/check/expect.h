/* SPDX-License-Identifier: MIT */
/*
 * Boot-trace expectations: a small line-based language, one assertion per
 * line, checked against a trace file (docs/ci-howto.md describes it):
 *
 *   called FUNC                    FUNC is called at least once
 *   not-called FUNC                FUNC is never called
 *   before A B                     the first call of A comes before B's
 *   calls FUNC ==|>=|<= N          FUNC is called exactly / at least /
 *                                  at most N times
 *   reached FUNC within N events   FUNC's first call is among the first N
 *                                  calls (also "N calls")
 *   reached FUNC within T UNIT     ...at most T of guest time after the
 *                                  guest's first instruction (ns, us, ms, s)
 *   handoff [guest-ring|SYMBOL]    the trace has a handoff mark (the guest
 *                                  took over with guestlib's ring, or the
 *                                  kernel reached SYMBOL, e.g. ftrace_init)
 *   no-drops                       no event was dropped or lost
 *
 * FUNC is a function name or an ftrace-style glob (vmm/sites/glob.h),
 * resolved through the trace file's own symbols. '#' starts a comment.
 * The parser and the evaluator are separate: expect_parse.c turns text
 * into struct expect_list (errors name file:line), expect_eval.c runs a
 * list over a trace.
 */
#ifndef VMM_CHECK_EXPECT_H
#define VMM_CHECK_EXPECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/tracefile/trace_file.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EXPECT_MAX_FILE (4u << 20) /* larger expectation files are refused */

enum expect_kind {
	EXPECT_CALLED,
	EXPECT_NOT_CALLED,
	EXPECT_BEFORE,
	EXPECT_CALLS,
	EXPECT_REACHED_EVENTS,
	EXPECT_REACHED_TIME,
	EXPECT_HANDOFF,
	EXPECT_NO_DROPS,
};

enum expect_cmp {
	EXPECT_CMP_EQ, /* == */
	EXPECT_CMP_GE, /* >= */
	EXPECT_CMP_LE, /* <= */
};

struct expect {
	enum expect_kind kind;
	unsigned line;	     /* in the file, from 1 */
	char *text;	     /* the assertion, words joined by one space */
	char *func[2];	     /* function patterns: [0] for all with one, [1] B of before */
	enum expect_cmp cmp; /* calls */
	uint64_t count;	     /* calls: N; reached ... events: N */
	uint64_t ns;	     /* reached ... UNIT: the limit in nanoseconds */
	char *handoff;	     /* handoff: "guest-ring", a symbol, or NULL for any */
};

struct expect_list {
	char *name; /* the file, for messages */
	struct expect *items;
	size_t nr;
};

/* Parses text (len bytes; NUL bytes are an error) into l; name is used in
 * messages ("name:line: ..."). A file with no assertion is an error. 0, or
 * -1 with et_last_error() naming the first bad line. */
int expect_parse(struct expect_list *l, const char *name, const char *text, size_t len);
/* Reads and parses a file. */
int expect_parse_file(struct expect_list *l, const char *path);
void expect_list_free(struct expect_list *l);

/* The outcome of one assertion. */
enum expect_status {
	EXPECT_PASS,
	EXPECT_FAIL,  /* the trace contradicts it */
	EXPECT_ERROR, /* it cannot be decided on this trace (an unknown
		       * function, no TSC frequency) */
};

#define EXPECT_TEXT_MAX 320

struct expect_outcome {
	enum expect_status status;
	char detail[EXPECT_TEXT_MAX];  /* what was found, one line ("512 calls") */
	char expected[EXPECT_TEXT_MAX]; /* fail and error: what was asked */
};

/* What the evaluation saw of the trace, for the report's header. */
struct expect_facts {
	uint64_t calls;	  /* call events (returns and VM exits are not calls) */
	uint64_t unnamed; /* calls at an ip no symbol covers */
};

/* Evaluates every assertion of l over the trace r (two passes over its
 * events, from the first record); out has l->nr entries; facts may be
 * NULL. 0, or -1 with an error when the trace cannot be read or memory
 * runs out.
 *
 * Order is guest time: by guest TSC, file order among equal TSCs. Guest
 * time counts from the guest's first instruction (trace_time_ns()), as
 * in every report. */
int expect_evaluate(const struct expect_list *l, struct trace_reader *r,
		    struct expect_outcome *out, struct expect_facts *facts);

/* Patterns of l that name one function (no glob) which the run's --filter
 * and --notrace leave out, so the trace cannot hold its calls: calls
 * warn(ctx, line, func, why) for each. 0, or -1 for a malformed pattern. */
int expect_check_filters(const struct expect_list *l, const char *const *filters,
			 size_t nr_filters, const char *const *notrace, size_t nr_notrace,
			 void (*warn)(void *ctx, const struct expect_list *l, const struct expect *e,
				      const char *func, const char *why),
			 void *ctx);

#ifdef __cplusplus
}
#endif

#endif /* VMM_CHECK_EXPECT_H */
