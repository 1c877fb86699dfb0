/* SPDX-License-Identifier: MIT */
/*
 * Linux printk formats rendered on the host: text a guest kernel meant to
 * print, from its format string and arguments. Two callers, each with its
 * own argument layout: a panic's message (vmm/machine/panic_message.c,
 * arguments in registers and on the stack) and a trace_printk() event
 * (vmm/ftrace/bprint.c, arguments packed by the kernel's vbin_printf()).
 *
 * Conversions: %d %i %u %x %X %o %c %s %% with the flags "-+ #0", a width
 * and a precision (digits or '*'), the sizes hh h l ll z Z t L; %p and its
 * extensions: %pS %ps %pB %pF %pf name an address through the source's
 * symbol callback, the others print it in hex or as text the source
 * already has. The guest is untrusted: widths and precisions are clamped,
 * the output is cut at its buffer and always NUL-terminated, %n writes
 * nothing, and arguments are reached only through the source.
 */
#ifndef VMM_PRINTK_PRINTK_FORMAT_H
#define VMM_PRINTK_PRINTK_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Precisions beyond this are clamped, whatever the style's max_width. */
#define PRINTK_MAX_PRECISION 256

/* A %p argument: an address, or text the source already has for it. */
struct printk_pointer {
	uint64_t address;
	const char *text; /* NULL: print the address; else text_len bytes */
	size_t text_len;
};

/*
 * Where the arguments come from. Each next_* call takes the next argument
 * in the format's order; false when there is none (or it cannot be read).
 */
struct printk_args {
	void *ctx; /* passed to every callback */
	unsigned long_bytes; /* 4 or 8: the size of 'l', 'z' and 't' integers */
	/* An integer of bytes bytes (1, 2, 4 or 8); only those low bytes of
	 * *value count. A '*' width or precision is a 4-byte one. */
	bool (*next_int)(void *ctx, unsigned bytes, uint64_t *value);
	/* A %s string: len bytes at *text, NUL-terminated or not. max is the
	 * precision (SIZE_MAX when none): no more need be read. */
	bool (*next_string)(void *ctx, size_t max, const char **text, size_t *len);
	/* A %p argument; extension is the letter after the 'p' ('\0' when
	 * none), so a source can tell which ones it stores as text. */
	bool (*next_pointer)(void *ctx, char extension, struct printk_pointer *p);
	/* Names the function containing addr into buf (size bytes, NUL
	 * included), "name+0x1c/0x80" when with_offset; false when unknown
	 * (the address prints in hex). May be NULL. */
	bool (*symbol)(void *ctx, uint64_t addr, bool with_offset, char *buf, size_t size);
};

/*
 * What the two callers render differently; each kept as it was when they
 * had a renderer each.
 */
struct printk_style {
	int max_width; /* widths beyond are clamped: the text stays bounded */
	/* Line breaks and tabs print as spaces, other bytes outside ' '..'~'
	 * (a %c of 0 too) as '?': a one-line message (panic). Otherwise bytes
	 * go through as they are, but for a %c of 0, which is left out so the
	 * text stays one C string (bprint). */
	bool printable_only;
	/* The kernel's own rules (bprint): a precision is an integer's least
	 * number of digits, '#' marks octal with a 0, '0' pads numbers only,
	 * precisions cut strings, %c is padded, a negative '*' width
	 * left-justifies, and %pe prints the error number. Otherwise the
	 * simpler rules panic's messages always had: a precision only limits
	 * how much of a %s is read, '0' pads anything, %c is never padded, and
	 * a negative '*' width and %pe's errno are ignored (hex). */
	bool kernel_rules;
	/* Best effort (panic): a missing argument prints missing_mark and the
	 * text goes on, an unknown conversion prints as written, and j and q
	 * are 64-bit sizes too. Otherwise (bprint: vbin_printf packed the
	 * arguments by this same format, so nothing after a doubt can be
	 * found) a missing argument ends the text with missing_mark, and an
	 * unknown conversion (%n, %j, a '%' after flags or a width) ends it
	 * as is. */
	bool best_effort;
	const char *missing_mark; /* "?", "<args truncated>" */
};

struct printk_result {
	size_t len;	 /* bytes written, without the NUL */
	bool cut;	 /* out was too small */
	bool args_short; /* an argument was missing */
	bool invalid;	 /* a conversion the renderer does not know */
};

/* Renders fmt with the arguments into out (out_size bytes; always
 * NUL-terminated unless out_size is 0, when nothing is written). */
void printk_format(const char *fmt, const struct printk_style *style,
		   const struct printk_args *args, char *out, size_t out_size,
		   struct printk_result *res);

#ifdef __cplusplus
}
#endif

#endif /* VMM_PRINTK_PRINTK_FORMAT_H */
