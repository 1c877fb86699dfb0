/* SPDX-License-Identifier: MIT */
#include "arch/x86/boot/cmdline.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static size_t name_len(const char *word, size_t len)
{
	const char *eq = memchr(word, '=', len);

	return eq ? (size_t)(eq - word) : len;
}

/* True if `text` has a word named like word[0..len) (up to any '='). */
static bool has_param(const char *text, const char *word, size_t len);

bool cmdline_has_param(const char *cmdline, const char *name)
{
	return has_param(cmdline, name, strlen(name));
}

static bool has_param(const char *text, const char *word, size_t len)
{
	size_t want = name_len(word, len);

	while (text && *text) {
		size_t n;

		text += strspn(text, " ");
		n = strcspn(text, " ");
		if (n && name_len(text, n) == want && !strncmp(text, word, want))
			return true;
		text += n;
	}
	return false;
}

char *cmdline_append_params(const char *user, const char *params, char **added)
{
	size_t cap = (user ? strlen(user) : 0) + (params ? strlen(params) : 0) + 2;
	char *out = malloc(cap), *extra = malloc(cap);
	const char *p = params;

	if (!out || !extra) {
		free(out);
		free(extra);
		return NULL;
	}
	strcpy(out, user ? user : "");
	extra[0] = '\0';
	while (p && *p) {
		size_t n;

		p += strspn(p, " ");
		n = strcspn(p, " ");
		if (n && !has_param(user, p, n)) {
			if (out[0])
				strcat(out, " ");
			strncat(out, p, n);
			if (extra[0])
				strcat(extra, " ");
			strncat(extra, p, n);
		}
		p += n;
	}
	if (added)
		*added = extra;
	else
		free(extra);
	return out;
}
