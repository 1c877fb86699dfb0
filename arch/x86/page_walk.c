/* SPDX-License-Identifier: MIT */
#include "arch/x86/page_walk.h"

#include <string.h>

#include "vmm/util/error.h"

#define PAGE_4K 0x1000ull

/* One level of an 8-byte-entry walk (PAE and long mode). */
struct level {
	const char *name; /* the entry's name in errors */
	unsigned shift;	  /* lowest va bit this level indexes */
	unsigned bits;	  /* how many va bits it indexes */
	int large_ok;	  /* PS=1 here maps a page of 1 << shift bytes */
};

static const struct level long5_levels[] = {
	{ "PML5E", 48, 9, 0 }, { "PML4E", 39, 9, 0 }, { "PDPTE", 30, 9, 1 },
	{ "PDE", 21, 9, 1 },   { "PTE", 12, 9, 0 },
};
/* PAE's PDPTEs have no PS bit: at most 2 MiB pages. */
static const struct level pae_levels[] = {
	{ "PDPTE", 30, 2, 0 }, { "PDE", 21, 9, 1 }, { "PTE", 12, 9, 0 },
};

struct arch_paging arch_paging_of(const struct kvm_sregs *sregs)
{
	return (struct arch_paging){
		.cr0 = sregs->cr0, .cr3 = sregs->cr3, .cr4 = sregs->cr4, .efer = sregs->efer
	};
}

static int read_entry(const struct guest_mem *gm, uint64_t va, const char *name,
		      uint64_t gpa, size_t size, uint64_t *entry)
{
	const void *p = guest_mem_ptr(gm, gpa, size);

	if (!p)
		return et_error("va 0x%llx: %s at 0x%llx is outside guest RAM",
				(unsigned long long)va, name, (unsigned long long)gpa);
	*entry = 0;
	memcpy(entry, p, size); /* x86 host: little-endian like the guest */
	return 0;
}

static int not_present(uint64_t va, const char *name, uint64_t gpa, uint64_t entry)
{
	return et_error("va 0x%llx: %s not present (0x%llx at 0x%llx)", (unsigned long long)va,
			name, (unsigned long long)entry, (unsigned long long)gpa);
}

/* Walks 8-byte tables from `table`; `n` fixed levels, so no loop can be
 * built out of self-referencing entries. */
static int walk64(const struct guest_mem *gm, const struct level *lv, unsigned n,
		  uint64_t table, uint64_t va, uint64_t *pa, uint64_t *size)
{
	for (unsigned i = 0; i < n; i++) {
		uint64_t idx = (va >> lv[i].shift) & ((1ull << lv[i].bits) - 1);
		uint64_t gpa = table + idx * 8, e = 0;

		if (read_entry(gm, va, lv[i].name, gpa, 8, &e))
			return -1;
		if (!(e & X86_PW_P))
			return not_present(va, lv[i].name, gpa, e);
		if (i == n - 1 || (lv[i].large_ok && (e & X86_PW_PS))) {
			uint64_t page = 1ull << lv[i].shift;

			/* Large-page alignment also drops the PAT bit (12). */
			*pa = (e & X86_PW_ADDR_MASK & ~(page - 1)) | (va & (page - 1));
			*size = page;
			return 0;
		}
		table = e & X86_PW_ADDR_MASK;
	}
	return et_error("va 0x%llx: page walk has no levels", (unsigned long long)va);
}

/* 32-bit paging: 4-byte entries, two levels, 4 MiB pages with CR4.PSE. */
static int walk32(const struct guest_mem *gm, const struct arch_paging *pg, uint32_t va,
		  uint64_t *pa, uint64_t *size)
{
	uint64_t gpa = (pg->cr3 & 0xfffff000u) + (va >> 22) * 4, e = 0;

	if (read_entry(gm, va, "PDE", gpa, 4, &e))
		return -1;
	if (!(e & X86_PW_P))
		return not_present(va, "PDE", gpa, e);
	if ((pg->cr4 & X86_CR4_PSE) && (e & X86_PW_PS)) {
		/* PSE-36: PDE bits 20:13 are physical-address bits 39:32. */
		*pa = (e & 0xffc00000u) | ((e >> 13) & 0xffu) << 32 | (va & 0x3fffffu);
		*size = 4ull << 20;
		return 0;
	}
	gpa = (e & 0xfffff000u) + ((va >> 12) & 0x3ffu) * 4;
	if (read_entry(gm, va, "PTE", gpa, 4, &e))
		return -1;
	if (!(e & X86_PW_P))
		return not_present(va, "PTE", gpa, e);
	*pa = (e & 0xfffff000u) | (va & 0xfffu);
	*size = PAGE_4K;
	return 0;
}

