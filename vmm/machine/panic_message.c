/* SPDX-License-Identifier: MIT */
#include "vmm/machine/panic_message.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "arch/arch.h"

#define MAX_WIDTH 64 /* a guest's %1000000d must not fill the message */

struct out {
	char *buf;
	size_t len, used; /* used < len: room for the NUL */
};

/* Printable characters only; whitespace that would break a line is a
 * space. */
static void put(struct out *o, char c)
{
	if (o->used + 1 >= o->len)
		return;
	if (c == '\n' || c == '\t' || c == '\r')
		c = ' ';
	else if (!isprint((unsigned char)c))
		c = '?';
	o->buf[o->used++] = c;
}

static void put_str(struct out *o, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++)
		put(o, s[i]);
}

struct spec {
	bool left, zero, plus, space, alt;
	int width, precision; /* -1: not given */
	int size;	      /* 'H' hh, 'h', 'i' int, 'l', 'L' long long */
	char conv;
};

/* Takes the next argument word: false when none is left. */
static bool next_word(const struct panic_args *a, unsigned *i, uint64_t *v)
{
	if (*i >= a->nr)
		return false;
	*v = a->words[(*i)++];
	return true;
}

/* The value of an integer conversion, sign-extended or truncated to its
 * C type; 32-bit code passes a long long in two words. */
static bool next_int(const struct panic_args *a, unsigned *i, const struct spec *sp,
		     uint64_t *v, bool *negative)
{
	bool is_signed = sp->conv == 'd' || sp->conv == 'i';
	unsigned bits;

	if (!next_word(a, i, v))
		return false;
	if (sp->size == 'L' && a->word_bytes == 4) {
		uint64_t hi;

		if (!next_word(a, i, &hi))
			return false;
		*v = (uint32_t)*v | hi << 32;
	}
	bits = sp->size == 'H' ? 8 : sp->size == 'h' ? 16 : sp->size == 'i' ? 32 :
	       sp->size == 'l' ? a->word_bytes * 8 : 64;
	if (bits < 64) {
		uint64_t mask = (1ull << bits) - 1, sign = 1ull << (bits - 1);

		*v &= mask;
		if (is_signed && (*v & sign))
			*v |= ~mask;
	}
	*negative = is_signed && (int64_t)*v < 0;
	if (*negative)
		*v = 0 - *v;
	return true;
}

static void put_padded(struct out *o, const struct spec *sp, const char *prefix,
		       const char *digits)
{
	size_t plen = strlen(prefix), dlen = strlen(digits);
	int pad = sp->width > (int)(plen + dlen) ? sp->width - (int)(plen + dlen) : 0;

	if (!sp->left && !sp->zero)
		while (pad-- > 0)
			put(o, ' ');
	put_str(o, prefix, plen);
	if (!sp->left && sp->zero)
		while (pad-- > 0)
			put(o, '0');
	put_str(o, digits, dlen);
	while (sp->left && pad-- > 0)
		put(o, ' ');
}

static void put_int(struct out *o, const struct panic_args *a, unsigned *i,
		    const struct spec *sp)
{
	char digits[32], prefix[4] = "";
	uint64_t v;
	bool negative;

	if (!next_int(a, i, sp, &v, &negative)) {
		put(o, '?');
		return;
	}
	switch (sp->conv) {
	case 'x':
		snprintf(digits, sizeof(digits), "%" PRIx64, v);
		break;
	case 'X':
		snprintf(digits, sizeof(digits), "%" PRIX64, v);
		break;
	case 'o':
		snprintf(digits, sizeof(digits), "%" PRIo64, v);
		break;
	default:
		snprintf(digits, sizeof(digits), "%" PRIu64, v);
		break;
	}
	if (negative)
		strcpy(prefix, "-");
	else if ((sp->conv == 'd' || sp->conv == 'i') && (sp->plus || sp->space))
		strcpy(prefix, sp->plus ? "+" : " ");
	else if (sp->alt && v && (sp->conv == 'x' || sp->conv == 'X'))
		strcpy(prefix, sp->conv == 'x' ? "0x" : "0X");
	put_padded(o, sp, prefix, digits);
}

static void put_string(struct out *o, const struct panic_args *a, unsigned *i,
		       const struct spec *sp)
{
	char s[PANIC_STRING_ARG_MAX + 1] = "(null)";
	size_t n, max = PANIC_STRING_ARG_MAX;
	uint64_t va;

	if (!next_word(a, i, &va) || !a->read) {
		put(o, '?');
		return;
	}
	if (sp->precision >= 0 && (size_t)sp->precision < max)
		max = (size_t)sp->precision;
	if (va) {
		/* Byte by byte: a string may end just before an unmapped page. */
		for (n = 0; n < max; n++) {
			if (a->read(a->read_ctx, va + n, &s[n], 1)) {
				if (n == 0) {
					put(o, '?');
					return;
				}
				break;
			}
			if (!s[n])
				break;
		}
		s[n] = '\0';
	}
	put_padded(o, sp, "", s);
}

