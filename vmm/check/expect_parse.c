/* SPDX-License-Identifier: MIT */
/*
 * The expectation language's parser: one assertion per line, words
 * separated by spaces or tabs, '#' to the end of the line a comment.
 * Every error names the file and line and says what was expected there.
 */
#include "vmm/check/expect.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vmm/sites/glob.h"
#include "vmm/util/error.h"
#include "vmm/util/grow.h"
#include "vmm/util/input_file.h"
#include "vmm/util/printable.h"

#define MAX_WORDS 8

#define KEYWORDS "called, not-called, before, calls, reached, handoff or no-drops"

struct line_ctx {
	const char *name;
	unsigned line;
};

static int line_error(const struct line_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int line_error(const struct line_ctx *c, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return et_error("%s:%u: %s", c->name, c->line, msg);
}

/* A decimal integer without sign, fitting in 64 bits. */
static int parse_u64(const char *s, uint64_t *v)
{
	uint64_t x = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		if (x > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*v = x;
	return 0;
}

/* A decimal number ("200", "1.5", ".25") times unit_ns, in nanoseconds:
 * digits beyond what a nanosecond resolves are refused, not rounded. */
static int parse_time(const char *s, uint64_t unit_ns, uint64_t *ns)
{
	uint64_t whole = 0, frac = 0, scale = unit_ns;
	bool digits = false;

	for (; *s >= '0' && *s <= '9'; s++, digits = true) {
		if (whole > (UINT64_MAX - 9) / 10)
			return -1;
		whole = whole * 10 + (uint64_t)(*s - '0');
	}
	if (*s == '.') {
		for (s++; *s >= '0' && *s <= '9'; s++, digits = true) {
			if (scale % 10)
				return -1; /* finer than a nanosecond */
			scale /= 10;
			frac += (uint64_t)(*s - '0') * scale;
		}
	}
	if (*s || !digits)
		return -1;
	if (whole > (UINT64_MAX - frac) / unit_ns)
		return -1;
	*ns = whole * unit_ns + frac;
	return 0;
}

static int time_unit(const char *s, uint64_t *ns)
{
	static const struct {
		const char *name;
		uint64_t ns;
	} units[] = { { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 } };

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(s, units[i].name)) {
			*ns = units[i].ns;
			return 0;
		}
	}
	return -1;
}

static int check_function(const struct line_ctx *c, const char *word)
{
	struct glob g;

	if (glob_compile(&g, word))
		return line_error(c, "%s", et_last_error());
	return 0;
}

static int nwords_error(const struct line_ctx *c, const char *kw, const char *form)
{
	return line_error(c, "'%s' takes %s", kw, form);
}

#define MAX_ASSERTION_WORDS 5 /* reached FUNC within N UNIT */