/* Bits 63:47 (63:56 with LA57) must all equal the top implemented bit. */
static int canonical(uint64_t va, unsigned va_bits)
{
	int64_t sign_extended = (int64_t)(va << (64 - va_bits)) >> (64 - va_bits);

	return (uint64_t)sign_extended == va;
}

int arch_translate(const struct guest_mem *gm, const struct arch_paging *pg, uint64_t va,
		  uint64_t *pa, uint64_t *page_end)
{
	uint64_t size = PAGE_4K, phys;
	int ret;

	if (pg->efer & X86_EFER_LMA) {
		int la57 = (pg->cr4 & X86_CR4_LA57) != 0;

		if (!canonical(va, la57 ? 57 : 48))
			return et_error("va 0x%llx is not canonical (%d-bit linear addresses)",
					(unsigned long long)va, la57 ? 57 : 48);
		ret = walk64(gm, la57 ? long5_levels : long5_levels + 1, la57 ? 5 : 4,
			     pg->cr3 & X86_PW_ADDR_MASK, va, &phys, &size);
	} else if (!(pg->cr0 & X86_CR0_PG)) {
		/* Paging off (outside long mode): linear = physical, 32 bits. */
		phys = (uint32_t)va;
		ret = 0;
	} else if (pg->cr4 & X86_CR4_PAE) {
		/* The PDPT is 32-byte aligned anywhere below 4 GiB. */
		ret = walk64(gm, pae_levels, 3, pg->cr3 & 0xffffffe0u, (uint32_t)va, &phys,
			     &size);
	} else {
		ret = walk32(gm, pg, (uint32_t)va, &phys, &size);
	}
	if (ret)
		return -1;
	*pa = phys;
	if (page_end)
		*page_end = (va | (size - 1)) + 1;
	return 0;
}

/* Copies len bytes at linear address va into `into`, or from `from` to
 * it (the other is NULL), a page at a time: virtually contiguous pages
 * need not be physically so. */
static int copy_virt(const struct guest_mem *gm, const struct arch_paging *pg, uint64_t va,
		     uint8_t *into, const uint8_t *from, size_t len)
{
	for (size_t done = 0; done < len;) {
		uint64_t pa, end, chunk;
		int err;

		if (arch_translate(gm, pg, va, &pa, &end))
			return -1;
		chunk = end - va; /* modular: right even when end wrapped to 0 */
		if (chunk > len - done)
			chunk = len - done;
		err = into ? guest_mem_read(gm, pa, into + done, chunk)
			   : guest_mem_write(gm, pa, from + done, chunk);
		if (err)
			return et_error_prefix("va 0x%llx", (unsigned long long)va);
		done += chunk;
		va += chunk;
	}
	return 0;
}

int arch_read_virt(const struct guest_mem *gm, const struct arch_paging *pg, uint64_t va,
		  void *buf, size_t len)
{
	return copy_virt(gm, pg, va, buf, NULL, len);
}

int arch_write_virt(const struct guest_mem *gm, const struct arch_paging *pg, uint64_t va,
		   const void *buf, size_t len)
{
	return copy_virt(gm, pg, va, NULL, buf, len);
}

int arch_read_stack_top(const struct guest_mem *gm, const struct kvm_regs *r,
		       const struct kvm_sregs *s, uint64_t *value)
{
	struct arch_paging pg = arch_paging_of(s);

	*value = 0;
	return arch_read_virt(gm, &pg, x86_stack_pointer(s, r), value, x86_word_bytes(s));
}
