/* SPDX-License-Identifier: MIT */
#include "vmm/sites/glob.h"

#include <string.h>

#include "vmm/util/error.h"

/* Checks brackets and escapes; returns -1 with a message when malformed. */
static int check_syntax(const char *p)
{
	for (size_t i = 0; p[i]; i++) {
		if (p[i] == '\\') {
			if (!p[i + 1])
				return et_error("bad pattern '%s': trailing backslash", p);
			i++;
		} else if (p[i] == '[') {
			size_t j = i + 1;

			if (p[j] == '!' || p[j] == '^')
				j++;
			if (p[j] == ']')
				j++; /* a leading ']' is a member */
			while (p[j] && p[j] != ']')
				j++;
			if (!p[j])
				return et_error("bad pattern '%s': '[' without a closing ']'", p);
			i = j;
		}
	}
	return 0;
}

int glob_compile(struct glob *g, const char *pattern)
{
	size_t len = pattern ? strlen(pattern) : 0;

	memset(g, 0, sizeof(*g));
	if (!len)
		return et_error("bad pattern '': empty");
	if (check_syntax(pattern))
		return -1;
	g->pattern = pattern;
	g->kind = GLOB_GENERAL;
	/* The fast forms: stars only at the ends, no other metacharacter. */
	{
		size_t lead = pattern[0] == '*', trail = len > lead && pattern[len - 1] == '*';
		const char *mid = pattern + lead;
		size_t mlen = len - lead - trail;

		if (strcspn(mid, "*?[\\") >= mlen) {
			g->text = mid;
			g->len = mlen;
			g->kind = lead ? (trail ? GLOB_MIDDLE : GLOB_END)
				       : (trail ? GLOB_FRONT : GLOB_FULL);
		}
	}
	return 0;
}

/* One character class starting after '['; *pp advanced past ']'. */
static bool class_match(const char **pp, unsigned char c)
{
	const char *p = *pp;
	bool neg = false, hit = false;

	if (*p == '!' || *p == '^') {
		neg = true;
		p++;
	}
	do {
		unsigned char lo = (unsigned char)*p++, hi = lo;

		if (*p == '-' && p[1] && p[1] != ']') {
			hi = (unsigned char)p[1];
			p += 2;
		}
		if (lo <= c && c <= hi)
			hit = true;
	} while (*p && *p != ']');
	*pp = *p ? p + 1 : p;
	return hit != neg;
}

bool glob_match_general(const char *pat, const char *str)
{
	const char *star_p = NULL, *star_s = NULL;

	/* Iterative, backtracking only to the last '*': linear in practice. */
	for (;;) {
		const char *p = pat;
		unsigned char c = (unsigned char)*str;

		if (*p == '*') {
			star_p = ++pat;
			star_s = str;
			continue;
		}
		if (!c) {
			if (!*p)
				return true;
			goto backtrack;
		}
		switch (*p) {
		case '\0':
			goto backtrack;
		case '?':
			pat++;
			str++;
			continue;
		case '[':
			p++;
			if (!class_match(&p, c))
				goto backtrack;
			pat = p;
			str++;
			continue;
		case '\\':
			p++;
			/* fall through */
		default:
			if ((unsigned char)*p != c)
				goto backtrack;
			pat = p + 1;
			str++;
			continue;
		}
backtrack:
		if (!star_p || !*star_s)
			return false;
		pat = star_p;
		str = ++star_s;
	}
}

bool glob_match(const struct glob *g, const char *name)
{
	size_t n;

	switch (g->kind) {
	case GLOB_FULL:
		return !strcmp(name, g->text);
	case GLOB_FRONT:
		return !strncmp(name, g->text, g->len);
	case GLOB_END:
		n = strlen(name);
		return n >= g->len && !memcmp(name + n - g->len, g->text, g->len);
	case GLOB_MIDDLE:
		/* memmem, not strstr: the text is not NUL-terminated at len. */
		return memmem(name, strlen(name), g->text, g->len) != NULL;
	case GLOB_GENERAL:
		return glob_match_general(g->pattern, name);
	}
	return false;
}
