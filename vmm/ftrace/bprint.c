/* SPDX-License-Identifier: MIT */
#include "vmm/ftrace/bprint.h"

#include <ctype.h>
#include <string.h>

#include "vmm/printk/printk_format.h"

/*
 * bprint's way to render (vmm/printk/printk_format.h): the kernel's rules,
 * bytes as they are. The arguments were packed by the same format, so the
 * text ends at the first one missing ("<args truncated>") or at a
 * conversion the kernel refuses.
 */
static const struct printk_style bprint_style = {
	.max_width = 256,
	.printable_only = false,
	.kernel_rules = true,
	.best_effort = false,
	.missing_mark = "<args truncated>",
};

/* vbin_printf()'s buffer, read in order. */
struct packed_args {
	const uint8_t *p;
	size_t len, off;
	unsigned long_size;
	ftrace_symbol_fn sym;
	void *sym_ctx;
};

/* The next size-byte integer at its vbin_printf alignment: char 1,
 * short 2, int 4, and 8-byte ones (long, long long, pointers) 4. */
static bool next_int(void *ctx, unsigned size, uint64_t *v)
{
	struct packed_args *a = ctx;
	size_t align = size == 8 ? 4 : size;
	size_t off = (a->off + align - 1) / align * align;

	*v = 0;
	if (off > a->len || size > a->len - off)
		return false;
	memcpy(v, a->p + off, size); /* little-endian */
	a->off = off + size;
	return true;
}

/* The next inline NUL-terminated string (no alignment). */
static bool next_string(void *ctx, size_t max, const char **text, size_t *len)
{
	struct packed_args *a = ctx;
	const uint8_t *nul;

	(void)max; /* the precision cuts it when rendered */
	if (a->off >= a->len)
		return false;
	nul = memchr(a->p + a->off, '\0', a->len - a->off);
	if (!nul)
		return false;
	*text = (const char *)a->p + a->off;
	*len = (size_t)(nul - (a->p + a->off));
	a->off += *len + 1;
	return true;
}

/* vbin_printf stores %pS %ps %px %pK %pe and a bare %p as the pointer; the
 * other extensions dereference it, so the kernel rendered them when
 * recording and stored the text inline. */
static bool next_pointer(void *ctx, char extension, struct printk_pointer *p)
{
	struct packed_args *a = ctx;

	if (isalnum((unsigned char)extension) && !strchr("SsxKe", extension))
		return next_string(ctx, SIZE_MAX, &p->text, &p->text_len);
	return next_int(ctx, a->long_size, &p->address);
}

static bool symbol(void *ctx, uint64_t addr, bool with_offset, char *buf, size_t size)
{
	struct packed_args *a = ctx;

	return a->sym && !a->sym(a->sym_ctx, addr, with_offset, buf, size);
}

void ftrace_bprint_render(const char *fmt, const uint8_t *args, size_t args_len,
			  unsigned long_size, ftrace_symbol_fn sym, void *sym_ctx, char *out,
			  size_t out_size, struct ftrace_bprint_result *res)
{
	struct packed_args a = { args, args_len, 0, long_size == 4 ? 4 : 8, sym, sym_ctx };
	const struct printk_args source = { &a, a.long_size, next_int, next_string, next_pointer,
					    symbol };
	struct printk_result r;

	printk_format(fmt, &bprint_style, &source, out, out_size, &r);
	*res = (struct ftrace_bprint_result){ .len = r.len, .args_short = r.args_short,
					      .invalid = r.invalid, .cut = r.cut,
					      .args_used = a.off };
}
