/* SPDX-License-Identifier: MIT */
/*
 * Hypercalls: the guest fills a struct et_hypercall and writes its
 * guest-physical address to ET_PORT_HYPERCALL (abi.h). The port write is a
 * synchronous exit: when `out` retires, the VMM has read the block, acted
 * and written `result` back.
 */
#include <earlytrace/guestlib.h>

/* phys = virt + et_phys_offset; see et_guest_init(). */
static int64_t et_phys_offset;

/*
 * The block lives in guestlib's .bss, not on the caller's stack: the image's
 * static data is known to be in the linear mapping et_guest_init describes,
 * a stack need not be. One block means one hypercall at a time, so the call
 * runs with interrupts off.
 */
static struct et_hypercall et_hc_block __attribute__((aligned(32)));

ET_NOTRACE void et_guest_init(int64_t phys_offset)
{
	et_phys_offset = phys_offset;
}

ET_NOTRACE uint64_t et_virt_to_phys(const void *virt)
{
	/* Unsigned arithmetic: wraps modulo 2^64, which is what a negative
	 * offset (higher-half kernel) needs. */
	return (uint64_t)(uintptr_t)virt + (uint64_t)et_phys_offset;
}

ET_NOTRACE int64_t et_hypercall(uint32_t nr, uint64_t arg0, uint64_t arg1)
{
	volatile struct et_hypercall *hc = &et_hc_block;
	uint64_t pa = et_virt_to_phys(&et_hc_block);
	unsigned long flags;
	int64_t result;

	/* The port takes 32 bits; the whole block must sit below 4 GiB. */
	if (pa > 0xffffffffull - sizeof(et_hc_block))
		return ET_E_INVAL;

	__asm__ volatile("pushf; pop %0; cli" : "=r"(flags) : : "memory");
	hc->abi_version = ET_ABI_VERSION;
	hc->nr = nr;
	hc->arg0 = arg0;
	hc->arg1 = arg1;
	/* A VMM that does not know the port leaves this as it is. */
	hc->result = ET_HC_NO_VMM;
	/* "memory": the block must be in memory before the exit and `result`
	 * re-read after it. */
	__asm__ volatile("outl %0, %1"
			 :
			 : "a"((uint32_t)pa), "Nd"((uint16_t)ET_PORT_HYPERCALL)
			 : "memory");
	result = hc->result;
	__asm__ volatile("push %0; popf" : : "r"(flags) : "memory", "cc");
	return result;
}
