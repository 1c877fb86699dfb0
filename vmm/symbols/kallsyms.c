/* SPDX-License-Identifier: MIT */
/* Finding and decoding kallsyms tables; the format is described in kallsyms.h. */
#include "vmm/symbols/kallsyms.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/util/error.h"

#define NR_TOKENS 256
#define MAX_NAME 1024	      /* longest expanded name we accept */
#define MAX_ENTRY_BYTES 0x4001 /* 2 length bytes + 14-bit length */
#define MAX_SYMS (1u << 24)

struct tokens {
	const char *str[NR_TOKENS];
	uint16_t len[NR_TOKENS];
};

static uint64_t rd(const uint8_t *p, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

/* Reads NUL-terminated, non-empty strings starting at pos; returns the
 * position after the count-th one, or 0 if they run off the buffer. */
static size_t skip_strings(const uint8_t *data, size_t size, size_t pos, unsigned count)
{
	while (count--) {
		const uint8_t *nul;

		if (pos >= size || data[pos] == 0)
			return 0;
		nul = memchr(data + pos, 0, size - pos);
		if (!nul)
			return 0;
		pos = (size_t)(nul - data) + 1;
	}
	return pos;
}

/*
 * A candidate token table whose token '0' (number 48) starts at zero: the
 * digits are single-character tokens standing for themselves. Tokens 48..255
 * are read forward; token_index must follow, agree with their offsets, and
 * place tokens 0..47 so that they too agree.
 */
static int check_token_table(const uint8_t *data, size_t size, size_t zero,
			     struct tokens *tok, struct kallsyms_info *info)
{
	size_t end = skip_strings(data, size, zero, NR_TOKENS - '0');

	if (!end)
		return -1;
	for (size_t ti = align_up(end, 2); ti <= align_up(end, 8); ti += 2) {
		size_t base, pos;
		unsigned i;

		if (ti > size || size - ti < 2 * NR_TOKENS || rd(data + ti, 2) != 0)
			continue;
		base = rd(data + ti + 2 * '0', 2);
		if (base > zero)
			continue;
		base = zero - base; /* the table's start */
		for (i = 0, pos = base; i < NR_TOKENS; i++) {
			size_t next;

			if (rd(data + ti + 2 * i, 2) != pos - base)
				break;
			next = skip_strings(data, size, pos, 1);
			if (!next || next - pos - 1 > UINT16_MAX)
				break;
			tok->str[i] = (const char *)data + pos;
			tok->len[i] = (uint16_t)(next - pos - 1);
			pos = next;
		}
		if (i == NR_TOKENS && pos == end) {
			info->token_table = base;
			info->token_index = ti;
			return 0;
		}
	}
	return -1;
}

static int find_tokens(const uint8_t *data, size_t size, struct tokens *tok,
		       struct kallsyms_info *info)
{
	static const char digits[] = "0\0" "1\0" "2\0" "3\0" "4\0" "5\0" "6\0" "7\0" "8\0" "9";
	size_t pos = 0;

	while (pos < size) {
		const uint8_t *hit = memmem(data + pos, size - pos, digits, sizeof(digits));

		if (!hit)
			break;
		pos = (size_t)(hit - data);
		if (pos > 0 && data[pos - 1] == 0 && !check_token_table(data, size, pos, tok, info))
			return 0;
		pos++;
	}
	return -1;
}

/* Length of a names entry at p (its length prefix included), or 0. */
static size_t entry_size(const uint8_t *data, size_t end, size_t p, size_t *tokens_at)
{
	size_t len;

	if (p >= end)
		return 0;
	len = data[p];
	*tokens_at = p + 1;
	if (len & 0x80) { /* "big" symbols: 7 more length bits follow */
		if (p + 1 >= end)
			return 0;
		len = (len & 0x7f) | ((size_t)data[p + 1] << 7);
		*tokens_at = p + 2;
	}
	if (len == 0 || len > end - *tokens_at)
		return 0;
	return *tokens_at - p + len;
}

/* Walks nr entries from names to markers_at, checking every 256th against
 * the markers; true when they account for the whole names array. */
static bool names_fit(const uint8_t *data, size_t names, size_t markers_at, uint32_t nr,
		      unsigned ms, unsigned ptr)
{
	size_t p = names, t;

	for (uint32_t i = 0; i < nr; i++) {
		size_t n;

		if (i % 256 == 0 && rd(data + markers_at + (i / 256) * ms, ms) != p - names)
			return false;
		n = entry_size(data, markers_at, p, &t);
		if (!n)
			return false;
		p += n;
	}
	return align_up(p, ptr) == markers_at;
}

/* Given markers at m (nr_markers of ms bytes), finds num_syms and names
 * before them: names starts where the last marker's entry leaves room for
 * up to 256 entries, right after num_syms. */
static int names_for_markers(const uint8_t *data, unsigned ptr, unsigned ms, size_t m,
			     size_t nr_markers, struct kallsyms_info *info)
{
	size_t last = rd(data + m + (nr_markers - 1) * ms, ms), hi, lo;

	if (nr_markers > MAX_SYMS / 256 || last > m)
		return -1;
	hi = m - last;
	lo = hi > 256 * (size_t)MAX_ENTRY_BYTES ? hi - 256 * (size_t)MAX_ENTRY_BYTES : 0;
	for (size_t s = hi / ptr * ptr; s >= lo + ptr && s >= ptr; s -= ptr) {
		uint64_t nr = rd(data + s - ptr, 4);

		if (nr <= 256 * (nr_markers - 1) || nr > 256 * nr_markers)
			continue;
		if (ptr == 8 && rd(data + s - 4, 4) != 0)
			continue;
		if (!names_fit(data, s, m, (uint32_t)nr, ms, ptr))
			continue;
		info->names = s;
		info->markers = m;
		info->marker_size = ms;
		info->nr_syms = (uint32_t)nr;
		return 0;
	}
	return -1;
}

/* True if m holds nr strictly increasing markers starting with 0. */
static bool markers_shape(const uint8_t *data, size_t m, size_t nr, unsigned ms, unsigned ptr)
{
	if (m % ptr || rd(data + m, ms) != 0)
		return false;
	for (size_t k = 1; k < nr; k++)
		if (rd(data + m + k * ms, ms) <= rd(data + m + (k - 1) * ms, ms))
			return false;
	return true;
}

/*
 * Markers end right before the token table (after alignment padding), or,
 * in 6.2+ kernels and stable kernels that took the change, before
 * kallsyms_seqs_of_names (3 bytes per symbol), which precedes the table.
 */
static int find_names(const uint8_t *data, size_t size, unsigned ptr, struct kallsyms_info *info)
{
	size_t tt = info->token_table;

	(void)size;
	for (unsigned ms = 4; ms <= 8; ms += 4) {
		for (size_t pad = 0; pad < ptr && pad <= tt; pad += ms) {
			size_t end = tt - pad, m; /* pad <= tt: no wrap below the data */

			if (end < ms || end % ms)
				continue;
			/* Walk back over strictly decreasing markers to markers[0] = 0. */
			m = end - ms;
			while (m >= ms && rd(data + m, ms) != 0 &&
			       rd(data + m - ms, ms) < rd(data + m, ms))
				m -= ms;
			if (rd(data + m, ms) == 0 &&
			    !names_for_markers(data, ptr, ms, m, (end - m) / ms, info))
				return 0;
		}
	}
	/* seqs_of_names between markers (ending at e) and the token table. */
	for (size_t gap = 3; gap <= tt && gap <= 3 * (size_t)MAX_SYMS + 2 * ptr; gap++) {
		size_t e = tt - gap;

		if (e % 4)
			continue;
		for (unsigned ms = 4; ms <= 8; ms += 4) {
			size_t guess = gap / (3 * 256);

			for (size_t nr_m = guess ? guess : 1; nr_m <= guess + 1; nr_m++) {
				size_t m = e - nr_m * ms;

				if (nr_m * ms > e || !markers_shape(data, m, nr_m, ms, ptr) ||
				    names_for_markers(data, ptr, ms, m, nr_m, info))
					continue;
				/* The seqs fill exactly the gap, up to alignment. */
				if (align_up(e, ptr) + align_up(3 * (size_t)info->nr_syms, ptr) == tt) {
					info->has_seqs = true;
					return 0;
				}
			}
		}
	}
	return -1;
}

static uint64_t addr_at(const uint8_t *data, const struct kallsyms_info *k, unsigned ptr,
			uint32_t i)
{
	int32_t off;

	if (k->mode == KALLSYMS_ABSOLUTE)
		return rd(data + k->addresses + (size_t)i * ptr, ptr);
	off = (int32_t)(uint32_t)rd(data + k->addresses + (size_t)i * 4, 4);
	if (k->mode == KALLSYMS_RELATIVE)
		return k->relative_base + (uint32_t)off;
	if (off >= 0)
		return (uint64_t)off;
	return k->relative_base - 1 - (uint64_t)(int64_t)off;
}

/*
 * Tries one placement and mode: the addresses must fit and be sorted, as
 * scripts/kallsyms sorts the table by address, and mostly distinct. With
 * relative offsets, relative_base is the lowest non-absolute address, so
 * the first such entry encodes exactly 0 (or -1 with absolute per-cpu).
 */
static bool try_addresses(const uint8_t *data, size_t size, unsigned ptr, struct kallsyms_info *k)
{
	size_t bytes = k->mode == KALLSYMS_ABSOLUTE ? (size_t)k->nr_syms * ptr
						    : align_up((size_t)k->nr_syms * 4, ptr) + ptr;
	uint64_t prev = 0;
	size_t distinct = 0;
	bool based = k->mode == KALLSYMS_ABSOLUTE, seen = false;

	if (k->addresses > size || bytes > size - k->addresses)
		return false;
	if (k->mode != KALLSYMS_ABSOLUTE) {
		k->relative_base = rd(data + k->addresses + align_up((size_t)k->nr_syms * 4, ptr), ptr);
		if (!k->relative_base)
			return false;
	}
	for (uint32_t i = 0; i < k->nr_syms; i++) {
		uint64_t a = addr_at(data, k, ptr, i);
		uint32_t raw = (uint32_t)rd(data + k->addresses + (size_t)i * 4, 4);

		if (a < prev)
			return false;
		distinct += !i || a != prev;
		prev = a;
		/* Decided by the first relative entry, once. */
		if (!seen && k->mode == KALLSYMS_RELATIVE) {
			seen = true;
			based = raw == 0;
		} else if (!seen && k->mode == KALLSYMS_ABSOLUTE_PERCPU && (int32_t)raw < 0) {
			seen = true;
			based = raw == UINT32_MAX;
		}
	}
	return prev != 0 && based && distinct * 4 >= k->nr_syms;
}

static int find_addresses(const uint8_t *data, size_t size, unsigned ptr, struct kallsyms_info *k)
{
	static const enum kallsyms_addr_mode modes[] = {
		KALLSYMS_ABSOLUTE_PERCPU, KALLSYMS_RELATIVE, KALLSYMS_ABSOLUTE,
	};
	size_t num_syms = k->names - ptr;

	for (int order = 0; order < 2; order++) {
		for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
			size_t before;

			k->mode = modes[i];
			k->new_order = order;
			if (order) {
				k->addresses = k->token_index + 2 * NR_TOKENS;
				k->addresses = align_up(k->addresses, ptr);
			} else {
				before = k->mode == KALLSYMS_ABSOLUTE
						 ? (size_t)k->nr_syms * ptr
						 : align_up((size_t)k->nr_syms * 4, ptr) + ptr;
				if (before > num_syms)
					continue;
				k->addresses = num_syms - before;
			}
			if (try_addresses(data, size, ptr, k))
				return 0;
		}
	}
	return -1;
}