/* Fills e from the words of one line. */
static int parse_words(const struct line_ctx *c, char **w, size_t n, struct expect *e)
{
	const char *kw = w[0];

	if (!strcmp(kw, "called") || !strcmp(kw, "not-called")) {
		if (n != 2)
			return line_error(c, "'%s' takes one function: '%s FUNC'", kw, kw);
		e->kind = kw[0] == 'c' ? EXPECT_CALLED : EXPECT_NOT_CALLED;
		return check_function(c, w[1]);
	}
	if (!strcmp(kw, "before")) {
		if (n != 3)
			return nwords_error(c, kw, "two functions: 'before A B' (A is called before B)");
		if (!strcmp(w[1], w[2]))
			return line_error(c, "'before' needs two different functions, not '%s' twice",
					  w[1]);
		e->kind = EXPECT_BEFORE;
		return check_function(c, w[1]) || check_function(c, w[2]) ? -1 : 0;
	}
	if (!strcmp(kw, "calls")) {
		if (n != 4)
			return nwords_error(c, kw, "a function, ==, >= or <=, and a count: "
						   "'calls FUNC >= N'");
		e->kind = EXPECT_CALLS;
		if (check_function(c, w[1]))
			return -1;
		if (!strcmp(w[2], "=="))
			e->cmp = EXPECT_CMP_EQ;
		else if (!strcmp(w[2], ">="))
			e->cmp = EXPECT_CMP_GE;
		else if (!strcmp(w[2], "<="))
			e->cmp = EXPECT_CMP_LE;
		else
			return line_error(c, "unknown comparison '%s' (use ==, >= or <=)", w[2]);
		if (parse_u64(w[3], &e->count))
			return line_error(c, "bad count '%s': expected a whole number", w[3]);
		return 0;
	}
	if (!strcmp(kw, "reached")) {
		uint64_t unit;

		if (n != 5 || strcmp(w[2], "within"))
			return nwords_error(c, kw, "'reached FUNC within N events' or "
						   "'reached FUNC within T ns|us|ms|s'");
		if (check_function(c, w[1]))
			return -1;
		if (!strcmp(w[4], "events") || !strcmp(w[4], "event") || !strcmp(w[4], "calls") ||
		    !strcmp(w[4], "call")) {
			e->kind = EXPECT_REACHED_EVENTS;
			if (parse_u64(w[3], &e->count) || e->count == 0)
				return line_error(c, "bad event count '%s': expected a whole number "
						     "above 0", w[3]);
			return 0;
		}
		if (time_unit(w[4], &unit))
			return line_error(c, "unknown unit '%s' (use events, calls, ns, us, ms or s)", w[4]);
		e->kind = EXPECT_REACHED_TIME;
		if (parse_time(w[3], unit, &e->ns) || e->ns == 0)
			return line_error(c, "bad time '%s %s': expected a number above 0, to the "
					     "nanosecond at most", w[3], w[4]);
		return 0;
	}
	if (!strcmp(kw, "handoff")) {
		if (n > 2)
			return line_error(c, "'handoff' takes at most one word: 'guest-ring' or the "
					     "symbol the kernel reached");
		e->kind = EXPECT_HANDOFF;
		if (n == 2 && !(e->handoff = strdup(w[1])))
			return et_error("out of memory");
		return 0;
	}
	if (!strcmp(kw, "no-drops")) {
		if (n != 1)
			return line_error(c, "'%s' takes nothing after it", kw);
		e->kind = EXPECT_NO_DROPS;
		return 0;
	}
	return line_error(c, "unknown assertion '%s' (expected " KEYWORDS ")", kw);
}

static char *join_words(char **w, size_t n)
{
	size_t len = 1;
	char *s;

	for (size_t i = 0; i < n; i++)
		len += strlen(w[i]) + 1;
	s = malloc(len);
	if (!s)
		return NULL;
	s[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, w[i]);
	}
	return s;
}

/* Splits one line (NUL-terminated, comment already cut) into words in
 * place. Returns the number of words, or -1 when there are too many. */
static int split_words(char *s, char **w)
{
	int n = 0;

	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			return n;
		if (n == MAX_WORDS)
			return -1;
		w[n++] = s;
		while (*s && *s != ' ' && *s != '\t')
			s++;
		if (*s)
			*s++ = '\0';
	}
}