/* %p and Linux's extensions: the letters after it belong to it. */
static const char *put_pointer(struct out *o, const struct panic_args *a, unsigned *i,
			       const struct spec *sp, const char *f)
{
	bool symbol = *f && strchr("SsBFf", *f) && a->symbolize;
	char text[160];
	uint64_t v;

	while (isalnum((unsigned char)*f))
		f++;
	if (!next_word(a, i, &v)) {
		put(o, '?');
		return f;
	}
	if (a->word_bytes == 4)
		v = (uint32_t)v;
	if (!symbol || !a->symbolize(a->symbolize_ctx, v, text, sizeof(text)))
		snprintf(text, sizeof(text), "0x%" PRIx64, v);
	put_padded(o, sp, "", text);
	return f;
}

/* Parses one conversion after its '%'; returns where the format goes on. */
static const char *parse_spec(const char *f, const struct panic_args *a, unsigned *i,
			      struct spec *sp)
{
	uint64_t star;

	*sp = (struct spec){ .width = -1, .precision = -1, .size = 'i' };
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
		if (next_word(a, i, &star))
			sp->width = (int)(int32_t)star;
	} else {
		for (sp->width = 0; isdigit((unsigned char)*f); f++)
			sp->width = sp->width < MAX_WIDTH ? sp->width * 10 + (*f - '0') : MAX_WIDTH;
	}
	if (sp->width > MAX_WIDTH)
		sp->width = MAX_WIDTH;
	if (*f == '.') {
		f++;
		if (*f == '*') {
			f++;
			if (next_word(a, i, &star))
				sp->precision = (int)(int32_t)star;
		} else {
			for (sp->precision = 0; isdigit((unsigned char)*f); f++)
				if (sp->precision < PANIC_MESSAGE_MAX)
					sp->precision = sp->precision * 10 + (*f - '0');
		}
	}
	if (f[0] == 'h' && f[1] == 'h') {
		sp->size = 'H';
		f += 2;
	} else if (f[0] == 'l' && f[1] == 'l') {
		sp->size = 'L';
		f += 2;
	} else if (*f == 'h') {
		sp->size = 'h';
		f++;
	} else if (*f == 'l' || *f == 'z' || *f == 'Z' || *f == 't') {
		sp->size = 'l'; /* long, size_t, ptrdiff_t: a word */
		f++;
	} else if (*f == 'j' || *f == 'L' || *f == 'q') {
		sp->size = 'L';
		f++;
	}
	sp->conv = *f;
	return *f ? f + 1 : f;
}

const char *panic_message_format(const char *fmt, const struct panic_args *a, char *out,
				 size_t len)
{
	struct out o = { out, len, 0 };
	unsigned i = 0;
	const char *f = fmt;

	if (!len)
		return out;
	/* printk's level prefixes: KERN_SOH and a level character. */
	while (f[0] == '\001' && f[1])
		f += 2;
	while (*f) {
		struct spec sp;

		if (*f != '%') {
			put(&o, *f++);
			continue;
		}
		f = parse_spec(f + 1, a, &i, &sp);
		switch (sp.conv) {
		case 'd':
		case 'i':
		case 'u':
		case 'x':
		case 'X':
		case 'o':
			put_int(&o, a, &i, &sp);
			break;
		case 'c': {
			uint64_t c;

			if (next_word(a, &i, &c))
				put(&o, (char)c);
			else
				put(&o, '?');
			break;
		}
		case 's':
			put_string(&o, a, &i, &sp);
			break;
		case 'p':
			f = put_pointer(&o, a, &i, &sp, f);
			break;
		case '%':
			put(&o, '%');
			break;
		case '\0':
			break;
		default: /* not a conversion printk knows: as it stands */
			put(&o, '%');
			put(&o, sp.conv);
			break;
		}
	}
	/* Linux's messages often end in "\n", which became a space. */
	while (o.used && out[o.used - 1] == ' ')
		o.used--;
	out[o.used] = '\0';
	return out;
}

struct guest_reader {
	const struct guest_mem *gm;
	struct arch_paging pg;
	bool wrap32; /* 32-bit code: linear addresses are 32 bits */
};

static int read_guest(void *ctx, uint64_t va, void *buf, size_t len)
{
	struct guest_reader *r = ctx;

	return arch_read_virt(r->gm, &r->pg, r->wrap32 ? (uint32_t)va : va, buf, len);
}

const char *panic_message_read(struct vcpu *vcpu, char *out, size_t len)
{
	uint64_t words[1 + PANIC_ARGS_MAX];
	char fmt[PANIC_FORMAT_MAX + 1];
	struct kvm_regs r;
	struct kvm_sregs s;
	struct guest_reader reader;
	struct panic_args a = { 0 };
	unsigned n, word_bytes, k;

	if (len)
		out[0] = '\0';
	if (!len || vcpu_get_regs(vcpu, &r, &s) < 0)
		return out;
	n = arch_call_args(&vcpu->vm->mem, &r, &s, words, 1 + PANIC_ARGS_MAX, &word_bytes);
	if (n == 0)
		return out;
	reader = (struct guest_reader){ &vcpu->vm->mem, arch_paging_of(&s),
					!arch_is_64bit_code(&s) };
	for (k = 0; k < PANIC_FORMAT_MAX; k++)
		if (read_guest(&reader, words[0] + k, &fmt[k], 1) || !fmt[k])
			break;
	if (k == 0)
		return out;
	fmt[k] = '\0';
	a = (struct panic_args){ words + 1, n - 1, word_bytes, read_guest, &reader,
				 vcpu->symbolize, vcpu->symbolize_ctx };
	return panic_message_format(fmt, &a, out, len);
}
