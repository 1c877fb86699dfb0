/* SPDX-License-Identifier: MIT */
#include "vmm/machine/panic_message.h"

#include <stdbool.h>
#include <string.h>

#include "arch/arch.h"
#include "vmm/printk/printk_format.h"

/* Room for a %pS name: a long one is cut where it always was. */
#define PANIC_SYMBOL_MAX 160

/*
 * Panic's way to render (vmm/printk/printk_format.h): a one-line,
 * printable message, best effort. A missing argument or an unreadable
 * string is a '?' and the message goes on; a width is at most 64.
 */
static const struct printk_style panic_style = {
	.max_width = 64, /* a guest's %1000000d must not fill the message */
	.printable_only = true,
	.kernel_rules = false,
	.best_effort = true,
	.missing_mark = "?",
};

/* The argument words, in order, as printk_format() asks for them. */
struct word_source {
	const struct panic_args *a;
	unsigned next;
	char string[PANIC_STRING_ARG_MAX + 1]; /* the last %s read */
};

static bool next_word(struct word_source *w, uint64_t *v)
{
	if (w->next >= w->a->nr)
		return false;
	*v = w->a->words[w->next++];
	return true;
}

/* 32-bit code passes a long long in two words. */
static bool next_int(void *ctx, unsigned bytes, uint64_t *v)
{
	struct word_source *w = ctx;
	uint64_t hi;

	if (!next_word(w, v))
		return false;
	if (bytes == 8 && w->a->word_bytes == 4) {
		if (!next_word(w, &hi))
			return false;
		*v = (uint32_t)*v | hi << 32;
	}
	return true;
}

/* The string at the next word's address, read from guest memory: at most
 * max and PANIC_STRING_ARG_MAX bytes; false when its first byte cannot be
 * read. */
static bool next_string(void *ctx, size_t max, const char **text, size_t *len)
{
	struct word_source *w = ctx;
	uint64_t va;
	size_t n;

	if (!next_word(w, &va) || !w->a->read)
		return false;
	if (max > PANIC_STRING_ARG_MAX)
		max = PANIC_STRING_ARG_MAX;
	*text = w->string;
	if (!va) {
		strcpy(w->string, "(null)");
		*len = strlen(w->string);
		return true;
	}
	/* Byte by byte: a string may end just before an unmapped page. */
	for (n = 0; n < max; n++) {
		if (w->a->read(w->a->read_ctx, va + n, &w->string[n], 1)) {
			if (n == 0)
				return false;
			break;
		}
		if (!w->string[n])
			break;
	}
	*len = n;
	return true;
}

/* Every %p is the word itself, an address of the code's width. */
static bool next_pointer(void *ctx, char extension, struct printk_pointer *p)
{
	struct word_source *w = ctx;

	(void)extension;
	if (!next_word(w, &p->address))
		return false;
	if (w->a->word_bytes == 4)
		p->address = (uint32_t)p->address;
	return true;
}

/* The vCPU's symbolizer always gives the offset. */
static bool symbol(void *ctx, uint64_t addr, bool with_offset, char *buf, size_t size)
{
	struct word_source *w = ctx;

	(void)with_offset;
	return w->a->symbolize &&
	       w->a->symbolize(w->a->symbolize_ctx, addr, buf,
			       size < PANIC_SYMBOL_MAX ? size : PANIC_SYMBOL_MAX);
}

const char *panic_message_format(const char *fmt, const struct panic_args *a, char *out,
				 size_t len)
{
	struct word_source w = { .a = a };
	const struct printk_args args = { &w, a->word_bytes, next_int, next_string, next_pointer,
					  symbol };
	struct printk_result res;

	if (!len)
		return out;
	/* printk's level prefixes: KERN_SOH and a level character. */
	while (fmt[0] == '\001' && fmt[1])
		fmt += 2;
	printk_format(fmt, &panic_style, &args, out, len, &res);
	/* Linux's messages often end in "\n", which became a space. */
	while (res.len && out[res.len - 1] == ' ')
		res.len--;
	out[res.len] = '\0';
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
