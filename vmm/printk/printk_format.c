/* SPDX-License-Identifier: MIT */
#include "vmm/printk/printk_format.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* A symbol's name or an address in hex: room for what any caller needs. */
#define POINTER_TEXT_MAX 256

/* The output: cut at its buffer, room kept for the NUL. */
struct sink {
	char *buf;
	size_t size, len;
	bool cut;
	bool printable_only;
};

static void put_char(struct sink *o, char c)
{
	if (o->printable_only) {
		if (c == '\n' || c == '\t' || c == '\r')
			c = ' ';
		else if ((unsigned char)c < 0x20 || (unsigned char)c > 0x7e)
			c = '?';
	} else if (c == '\0') {
		return;
	}
	if (o->len + 1 >= o->size) {
		o->cut = true;
		return;
	}
	o->buf[o->len++] = c;
}

static void put_chars(struct sink *o, const char *s, size_t n)
{
	for (size_t i = 0; i < n && !o->cut; i++)
		put_char(o, s[i]);
}

static void put_repeated(struct sink *o, char c, size_t n)
{
	for (size_t i = 0; i < n && !o->cut; i++)
		put_char(o, c);
}

/* One conversion as parsed. */
struct spec {
	bool left, zero, plus, space, alt;
	int width, precision; /* -1: not given */
	unsigned size;	      /* bytes of an integer argument */
	char conv;
};

/* Digits of a width or precision, clamped to limit; *f moves past them. */
static int parse_number(const char **f, int limit)
{
	int v = 0;

	for (; isdigit((unsigned char)**f); (*f)++)
		if (v <= limit) /* saturates: no overflow whatever the digits */
			v = v * 10 + (**f - '0');
	return v > limit ? limit : v;
}

static bool next_star(const struct printk_args *a, int32_t *v)
{
	uint64_t raw;

	if (!a->next_int(a->ctx, 4, &raw))
		return false;
	*v = (int32_t)(uint32_t)raw;
	return true;
}

/* A '*' width: negative left-justifies under the kernel's rules, and was
 * ignored by panic's. */
static void star_width(const struct printk_style *st, struct spec *sp, int32_t w)
{
	if (w < 0 && st->kernel_rules) {
		sp->left = true;
		w = w < -st->max_width ? st->max_width : -w;
	}
	sp->width = w < 0 ? -1 : w > st->max_width ? st->max_width : w;
}

/* The size letters after the precision. */
static const char *parse_size(const char *f, const struct printk_style *st,
			      const struct printk_args *a, struct spec *sp)
{
	unsigned long_bytes = a->long_bytes == 4 ? 4 : 8;

	sp->size = 4;
	if (f[0] == 'h') {
		sp->size = f[1] == 'h' ? 1 : 2;
		return f + (f[1] == 'h' ? 2 : 1);
	}
	if (f[0] == 'l' && f[1] == 'l') {
		sp->size = 8;
		return f + 2;
	}
	if (*f == 'l' || *f == 'z' || *f == 'Z' || *f == 't') {
		sp->size = long_bytes;
		return f + 1;
	}
	if (*f == 'L' || (st->best_effort && (*f == 'j' || *f == 'q'))) {
		sp->size = 8;
		return f + 1;
	}
	return f;
}

/*
 * Parses one conversion after its '%' into sp; returns where the format
 * goes on, or NULL when a '*' argument is missing and the style stops
 * there. A missing '*' argument is otherwise no width (or precision).
 */
static const char *parse_spec(const char *f, const struct printk_style *st,
			      const struct printk_args *a, struct spec *sp)
{
	int32_t v;

	*sp = (struct spec){ .width = -1, .precision = -1 };
	for (;; f++) {
		if (*f == '-')
			sp->left = true;
		else if (*f == '0')
			sp->zero = true;
		else if (*f == '+')
			sp->plus = true;
		else if (*f == ' ')
			sp->space = true;
		else if (*f == '#')
			sp->alt = true;
		else
			break;
	}
	if (*f == '*') {
		f++;
		if (next_star(a, &v))
			star_width(st, sp, v);
		else if (!st->best_effort)
			return NULL;
	} else if (isdigit((unsigned char)*f)) {
		sp->width = parse_number(&f, st->max_width);
	}
	if (*f == '.') {
		f++;
		if (*f == '*') {
			f++;
			if (next_star(a, &v))
				sp->precision = v < 0 ? -1 : v > PRINTK_MAX_PRECISION ?
					PRINTK_MAX_PRECISION : v;
			else if (!st->best_effort)
				return NULL;
		} else {
			sp->precision = parse_number(&f, PRINTK_MAX_PRECISION);
		}
	}
	f = parse_size(f, st, a, sp);
	sp->conv = *f;
	return *f ? f + 1 : f;
}

