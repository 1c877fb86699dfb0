/* SPDX-License-Identifier: MIT */
/*
 * The fuzz target of the printk renderer itself (printk_format, see
 * targets.h): any format, any style, and an argument source whose answers
 * (integers, strings with any bytes, pointers as addresses or text, symbol
 * names, missing arguments) are the input's bytes. The callers' own
 * argument layouts are fuzzed by panic_message and ftrace_page.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/targets.h"
#include "fuzz/targets_helpers.h"
#include "vmm/printk/printk_format.h"

#define FUZZ_PRINTK_LIMIT 1024 /* formats, output buffers and widths */

/* Mode bits: the style, the source's long size, a symbol callback. */
enum {
	MODE_PRINTABLE = 1,
	MODE_KERNEL_RULES = 2,
	MODE_BEST_EFFORT = 4,
	MODE_LONG_4 = 8,
	MODE_SYMBOLS = 16,
	MODE_LONG_MARK = 32,
};

/* An integer: its bytes; missing when the input has fewer left. */
static bool fuzz_next_int(void *ctx, unsigned bytes, uint64_t *v)
{
	struct input *in = ctx;

	if (in->n < bytes)
		return false;
	*v = in_le(in, bytes);
	return true;
}

/* A string: u8 length (0xff: unreadable), then that many bytes of any
 * value, not NUL-terminated: the renderer must keep to the length. */
static bool fuzz_next_string(void *ctx, size_t max, const char **text, size_t *len)
{
	struct input *in = ctx;
	uint8_t n = in_u8(in);

	(void)max;
	if (n == 0xff || n > in->n)
		return false;
	*len = n;
	*text = n ? (const char *)in_bytes(in, len) : "";
	return true;
}

/* A pointer: u8 kind (odd: text as for a string), else an 8-byte address. */
static bool fuzz_next_pointer(void *ctx, char extension, struct printk_pointer *p)
{
	struct input *in = ctx;

	(void)extension;
	if (in_u8(in) & 1)
		return fuzz_next_string(ctx, SIZE_MAX, &p->text, &p->text_len);
	return fuzz_next_int(ctx, 8, &p->address);
}

/* Unknown for odd addresses; a name that fills the buffer without a NUL
 * for addresses with bit 1 set (the renderer must terminate it). */
static bool fuzz_symbol(void *ctx, uint64_t addr, bool with_offset, char *buf, size_t size)
{
	(void)ctx;
	if (addr & 1)
		return false;
	if (addr & 2) {
		memset(buf, 'n', size);
		return true;
	}
	snprintf(buf, size, with_offset ? "sym_%llx+0x4/0x40" : "sym_%llx", (unsigned long long)addr);
	return true;
}

/* Input: u8 mode, u16 max_width, u16 out_size, u16 format length, the
 * format, then the arguments' bytes. */
int fuzz_printk_format(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	uint8_t mode = in_u8(&in);
	struct printk_style style = {
		.max_width = (int)(in_le(&in, 2) % FUZZ_PRINTK_LIMIT),
		.printable_only = mode & MODE_PRINTABLE,
		.kernel_rules = mode & MODE_KERNEL_RULES,
		.best_effort = mode & MODE_BEST_EFFORT,
		.missing_mark = mode & MODE_LONG_MARK ? "<args truncated>" : "?",
	};
	size_t out_size = in_le(&in, 2) % FUZZ_PRINTK_LIMIT;
	size_t fmt_len = in_le(&in, 2) % FUZZ_PRINTK_LIMIT;
	const uint8_t *fmt_bytes = in_bytes(&in, &fmt_len);
	struct printk_args args = { &in, mode & MODE_LONG_4 ? 4 : 8, fuzz_next_int,
				    fuzz_next_string, fuzz_next_pointer,
				    mode & MODE_SYMBOLS ? fuzz_symbol : NULL };
	struct printk_result res;
	char *fmt = malloc(fmt_len + 1);
	/* Exactly out_size bytes (one for a canary when 0), so the sanitizer
	 * sees any write past them. */
	char *out = malloc(out_size ? out_size : 1);

	if (!fmt || !out) {
		free(fmt);
		free(out);
		return -1;
	}
	if (fmt_len) /* fmt_bytes is NULL on an exhausted input */
		memcpy(fmt, fmt_bytes, fmt_len);
	fmt[fmt_len] = '\0';
	out[0] = 'C';
	printk_format(fmt, &style, &args, out, out_size, &res);
	if (!out_size) {
		if (out[0] != 'C' || res.len)
			abort(); /* nothing written without room */
	} else {
		if (!memchr(out, '\0', out_size) || strlen(out) != res.len || res.len >= out_size)
			abort(); /* one C string, as long as the result says */
		for (size_t i = 0; style.printable_only && out[i]; i++)
			if (out[i] < 0x20 || out[i] > 0x7e)
				abort();
	}
	free(fmt);
	free(out);
	return res.invalid || res.args_short ? -1 : 0;
}
