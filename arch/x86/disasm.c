/* SPDX-License-Identifier: MIT */
#include "arch/x86/disasm.h"

#include <capstone/capstone.h>
#include <stdio.h>

size_t x86_disasm_one(const uint8_t *code, size_t len, uint64_t addr,
		      enum x86_code_mode mode, char *out, size_t out_len)
{
	cs_mode cmode = mode == X86_CODE64 ? CS_MODE_64 : mode == X86_CODE32 ? CS_MODE_32 : CS_MODE_16;
	csh handle;
	cs_insn *insn;
	size_t n, size = 0;

	if (cs_open(CS_ARCH_X86, cmode, &handle) != CS_ERR_OK) {
		snprintf(out, out_len, "(capstone unavailable)");
		return 0;
	}
	n = cs_disasm(handle, code, len, addr, 1, &insn);
	if (n == 1) {
		snprintf(out, out_len, "%s%s%s", insn->mnemonic, insn->op_str[0] ? " " : "",
			 insn->op_str);
		size = insn->size;
		cs_free(insn, n);
	} else {
		snprintf(out, out_len, "(bad instruction)");
	}
	cs_close(&handle);
	return size;
}