/* Expands every entry into "name\0", keeping offsets until the buffer is final. */
static int expand_names(const uint8_t *data, unsigned ptr, const struct tokens *tok,
			const struct kallsyms_info *k, struct symbols *syms)
{
	size_t cap = (size_t)k->nr_syms * 24 + 4096, used = 0, p = k->names;

	syms->tab.syms = calloc(k->nr_syms ? k->nr_syms : 1, sizeof(*syms->tab.syms));
	syms->strings = malloc(cap);
	if (!syms->tab.syms || !syms->strings)
		return et_error("out of memory");
	for (uint32_t i = 0; i < k->nr_syms; i++) {
		char name[MAX_NAME + 1];
		size_t t, n = entry_size(data, k->markers, p, &t), len = 0;
		char type;

		if (!n)
			return et_error("kallsyms: names entry %u is corrupt", i);
		for (size_t j = t; j < p + n; j++) {
			unsigned b = data[j];

			if (len + tok->len[b] > MAX_NAME)
				return et_error("kallsyms: symbol %u is longer than %d bytes", i,
						MAX_NAME);
			memcpy(name + len, tok->str[b], tok->len[b]);
			len += tok->len[b];
		}
		p += n;
		if (len < 2)
			return et_error("kallsyms: symbol %u has an empty name", i);
		type = name[0];
		if (used + len > cap) {
			char *bigger;

			cap = cap * 2 + len;
			bigger = realloc(syms->strings, cap);
			if (!bigger)
				return et_error("out of memory");
			syms->strings = bigger;
		}
		memcpy(syms->strings + used, name + 1, len - 1);
		syms->strings[used + len - 1] = '\0';
		syms->tab.syms[syms->tab.nr++] = (struct symbol){
			.addr = addr_at(data, k, ptr, i), .size = used, .name = NULL, .type = type,
		};
		used += len;
	}
	for (size_t i = 0; i < syms->tab.nr; i++) {
		syms->tab.syms[i].name = syms->strings + syms->tab.syms[i].size;
		syms->tab.syms[i].size = 0;
	}
	symtab_sort(&syms->tab);
	return 0;
}

