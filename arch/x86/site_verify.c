/* SPDX-License-Identifier: MIT */
/* Checking the bytes of x86 function-entry sites. */
#include "arch/x86/site_verify.h"

#include <capstone/capstone.h>
#include <string.h>

const uint8_t x86_nop5[X86_SITE_LEN] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

uint64_t x86_call_target(const uint8_t code[X86_SITE_LEN], uint64_t vaddr,
			 enum x86_code_mode mode)
{
	int32_t rel;
	uint64_t t;

	memcpy(&rel, code + 1, 4); /* x86 hosts only: little-endian */
	t = vaddr + X86_SITE_LEN + (uint64_t)(int64_t)rel;
	return mode == X86_CODE64 ? t : (uint32_t)t;
}

static bool is_target(uint64_t t, const uint64_t *targets, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		if (targets[i] && targets[i] == t)
			return true;
	return false;
}

enum arch_site_bytes arch_site_classify(const uint8_t code[X86_SITE_LEN], uint64_t vaddr,
				      const uint64_t *targets, size_t nr_targets,
				      enum x86_code_mode mode)
{
	if (!memcmp(code, x86_nop5, X86_SITE_LEN))
		return ARCH_SITE_NOP;
	if (code[0] != 0xe8)
		return ARCH_SITE_OTHER;
	return is_target(x86_call_target(code, vaddr, mode), targets, nr_targets)
		       ? ARCH_SITE_CALL
		       : ARCH_SITE_CALL_ELSEWHERE;
}

size_t arch_entry_landing_pad_len(const uint8_t *code, size_t len)
{
	/* endbr64 is f3 0f 1e fa, endbr32 f3 0f 1e fb. */
	if (len >= 4 && code[0] == 0xf3 && code[1] == 0x0f && code[2] == 0x1e &&
	    (code[3] == 0xfa || code[3] == 0xfb))
		return 4;
	return 0;
}

int arch_entry_scanner_open(struct arch_entry_scanner *sc, enum x86_code_mode mode)
{
	csh handle;

	sc->mode = mode;
	if (cs_open(CS_ARCH_X86, mode == X86_CODE64 ? CS_MODE_64 : CS_MODE_32, &handle) !=
	    CS_ERR_OK)
		return -1;
	sc->handle = handle;
	return 0;
}

void arch_entry_scanner_close(struct arch_entry_scanner *sc)
{
	csh handle = sc->handle;

	cs_close(&handle);
	sc->handle = 0;
}

bool arch_scan_function_entry(struct arch_entry_scanner *sc, const uint8_t *code, size_t len,
			     uint64_t vaddr, const uint64_t *targets, size_t nr_targets,
			     size_t *site_off)
{
	size_t off = arch_entry_landing_pad_len(code, len);
	enum x86_code_mode mode = sc->mode;
	cs_insn *insn;
	bool found = false;

	if (cs_disasm(sc->handle, code + off, len - off, vaddr + off, 1, &insn) == 1) {
		/* Only the rel32 form: the one a compiler emits and we can patch. */
		found = insn->id == X86_INS_CALL && insn->size == X86_SITE_LEN &&
			insn->bytes[0] == 0xe8 &&
			is_target(x86_call_target(insn->bytes, vaddr + off, mode), targets,
				  nr_targets);
		cs_free(insn, 1);
	}
	if (found)
		*site_off = off;
	return found;
}

size_t x86_code_hook_offset(const uint8_t code[X86_SITE_LEN])
{
	if (code[0] == X86_OPCODE_CALL_REL32 || code[0] == X86_OPCODE_INT3 ||
	    !memcmp(code, x86_nop5, X86_SITE_LEN))
		return X86_SITE_LEN;
	return 0;
}
