/* SPDX-License-Identifier: MIT */
#include "vmm/ftrace/bprint.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* Widths and precisions beyond this are clamped: the text stays bounded
 * whatever the guest wrote. */
#define MAX_WIDTH 256

struct out {
	char *buf;
	size_t size, len;
	bool cut;
};

/* Appends n bytes, leaving out NULs (a %c of 0): the text stays one C string. */
static void put(struct out *o, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!s[i])
			continue;
		if (o->len + 1 >= o->size) {
			o->cut = true;
			break;
		}
		o->buf[o->len++] = s[i];
	}
	o->buf[o->len] = '\0';
}

static void put_str(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

struct args {
	const uint8_t *p;
	size_t len, off;
	bool short_;
};

/* The next size-byte integer at its vbin_printf alignment. */
static bool take(struct args *a, size_t size, uint64_t *v)
{
	size_t align = size == 8 ? 4 : size;
	size_t off = (a->off + align - 1) / align * align;

	*v = 0;
	if (off > a->len || size > a->len - off) {
		a->short_ = true;
		return false;
	}
	memcpy(v, a->p + off, size); /* little-endian */
	a->off = off + size;
	return true;
}

/* The next inline NUL-terminated string (no alignment). */
static const char *take_str(struct args *a, size_t *n)
{
	const uint8_t *nul;

	if (a->off >= a->len) {
		a->short_ = true;
		return NULL;
	}
	nul = memchr(a->p + a->off, '\0', a->len - a->off);
	if (!nul) {
		a->short_ = true;
		return NULL;
	}
	*n = (size_t)(nul - (a->p + a->off));
	a->off += *n + 1;
	return (const char *)a->p + a->off - *n - 1;
}

struct spec {
	char flags[6];
	int width, precision; /* -1: none */
	char qualifier;	      /* 'H' hh, 'h', 'l', 'L' ll, 'z', 't', or 0 */
};

static int clamp(int v)
{
	return v > MAX_WIDTH ? MAX_WIDTH : v < -MAX_WIDTH ? -MAX_WIDTH : v;
}

/* Digits of a width or precision, clamped; *p advanced past them. */
static int digits(const char **p)
{
	int v = 0;

	while (isdigit((unsigned char)**p)) {
		if (v <= MAX_WIDTH)
			v = v * 10 + (**p - '0');
		(*p)++;
	}
	return clamp(v);
}

/* A C format for one conversion from spec: "%<flags><width>.<prec><len><conv>". */
static void c_format(char *f, size_t n, const struct spec *s, const char *length, char conv)
{
	char w[16] = "", pr[16] = "";

	if (s->width >= 0)
		snprintf(w, sizeof(w), "%d", s->width);
	if (s->precision >= 0)
		snprintf(pr, sizeof(pr), ".%d", s->precision);
	snprintf(f, n, "%%%s%s%s%s%c", s->flags, w, pr, length, conv);
}

/* The formats below are built by c_format() from a parsed spec (flags of
 * "-+ #0", clamped numbers, one known conversion), never taken from the
 * guest, so printf may have them. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"

static void put_number(struct out *o, const struct spec *s, char conv, uint64_t raw, size_t size)
{
	char f[48], text[2 * MAX_WIDTH + 32];

	c_format(f, sizeof(f), s, "ll", conv);
	if (conv == 'd' || conv == 'i') {
		int64_t v = (int64_t)raw;

		if (size < 8) /* sign-extend what the kernel stored */
			v = (int64_t)(raw << (64 - 8 * size)) >> (64 - 8 * size);
		snprintf(text, sizeof(text), f, (long long)v);
	} else {
		snprintf(text, sizeof(text), f, (unsigned long long)raw);
	}
	put_str(o, text);
}

static void put_padded(struct out *o, const struct spec *s, const char *str, size_t n)
{
	char f[48], text[2 * MAX_WIDTH + 32];
	size_t shown = s->precision >= 0 && (size_t)s->precision < n ? (size_t)s->precision : n;

	if (s->width < 0 || (size_t)s->width <= shown) {
		/* No padding to add: copy it whole (it may be longer than MAX_WIDTH). */
		put(o, str, shown);
		return;
	}
	/* shown < width <= MAX_WIDTH, and str need not be NUL-terminated. */
	snprintf(f, sizeof(f), "%%%s%d.%ds", strchr(s->flags, '-') ? "-" : "", s->width,
		 (int)shown);
	snprintf(text, sizeof(text), f, str);
	put_str(o, text);
}

#pragma GCC diagnostic pop

static void put_pointer(struct out *o, const struct spec *s, char ext, uint64_t v,
			ftrace_symbol_fn sym, void *sym_ctx)
{
	char name[256];

	if ((ext == 'S' || ext == 's') && sym && !sym(sym_ctx, v, ext == 'S', name, sizeof(name))) {
		put_padded(o, s, name, strlen(name));
		return;
	}
	if (ext == 'e') { /* an error pointer: the errno it carries */
		snprintf(name, sizeof(name), "%lld", (long long)(int64_t)v);
		put_padded(o, s, name, strlen(name));
		return;
	}
	snprintf(name, sizeof(name), "0x%llx", (unsigned long long)v);
	put_padded(o, s, name, strlen(name));
}