const char *kallsyms_mode_name(enum kallsyms_addr_mode mode)
{
	switch (mode) {
	case KALLSYMS_ABSOLUTE:
		return "absolute addresses";
	case KALLSYMS_RELATIVE:
		return "relative offsets";
	case KALLSYMS_ABSOLUTE_PERCPU:
		return "relative offsets, absolute per-cpu";
	}
	return "?";
}

int kallsyms_decode(const uint8_t *data, size_t size, unsigned ptr_bytes,
		    struct symbols *syms, struct kallsyms_info *info)
{
	struct kallsyms_info k = { 0 };
	struct tokens *tok;

	memset(syms, 0, sizeof(*syms));
	if (ptr_bytes != 4 && ptr_bytes != 8)
		return et_error("kallsyms: pointer size %u is not 4 or 8", ptr_bytes);
	tok = calloc(1, sizeof(*tok));
	if (!tok)
		return et_error("out of memory");
	if (find_tokens(data, size, tok, &k)) {
		free(tok);
		return et_error("no kallsyms token table found (kernel built without "
				"CONFIG_KALLSYMS?)");
	}
	if (find_names(data, size, ptr_bytes, &k)) {
		free(tok);
		return et_error("kallsyms: token table at offset 0x%zx, but no names and markers "
				"that fit it (unsupported layout or corrupt tables)", k.token_table);
	}
	if (find_addresses(data, size, ptr_bytes, &k)) {
		free(tok);
		return et_error("kallsyms: %u names found, but no sorted address table for them",
				k.nr_syms);
	}
	if (expand_names(data, ptr_bytes, tok, &k, syms)) {
		free(tok);
		symbols_free(syms);
		return -1;
	}
	free(tok);
	syms->source = SYM_SOURCE_KALLSYMS;
	snprintf(syms->desc, sizeof(syms->desc), "kallsyms recovered from the image (%u symbols, "
		 "%s order%s, %s)", k.nr_syms, k.new_order ? "6.4+" : "pre-6.4",
		 k.has_seqs ? " with seqs_of_names" : "", kallsyms_mode_name(k.mode));
	if (info)
		*info = k;
	return 0;
}

/* The image-level source: decode, then refuse text outside the image. */
int symbols_from_kallsyms(struct symbols *syms, const struct kernel_image *img)
{
	size_t outside = 0;
	const struct symbol *bad = NULL;

	if (kallsyms_decode(img->data, img->size, img->elf_class / 8, syms, NULL))
		return et_error_prefix("%s", img->name);
	for (size_t i = 0; i < syms->tab.nr; i++) {
		const struct symbol *s = &syms->tab.syms[i];
		bool in = false;

		if (!symtab_is_text_type(s->type))
			continue;
		for (unsigned j = 0; j < img->nr_segments && !in; j++) {
			const struct kernel_segment *seg = &img->segments[j];

			in = s->addr >= seg->vaddr && s->addr - seg->vaddr <= seg->memsz;
		}
		if (!in) {
			outside++;
			bad = s;
		}
	}
	if (outside) {
		et_error("%s: kallsyms: %zu text symbols lie outside the image (e.g. %s at 0x%llx)",
			 img->name, outside, bad->name, (unsigned long long)bad->addr);
		symbols_free(syms);
		return -1;
	}
	return 0;
}
