/* SPDX-License-Identifier: MIT */
/*
 * The trampoline templates (x86_64.S, i386.S) as the VMM sees them: byte
 * blobs to copy into guest memory, with their entry points as offsets.
 * Every blob is page-aligned code followed, on its own page, by room for
 * a struct et_tramp_batch; it ends where the batch's record array must
 * start. The code addresses the records (and on i386 the header) by
 * absolute 32-bit displacements: the relocation lists say where they are
 * and what the VMM adds to them when it copies the blob in.
 */
#ifndef TRAMPOLINES_TEMPLATES_H
#define TRAMPOLINES_TEMPLATES_H

#include <linux/kvm.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tramp_template {
	const char *arch;
	const uint8_t *bytes;
	size_t size;	       /* code and header; records follow */
	size_t header;	       /* offset of the batch header (page-aligned) */
	size_t record_entry;   /* offset of the plain record trampoline */
	size_t oneshot_entry;  /* offset of the oneshot trampoline */
	/* Offset of the trampoline that records into its own vCPU's batch
	 * (rdtscp's TSC_AUX picks it), 0 when the template has none. */
	size_t smp_record_entry;
	unsigned word_bytes;   /* 8 or 4: how wide ip and parent ip are */
	/* Offsets of 32-bit displacements that get the records' end added
	 * (its virtual address), and those that get the blob's own virtual
	 * address added (they hold an offset into the blob). */
	const uint32_t *end_relocs;
	size_t nr_end_relocs;
	const uint32_t *base_relocs;
	size_t nr_base_relocs;
	/* Offsets of 32-bit immediates set to the bytes between two vCPUs'
	 * batches (the smp entry's). */
	const uint32_t *stride_relocs;
	size_t nr_stride_relocs;
};

/* The template for an ELF class (64 or 32), or NULL. */
const struct tramp_template *tramp_template_for(unsigned elf_class);

/* The call a trampoline hands over in registers when its batch is full
 * (ET_TB_DRAIN_RECORD, the FULL macro of x86_64.S and i386.S): the TSC in
 * ebx:ecx, the return address (the site plus its length) in rsi, the
 * parent's in rdi. */
static inline void tramp_full_call_from_regs(const struct kvm_regs *r, uint64_t *tsc,
					     uint64_t *ret, uint64_t *parent)
{
	*tsc = (r->rbx & 0xffffffffu) << 32 | (r->rcx & 0xffffffffu);
	*ret = r->rsi;
	*parent = r->rdi;
}

#ifdef __cplusplus
}
#endif

#endif /* TRAMPOLINES_TEMPLATES_H */
