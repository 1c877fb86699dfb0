/* SPDX-License-Identifier: MIT */
/*
 * System.map: one "address type name" line per symbol, as `nm -n` prints.
 * Absolute and undefined symbols say nothing about code and are skipped;
 * anything that is not three well-formed fields is an error with its line.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/symbols/symbols.h"
#include "vmm/util/error.h"
#include "vmm/util/input_file.h"

#define MAX_NAME 512
/* A System.map is read whole: no larger than a kernel may be. */
#define SYSTEM_MAP_MAX_SIZE (1ull << 30)

static int parse_hex(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 16)
		return -1;
	for (size_t i = 0; i < len; i++) {
		int c = tolower((unsigned char)s[i]);

		if (!isxdigit(c))
			return -1;
		v = v << 4 | (uint64_t)(isdigit(c) ? c - '0' : c - 'a' + 10);
	}
	*out = v;
	return 0;
}

int symbols_parse_system_map(struct symbols *syms, const char *text, size_t len,
			     const char *name)
{
	size_t lines = 0, line_no = 0, used = 0, pos = 0;

	memset(syms, 0, sizeof(*syms));
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	syms->tab.syms = calloc(lines + 1, sizeof(*syms->tab.syms));
	/* Names are copied next to each other, each NUL-terminated. */
	syms->strings = malloc(len + 1);
	if (!syms->tab.syms || !syms->strings) {
		symbols_free(syms);
		return et_error("out of memory");
	}
	while (pos < len) {
		const char *line = text + pos, *nl = memchr(line, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - line) : len - pos;
		const char *f[3];
		size_t flen[3], k = 0, j = 0;
		uint64_t addr;

		pos += n + (nl ? 1 : 0);
		line_no++;
		if (n && line[n - 1] == '\r')
			n--;
		while (k < 3) {
			while (j < n && (line[j] == ' ' || line[j] == '\t'))
				j++;
			if (j == n)
				break;
			f[k] = line + j;
			while (j < n && line[j] != ' ' && line[j] != '\t')
				j++;
			flen[k] = (size_t)(line + j - f[k]);
			k++;
		}
		if (k == 0)
			continue; /* blank line */
		while (j < n && (line[j] == ' ' || line[j] == '\t'))
			j++;
		/* nm prints undefined symbols without an address: nothing to keep. */
		if (k == 2 && flen[0] == 1 && strchr("Uwv", f[0][0]))
			continue;
		/* Module symbols carry a trailing "[module]"; kernels' maps do not. */
		if (k < 3 || flen[1] != 1 || parse_hex(f[0], flen[0], &addr) ||
		    flen[2] > MAX_NAME || (j < n && line[j] != '[')) {
			symbols_free(syms);
			return et_error("%s:%zu: not a System.map line (want 'address type name')",
					name, line_no);
		}
		switch (f[1][0]) {
		case 'a': case 'A': case 'U': case 'w': case 'v':
			continue;
		}
		if (!isalpha((unsigned char)f[1][0]) && f[1][0] != '?') {
			symbols_free(syms);
			return et_error("%s:%zu: unknown symbol type '%c'", name, line_no, f[1][0]);
		}
		memcpy(syms->strings + used, f[2], flen[2]);
		syms->strings[used + flen[2]] = '\0';
		syms->tab.syms[syms->tab.nr++] = (struct symbol){
			.addr = addr, .size = 0, .name = NULL, .type = f[1][0],
		};
		/* Offsets now, pointers once the buffer stops changing. */
		syms->tab.syms[syms->tab.nr - 1].size = used;
		used += flen[2] + 1;
	}
	if (syms->tab.nr == 0) {
		symbols_free(syms);
		return et_error("%s: no symbols in System.map", name);
	}
	for (size_t i = 0; i < syms->tab.nr; i++) {
		syms->tab.syms[i].name = syms->strings + syms->tab.syms[i].size;
		syms->tab.syms[i].size = 0;
	}
	symtab_sort(&syms->tab);
	syms->source = SYM_SOURCE_SYSTEM_MAP;
	snprintf(syms->desc, sizeof(syms->desc), "System.map %s (%zu symbols)", name,
		 syms->tab.nr);
	return 0;
}

int symbols_from_system_map(struct symbols *syms, const char *path)
{
	uint8_t *data;
	size_t size;
	int ret;

	memset(syms, 0, sizeof(*syms));
	if (input_read_whole_file(path, SYSTEM_MAP_MAX_SIZE, &data, &size))
		return -1;
	if (memchr(data, '\0', size)) {
		free(data);
		return et_error("%s: binary file, not a System.map", path);
	}
	ret = symbols_parse_system_map(syms, (const char *)data, size, path);
	free(data);
	return ret;
}