/* Spaces or zeros before, spaces after: n more bytes to reach the width. */
static size_t padding(const struct spec *sp, size_t n)
{
	return sp->width >= 0 && (size_t)sp->width > n ? (size_t)sp->width - n : 0;
}

/* Text of n bytes (a string, a %c, a symbol, an address) at the width. */
static void put_text(struct sink *o, const struct printk_style *st, const struct spec *sp,
		     const char *s, size_t n)
{
	size_t shown, pad;

	if (!st->kernel_rules) { /* the precision was applied when reading */
		pad = padding(sp, n);
		if (!sp->left)
			put_repeated(o, sp->zero ? '0' : ' ', pad);
		put_chars(o, s, n);
		if (sp->left)
			put_repeated(o, ' ', pad);
		return;
	}
	shown = sp->precision >= 0 && (size_t)sp->precision < n ? (size_t)sp->precision : n;
	if (!padding(sp, shown)) {
		put_chars(o, s, shown);
		return;
	}
	/* Padded to what prints: a %c of 0 prints nothing, so all of it is
	 * padding (bprint's long-standing output). */
	shown = shown ? strnlen(s, shown) : 0;
	pad = padding(sp, shown);
	if (!sp->left)
		put_repeated(o, ' ', pad);
	put_chars(o, s, shown);
	if (sp->left)
		put_repeated(o, ' ', pad);
}

/* The value of an integer argument as its C type has it. */
static uint64_t int_value(const struct spec *sp, uint64_t raw, bool is_signed)
{
	unsigned bits = sp->size * 8;
	uint64_t mask, sign;

	if (bits >= 64)
		return raw;
	mask = (1ull << bits) - 1;
	sign = 1ull << (bits - 1);
	raw &= mask;
	return is_signed && (raw & sign) ? raw | ~mask : raw;
}

static void put_integer(struct sink *o, const struct printk_style *st, const struct spec *sp,
			uint64_t raw)
{
	static const char lower[] = "0123456789abcdef", upper[] = "0123456789ABCDEF";
	bool is_signed = sp->conv == 'd' || sp->conv == 'i';
	uint64_t v = int_value(sp, raw, is_signed);
	bool negative = is_signed && (int64_t)v < 0;
	uint64_t magnitude = negative ? 0 - v : v;
	unsigned base = sp->conv == 'o' ? 8 : sp->conv == 'x' || sp->conv == 'X' ? 16 : 10;
	const char *digit = sp->conv == 'X' ? upper : lower;
	char digits[24], prefix[3] = ""; /* digits least significant first */
	size_t nd = 0, zeros = 0, pad;
	bool zero_pad = sp->zero && !sp->left;

	do {
		digits[nd++] = digit[magnitude % base];
		magnitude /= base;
	} while (magnitude);
	if (negative)
		strcpy(prefix, "-");
	else if (is_signed && (sp->plus || sp->space))
		strcpy(prefix, sp->plus ? "+" : " ");
	else if (sp->alt && v && (sp->conv == 'x' || sp->conv == 'X'))
		strcpy(prefix, sp->conv == 'x' ? "0x" : "0X");
	if (st->kernel_rules && sp->precision >= 0) {
		if (sp->precision == 0 && v == 0)
			nd = 0; /* "%.0d" of 0 prints no digit */
		zeros = (size_t)sp->precision > nd ? (size_t)sp->precision - nd : 0;
		zero_pad = false; /* a precision turns the '0' flag off */
	}
	if (st->kernel_rules && sp->alt && sp->conv == 'o' && !zeros &&
	    (nd == 0 || digits[nd - 1] != '0'))
		zeros = 1; /* "%#o": the first digit is a 0 */
	pad = padding(sp, strlen(prefix) + zeros + nd);
	if (!sp->left && !zero_pad)
		put_repeated(o, ' ', pad);
	put_chars(o, prefix, strlen(prefix));
	if (zero_pad)
		put_repeated(o, '0', pad);
	put_repeated(o, '0', zeros);
	while (nd)
		put_char(o, digits[--nd]);
	if (sp->left)
		put_repeated(o, ' ', pad);
}

