/* SPDX-License-Identifier: MIT */
#include "vmm/ftrace/guest_strings.h"

#include <stdlib.h>
#include <string.h>

/* Reads are split at this granule so a string that ends before an unmapped
 * page is found (the smallest x86 page). */
#define GRANULE 4096u

void guest_strings_init(struct guest_strings *gs, ftrace_read_fn read, void *ctx)
{
	memset(gs, 0, sizeof(*gs));
	gs->read = read;
	gs->ctx = ctx;
}

void guest_strings_free(struct guest_strings *gs)
{
	for (unsigned i = 0; i < GUEST_STRINGS_CACHE; i++)
		free(gs->cache[i].text);
	memset(gs->cache, 0, sizeof(gs->cache));
}

static unsigned slot_of(uint64_t addr)
{
	addr ^= addr >> 17;
	addr *= 0x9e3779b97f4a7c15ull;
	return (unsigned)(addr >> 40) % GUEST_STRINGS_CACHE;
}

/* Reads up to max - 1 bytes until a NUL: the length, or -1 if nothing
 * at all was readable. *more is set when no NUL came before the limit or
 * an unreadable byte. */
static int read_string(const struct guest_strings *gs, uint64_t addr, char *buf, size_t max,
		       int *more)
{
	size_t got = 0;

	*more = 0;
	while (got < max - 1) {
		uint64_t at = addr + got;
		size_t chunk = GRANULE - (size_t)(at % GRANULE);
		char *nul;

		if (at < addr) /* wrapped past the top of the address space */
			break;
		if (chunk > max - 1 - got)
			chunk = max - 1 - got;
		if (gs->read(gs->ctx, at, buf + got, chunk)) {
			if (got == 0)
				return -1;
			*more = 1;
			break;
		}
		nul = memchr(buf + got, '\0', chunk);
		if (nul)
			return (int)(nul - buf);
		got += chunk;
	}
	if (got >= max - 1)
		*more = 1;
	buf[got] = '\0';
	return (int)got;
}

const char *guest_string_get(struct guest_strings *gs, uint64_t vaddr, int *truncated)
{
	unsigned s = slot_of(vaddr);
	char buf[GUEST_STRING_MAX];
	int len, more;
	char *copy;

	gs->reads++;
	if (gs->cache[s].text && gs->cache[s].addr == vaddr) {
		gs->hits++;
		*truncated = gs->cache[s].truncated;
		return gs->cache[s].text;
	}
	len = read_string(gs, vaddr, buf, sizeof(buf), &more);
	if (len < 0) {
		gs->failures++;
		return NULL;
	}
	copy = malloc((size_t)len + 1);
	if (!copy) {
		gs->failures++;
		return NULL;
	}
	memcpy(copy, buf, (size_t)len);
	copy[len] = '\0';
	free(gs->cache[s].text);
	gs->cache[s].addr = vaddr;
	gs->cache[s].text = copy;
	gs->cache[s].len = (unsigned)len;
	gs->cache[s].truncated = more;
	*truncated = more;
	return copy;
}