static int add_line(struct expect_list *l, size_t *cap, const struct line_ctx *c, char *text)
{
	char *w[MAX_WORDS];
	struct expect e;
	int n;

	for (char *p = text; *p; p++) {
		unsigned char ch = (unsigned char)*p;

		if (ch == '\t')
			continue;
		if (!printable_ascii(ch))
			return line_error(c, "unexpected byte 0x%02x (assertions are printable ASCII)",
					  ch);
	}
	n = split_words(text, w);
	if (n < 0)
		return line_error(c, "too many words (an assertion has at most %d)",
				  MAX_ASSERTION_WORDS);
	if (n == 0)
		return 0;
	memset(&e, 0, sizeof(e));
	e.line = c->line;
	if (parse_words(c, w, (size_t)n, &e)) {
		free(e.handoff);
		return -1;
	}
	e.text = join_words(w, (size_t)n);
	if (e.kind != EXPECT_HANDOFF && e.kind != EXPECT_NO_DROPS)
		e.func[0] = strdup(w[1]);
	if (e.kind == EXPECT_BEFORE)
		e.func[1] = strdup(w[2]);
	if (!e.text || (e.kind != EXPECT_HANDOFF && e.kind != EXPECT_NO_DROPS && !e.func[0]) ||
	    (e.kind == EXPECT_BEFORE && !e.func[1]))
		goto oom;
	if (l->nr == *cap) {
		struct expect *v = array_grow(l->items, cap, sizeof(*v), 16);

		if (!v)
			goto oom;
		l->items = v;
	}
	l->items[l->nr++] = e;
	return 0;
oom:
	free(e.text);
	free(e.func[0]);
	free(e.func[1]);
	free(e.handoff);
	return et_error("out of memory");
}

int expect_parse(struct expect_list *l, const char *name, const char *text, size_t len)
{
	struct line_ctx c = { name, 0 };
	size_t cap = 0, pos = 0;
	char *buf;

	memset(l, 0, sizeof(*l));
	l->name = strdup(name);
	buf = malloc(len + 1);
	if (!l->name || !buf) {
		free(buf);
		expect_list_free(l);
		return et_error("out of memory");
	}
	memcpy(buf, text, len);
	buf[len] = '\0';
	while (pos < len) {
		char *line = buf + pos, *end = memchr(line, '\n', len - pos), *hash;
		size_t n = end ? (size_t)(end - line) : len - pos;

		c.line++;
		pos += n + (end ? 1 : 0);
		if (memchr(line, '\0', n)) {
			line_error(&c, "NUL byte (not a text file?)");
			goto fail;
		}
		line[n] = '\0';
		if (n && line[n - 1] == '\r')
			line[n - 1] = '\0'; /* CRLF files */
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		if (add_line(l, &cap, &c, line))
			goto fail;
	}
	free(buf);
	if (!l->nr) {
		et_error("%s: no assertions (every line is empty or a comment)", name);
		expect_list_free(l);
		return -1;
	}
	return 0;
fail:
	free(buf);
	expect_list_free(l);
	return -1;
}

int expect_parse_file(struct expect_list *l, const char *path)
{
	FILE *f = input_fopen("", path); /* never blocks on a FIFO */
	struct stat st;
	char *data;
	size_t n;
	int ret;

	memset(l, 0, sizeof(*l));
	if (!f)
		return -1;
	if (fstat(fileno(f), &st)) {
		fclose(f);
		return et_error_errno("cannot read %s", path);
	}
	if (!S_ISREG(st.st_mode)) {
		fclose(f);
		return et_error("%s: not a regular file", path);
	}
	if ((uint64_t)st.st_size > EXPECT_MAX_FILE) {
		fclose(f);
		return et_error("%s: too large for an expectation file (%llu bytes, at most %u)",
				path, (unsigned long long)st.st_size, EXPECT_MAX_FILE);
	}
	data = malloc((size_t)st.st_size + 1);
	if (!data) {
		fclose(f);
		return et_error("out of memory");
	}
	n = fread(data, 1, (size_t)st.st_size, f);
	if (ferror(f)) {
		et_error_errno("cannot read %s", path);
		fclose(f);
		free(data);
		return -1;
	}
	fclose(f);
	ret = expect_parse(l, path, data, n);
	free(data);
	return ret;
}

void expect_list_free(struct expect_list *l)
{
	for (size_t i = 0; i < l->nr; i++) {
		free(l->items[i].text);
		free(l->items[i].func[0]);
		free(l->items[i].func[1]);
		free(l->items[i].handoff);
	}
	free(l->items);
	free(l->name);
	memset(l, 0, sizeof(*l));
}