/* An address: a symbol for %pS and its kin, the errno of %pe under the
 * kernel's rules, else hex. */
static void put_address(struct sink *o, const struct printk_style *st, const struct spec *sp,
			const struct printk_args *a, char ext, uint64_t addr)
{
	char text[POINTER_TEXT_MAX];
	bool symbolic = ext && strchr("SsBFf", ext);

	if (symbolic && a->symbol &&
	    a->symbol(a->ctx, addr, ext == 'S' || ext == 'B' || ext == 'F', text, sizeof(text))) {
		text[sizeof(text) - 1] = '\0'; /* whatever the callback did */
	} else if (ext == 'e' && st->kernel_rules) {
		snprintf(text, sizeof(text), "%" PRId64, (int64_t)addr);
	} else {
		snprintf(text, sizeof(text), "0x%" PRIx64, addr);
	}
	put_text(o, st, sp, text, strlen(text));
}

/* A missing argument: the style's mark; true when the text ends there. */
static bool missing(struct sink *o, const struct printk_style *st, struct printk_result *res)
{
	res->args_short = true;
	put_chars(o, st->missing_mark, strlen(st->missing_mark));
	return !st->best_effort;
}

/*
 * Renders the conversion just parsed into sp, taking its argument; f is
 * where the format goes on and moves past a %p's extension. True when the
 * text ends here.
 */
static bool convert(struct sink *o, const struct printk_style *st, const struct printk_args *a,
		    const struct spec *sp, const char **f, struct printk_result *res)
{
	struct printk_pointer p = { 0 };
	const char *text;
	size_t len;
	uint64_t v;
	char c, ext;

	switch (sp->conv) {
	case 'd':
	case 'i':
	case 'u':
	case 'x':
	case 'X':
	case 'o':
		if (!a->next_int(a->ctx, sp->size, &v))
			return missing(o, st, res);
		put_integer(o, st, sp, v);
		return false;
	case 'c':
		if (!a->next_int(a->ctx, 1, &v))
			return missing(o, st, res);
		c = (char)v;
		if (st->kernel_rules)
			put_text(o, st, sp, &c, 1);
		else
			put_char(o, c);
		return false;
	case 's':
		if (!a->next_string(a->ctx, sp->precision >= 0 ? (size_t)sp->precision : SIZE_MAX,
				    &text, &len))
			return missing(o, st, res);
		put_text(o, st, sp, text, len);
		return false;
	case 'p':
		/* Linux's extensions: the letters after the 'p' belong to it. */
		ext = **f;
		while (isalnum((unsigned char)**f))
			(*f)++;
		if (!a->next_pointer(a->ctx, ext, &p))
			return missing(o, st, res);
		if (p.text)
			put_text(o, st, sp, p.text, p.text_len);
		else
			put_address(o, st, sp, a, ext, p.address);
		return false;
	case '%':
		if (st->best_effort) { /* "%5%" */
			put_char(o, '%');
			return false;
		}
		break;
	case '\0': /* a '%' (and flags, a size) ending the format */
		if (st->best_effort)
			return true;
		break;
	}
	/* %n is here too: the renderer has nothing it could write to. */
	res->invalid = true;
	if (!st->best_effort)
		return true;
	put_char(o, '%');
	put_char(o, sp->conv);
	return false;
}

void printk_format(const char *fmt, const struct printk_style *style,
		   const struct printk_args *args, char *out, size_t out_size,
		   struct printk_result *res)
{
	struct sink o = { out, out_size, 0, false, style->printable_only };
	const char *f = fmt;

	memset(res, 0, sizeof(*res));
	if (!out_size)
		return;
	while (*f && !o.cut) {
		const char *pct = strchr(f, '%');
		struct spec sp;

		if (!pct) {
			put_chars(&o, f, strlen(f));
			break;
		}
		put_chars(&o, f, (size_t)(pct - f));
		f = pct + 1;
		if (*f == '%') {
			put_char(&o, '%');
			f++;
			continue;
		}
		f = parse_spec(f, style, args, &sp);
		if (!f) {
			missing(&o, style, res);
			break;
		}
		if (convert(&o, style, args, &sp, &f, res))
			break;
	}
	out[o.len] = '\0';
	res->len = o.len;
	res->cut = o.cut;
}
