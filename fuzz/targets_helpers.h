/* SPDX-License-Identifier: MIT */
/*
 * What the fuzz targets' files (fuzz/targets*.c) share: the input read as
 * a stream of little-endian fields, and small guest RAM in heap memory.
 * Not part of targets.h: the test binary needs only the targets.
 */
#ifndef FUZZ_TARGETS_HELPERS_H
#define FUZZ_TARGETS_HELPERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/mem/guest_mem.h"

/* Guest RAM of the targets that load or walk guest memory. */
#define FUZZ_RAM_HIGH_GPA 0x100000000ull /* high RAM starts at 4 GiB */
#define FUZZ_VMM_RAM_LOW (2u << 20)
#define FUZZ_VMM_RAM_HIGH (64u << 10)

/* ---- the input as fields ---------------------------------------------- */

struct input {
	const uint8_t *p;
	size_t n;
};

static inline uint8_t in_u8(struct input *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

/* Little-endian; missing bytes read as 0. */
static inline uint64_t in_le(struct input *in, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)in_u8(in) << (8 * i);
	return v;
}

/* Up to len bytes of the input; *len is cut to what was left. */
static inline const uint8_t *in_bytes(struct input *in, size_t *len)
{
	const uint8_t *p = in->p;

	if (*len > in->n)
		*len = in->n;
	in->p += *len;
	in->n -= *len;
	return p;
}

static inline uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* A guest-physical address from 32 input bits: bit 31 picks high RAM, so
 * both regions (and the addresses just past each) are easy to reach. */
static inline uint64_t fuzz_in_gpa(struct input *in)
{
	uint32_t v = (uint32_t)in_le(in, 4);

	return v & 0x80000000u ? FUZZ_RAM_HIGH_GPA + (v & 0x7fffffffu) : v;
}

/* ---- guest RAM -------------------------------------------------------- */

struct fuzz_ram {
	struct guest_mem gm;
	uint8_t *low, *high;
};

/* Low RAM at 0 and, when high is not 0, high RAM at 4 GiB: the two
 * regions guest_mem_init() makes around the MMIO hole. Zeroed unless the
 * caller overwrites every byte itself. Buffers are reused by every input. */
int fuzz_ram_init(struct fuzz_ram *r, size_t low, size_t high, bool zero);

/* Copies what fits of [src, src+len) to gpa; nothing when gpa is not RAM. */
void fuzz_ram_write(const struct guest_mem *gm, uint64_t gpa, const void *src, size_t len);

/* What commands do with a symbol table: lookups, formatting, finds. */
struct symtab;
void fuzz_use_symtab(const struct symtab *tab);

#endif /* FUZZ_TARGETS_HELPERS_H */
