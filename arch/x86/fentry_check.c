/* SPDX-License-Identifier: MIT */
#include "arch/x86/fentry_check.h"

#include <capstone/capstone.h>
#include <string.h>

static bool is_return_thunk(const char *name)
{
	size_t n = name ? strlen(name) : 0;
	const char *suffix = "return_thunk";
	size_t s = strlen(suffix);

	return n >= s && !strcmp(name + n - s, suffix);
}

bool x86_fentry_only_returns(const uint8_t *code, size_t len, uint64_t addr,
			     enum x86_code_mode mode, fentry_symbol_fn symbol, void *ctx)
{
	cs_mode cmode = mode == X86_CODE64 ? CS_MODE_64 : CS_MODE_32;
	bool only_returns = false;
	cs_insn *insn;
	size_t n;
	csh h;

	if (cs_open(CS_ARCH_X86, cmode, &h) != CS_ERR_OK)
		return false;
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	n = cs_disasm(h, code, len, addr, 2, &insn);
	for (size_t i = 0; i < n; i++) {
		const cs_insn *in = &insn[i];

		if (i == 0 && (in->id == X86_INS_ENDBR64 || in->id == X86_INS_ENDBR32))
			continue;
		if (in->id == X86_INS_RET) {
			only_returns = true;
		} else if (in->id == X86_INS_JMP && in->detail->x86.op_count == 1 &&
			   in->detail->x86.operands[0].type == X86_OP_IMM) {
			uint64_t target = (uint64_t)in->detail->x86.operands[0].imm;

			only_returns = symbol && is_return_thunk(symbol(ctx, target));
		}
		break;
	}
	if (n)
		cs_free(insn, n);
	cs_close(&h);
	return only_returns;
}
