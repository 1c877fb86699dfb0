/* SPDX-License-Identifier: MIT */
/*
 * The fuzz targets that read guest memory through the guest's page tables
 * (see targets.h): page walks over hostile tables (page_walk), and a
 * guest panic's message formatted from its format string and arguments
 * (panic_message).
 */
#include <stdlib.h>
#include <string.h>

#include "arch/x86/page_walk.h"
#include "fuzz/targets.h"
#include "fuzz/targets_helpers.h"
#include "vmm/machine/panic_message.h"

/* Guest RAM and longest read of the page-walk target. */
#define FUZZ_WALK_RAM_LOW (1u << 20)
#define FUZZ_WALK_READ_MAX (64u << 10)

/* ---- page walks ------------------------------------------------------- */

/* Fills dst with src repeated (zeroes when src is empty). */
static void tile(uint8_t *dst, size_t dst_len, const uint8_t *src, size_t src_len)
{
	if (!src_len)
		return;
	for (size_t off = 0; off < dst_len; off += src_len)
		memcpy(dst + off, src, dst_len - off < src_len ? dst_len - off : src_len);
}

int fuzz_page_walk(const uint8_t *data, size_t size)
{
	static uint8_t buf[FUZZ_WALK_READ_MAX];
	struct input in = { data, size };
	struct fuzz_ram ram;
	struct arch_paging pg = { 0 };
	uint8_t mode = in_u8(&in);
	uint64_t va, pa, end;
	size_t len, body_len;
	const uint8_t *body;
	int ret;

	/* Mode bits: the control-register bits the walk reads. */
	pg.cr0 = mode & 1 ? X86_CR0_PG : 0;
	pg.cr4 = (mode & 2 ? X86_CR4_PSE : 0) | (mode & 4 ? X86_CR4_PAE : 0) |
		 (mode & 8 ? X86_CR4_LA57 : 0);
	pg.efer = (mode & 16 ? X86_EFER_LMA : 0) | (mode & 32 ? X86_EFER_NXE : 0);
	pg.cr3 = in_le(&in, 8);
	va = in_le(&in, 8);
	len = in_le(&in, 2) % (FUZZ_WALK_READ_MAX + 1);
	body_len = in.n;
	body = in_bytes(&in, &body_len);

	if (fuzz_ram_init(&ram, FUZZ_WALK_RAM_LOW, FUZZ_VMM_RAM_HIGH, body_len == 0))
		return -1;
	tile(ram.low, FUZZ_WALK_RAM_LOW, body, body_len);
	tile(ram.high, FUZZ_VMM_RAM_HIGH, body, body_len);

	ret = arch_translate(&ram.gm, &pg, va, &pa, &end);
	if (ret == 0) {
		arch_translate(&ram.gm, &pg, end, &pa, NULL); /* the next page */
		arch_translate(&ram.gm, &pg, end - 1, &pa, NULL);
	}
	arch_read_virt(&ram.gm, &pg, va, buf, len);
	/* Straddling the end of the page, and of the address space. */
	arch_read_virt(&ram.gm, &pg, (va | 0xfff) - 3, buf, 8);
	arch_read_virt(&ram.gm, &pg, UINT64_MAX - 3, buf, 8);
	return ret;
}

/* ---- a panic's message ------------------------------------------------ */

/* Guest RAM for the strings %s reads: small, so the fuzzer finds it. */
#define FUZZ_PANIC_RAM (4u << 10)

static int panic_read(void *ctx, uint64_t va, void *buf, size_t len)
{
	const struct arch_paging paging_off = { 0 };

	return arch_read_virt(ctx, &paging_off, va, buf, len);
}

int fuzz_panic_message(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	struct fuzz_ram ram;
	uint64_t words[PANIC_ARGS_MAX];
	char fmt[PANIC_FORMAT_MAX + 1], out[PANIC_MESSAGE_MAX];
	uint8_t mode = in_u8(&in);
	unsigned nr = mode % (PANIC_ARGS_MAX + 1), word_bytes = mode & 0x80 ? 4 : 8;
	size_t fmt_len = in_le(&in, 2) % (PANIC_FORMAT_MAX + 1), body_len;
	const uint8_t *p;
	struct panic_args a;

	for (unsigned i = 0; i < nr; i++)
		words[i] = in_le(&in, word_bytes);
	p = in_bytes(&in, &fmt_len);
	if (fmt_len) /* p is NULL on an exhausted input */
		memcpy(fmt, p, fmt_len);
	fmt[fmt_len] = '\0';
	body_len = in.n;
	p = in_bytes(&in, &body_len);
	if (fuzz_ram_init(&ram, FUZZ_PANIC_RAM, 0, true))
		return -1;
	if (body_len)
		memcpy(ram.low, p, body_len < FUZZ_PANIC_RAM ? body_len : FUZZ_PANIC_RAM);
	a = (struct panic_args){ words, nr, word_bytes, panic_read, &ram.gm, NULL, NULL };
	panic_message_format(fmt, &a, out, sizeof(out));
	/* The message is terminated inside its buffer, printable only. */
	if (!memchr(out, '\0', sizeof(out)))
		abort();
	for (size_t i = 0; out[i]; i++)
		if (out[i] < 0x20 || out[i] > 0x7e)
			abort();
	return 0;
}
