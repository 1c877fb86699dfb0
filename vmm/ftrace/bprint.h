/* SPDX-License-Identifier: MIT */
/*
 * Renders a trace_printk() message recorded in binary form (a bprint
 * event): the kernel keeps the format's address and the arguments packed
 * by vbin_printf() (lib/vsprintf.c), and prints them only when the trace
 * is read. This is that printing, for the host, bounded: this file reads
 * the arguments as packed, vmm/printk/ renders the text. The packing:
 *   - integers are stored at their own alignment (char 1, short 2, int 4)
 *     and 8-byte ones (long, long long, size_t, pointers) 4-aligned;
 *   - a "*" width or precision is an int;
 *   - %s and the %p extensions that dereference (anything but %pS %ps
 *     %px %pK %pe) were rendered by the kernel when recording and are
 *     stored inline as NUL-terminated strings.
 * Widths and precisions are clamped, the output is cut at its buffer, and
 * arguments that run out end the text with "<args truncated>". Pointers
 * print as hex (the kernel would hash a bare %p); %pS/%ps go through an
 * optional symbol callback.
 */
#ifndef VMM_FTRACE_BPRINT_H
#define VMM_FTRACE_BPRINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes the name of the function containing addr ("name+0x1c/0x80" when
 * with_offset) into buf: 0, or non-zero if unknown (hex is printed). */
typedef int (*ftrace_symbol_fn)(void *ctx, uint64_t addr, bool with_offset, char *buf,
				size_t size);

struct ftrace_bprint_result {
	size_t len;	      /* bytes written to out, without the NUL */
	bool args_short;      /* the arguments ran out */
	bool invalid;	      /* a conversion the kernel refuses (it stops there too) */
	bool cut;	      /* out was too small */
	size_t args_used;     /* bytes of args consumed */
};

/* Renders fmt with the packed args (args_len bytes; long_size 4 or 8)
 * into out (out_size >= 1 bytes, always NUL-terminated). */
void ftrace_bprint_render(const char *fmt, const uint8_t *args, size_t args_len,
			  unsigned long_size, ftrace_symbol_fn sym, void *sym_ctx, char *out,
			  size_t out_size, struct ftrace_bprint_result *res);

#ifdef __cplusplus
}
#endif

#endif /* VMM_FTRACE_BPRINT_H */