/* Parses flags, width, precision and length of the conversion at *p
 * (just past '%'); a "*" takes an int argument. False if args ran out. */
static bool parse_spec(const char **p, struct spec *s, struct args *a)
{
	size_t nf = 0;
	uint64_t v;

	memset(s, 0, sizeof(*s));
	s->width = s->precision = -1;
	while (**p && strchr("-+ #0", **p)) {
		if (nf < sizeof(s->flags) - 1 && !strchr(s->flags, **p))
			s->flags[nf++] = **p;
		(*p)++;
	}
	if (**p == '*') {
		(*p)++;
		if (!take(a, 4, &v))
			return false;
		s->width = clamp((int)(int32_t)v);
		if (s->width < 0) { /* a negative width left-justifies */
			s->width = -s->width;
			if (!strchr(s->flags, '-') && nf < sizeof(s->flags) - 1)
				s->flags[nf++] = '-';
		}
	} else if (isdigit((unsigned char)**p)) {
		s->width = digits(p);
	}
	if (**p == '.') {
		(*p)++;
		if (**p == '*') {
			(*p)++;
			if (!take(a, 4, &v))
				return false;
			s->precision = (int32_t)v < 0 ? -1 : clamp((int)(int32_t)v);
		} else {
			s->precision = digits(p);
		}
	}
	switch (**p) {
	case 'h':
		(*p)++;
		s->qualifier = 'h';
		if (**p == 'h') {
			(*p)++;
			s->qualifier = 'H';
		}
		break;
	case 'l':
		(*p)++;
		s->qualifier = 'l';
		if (**p == 'l') {
			(*p)++;
			s->qualifier = 'L';
		}
		break;
	case 'L':
	case 'z':
	case 'Z':
	case 't':
		s->qualifier = **p == 'Z' ? 'z' : **p;
		(*p)++;
		break;
	}
	return true;
}

static size_t int_size(char qualifier, unsigned long_size)
{
	switch (qualifier) {
	case 'H':
		return 1;
	case 'h':
		return 2;
	case 'l':
	case 'z':
	case 't':
		return long_size;
	case 'L':
		return 8;
	default:
		return 4;
	}
}

void ftrace_bprint_render(const char *fmt, const uint8_t *args, size_t args_len,
			  unsigned long_size, ftrace_symbol_fn sym, void *sym_ctx, char *out,
			  size_t out_size, struct ftrace_bprint_result *res)
{
	struct out o = { out, out_size, 0, false };
	struct args a = { args, args_len, 0, false };
	const char *p = fmt;

	memset(res, 0, sizeof(*res));
	out[0] = '\0';
	if (long_size != 4 && long_size != 8)
		long_size = 8;
	while (*p && !o.cut) {
		const char *pct = strchr(p, '%');
		struct spec s;
		uint64_t v;
		char conv;

		if (!pct) {
			put_str(&o, p);
			break;
		}
		put(&o, p, (size_t)(pct - p));
		p = pct + 1;
		if (*p == '%') {
			put(&o, "%", 1);
			p++;
			continue;
		}
		if (!parse_spec(&p, &s, &a))
			break;
		conv = *p ? *p++ : '\0';
		switch (conv) {
		case 'c': {
			char c;

			if (!take(&a, 1, &v))
				break;
			c = (char)v;
			put_padded(&o, &s, &c, 1);
			break;
		}
		case 's': {
			size_t n;
			const char *str = take_str(&a, &n);

			if (str)
				put_padded(&o, &s, str, n);
			break;
		}
		case 'p': {
			char ext = *p;

			if (ext && strchr("SsxKe", ext)) {
				if (take(&a, long_size, &v))
					put_pointer(&o, &s, ext, v, sym, sym_ctx);
			} else if (isalnum((unsigned char)ext)) {
				/* Rendered by the kernel when recording. */
				size_t n;
				const char *str = take_str(&a, &n);

				if (str)
					put_padded(&o, &s, str, n);
			} else if (take(&a, long_size, &v)) {
				put_pointer(&o, &s, 0, v, NULL, NULL);
			}
			while (isalnum((unsigned char)*p))
				p++;
			break;
		}
		case 'd':
		case 'i':
		case 'o':
		case 'u':
		case 'x':
		case 'X': {
			size_t size = int_size(s.qualifier, long_size);

			if (take(&a, size, &v))
				put_number(&o, &s, conv, v, size);
			break;
		}
		default:
			/* %n and unknown conversions: the kernel stops formatting. */
			res->invalid = true;
			break;
		}
		if (a.short_ || res->invalid)
			break;
	}
	if (a.short_) {
		put_str(&o, "<args truncated>");
		res->args_short = true;
	}
	res->cut = o.cut;
	res->len = o.len;
	res->args_used = a.off;
}
