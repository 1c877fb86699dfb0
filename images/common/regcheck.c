/* SPDX-License-Identifier: MIT */
#include "regcheck.h"

#include <stdbool.h>

#include "machine.h"
#include "print.h"

#ifdef __x86_64__
static const char *const rc_names[RC_NR_SLOTS] = {
	[RC_RAX] = "rax", [RC_RBX] = "rbx", [RC_RCX] = "rcx", [RC_RDX] = "rdx",
	[RC_RSI] = "rsi", [RC_RDI] = "rdi", [RC_RBP] = "rbp", [RC_R8] = "r8",
	[RC_R9] = "r9", [RC_R10] = "r10", [RC_R11] = "r11", [RC_R12] = "r12",
	[RC_R13] = "r13", [RC_R14] = "r14", [RC_R15] = "r15", [RC_RSP] = "rsp",
	[RC_FLAGS] = "flags",
};
#else
static const char *const rc_names[RC_NR_SLOTS] = {
	[RC_EAX] = "eax", [RC_EBX] = "ebx", [RC_ECX] = "ecx", [RC_EDX] = "edx",
	[RC_ESI] = "esi", [RC_EDI] = "edi", [RC_EBP] = "ebp", [RC_ESP] = "esp",
	[RC_FLAGS] = "flags",
};
#endif

/*
 * Every checked flag set (DF included), every one clear, and two halves,
 * so each flag is seen both ways next to either value of the others. The
 * seeds vary every bit of every register (i386 keeps the low 32 bits).
 */
static const struct {
	uint64_t seed;
	uintptr_t flags;
} rc_calls[REGCHECK_CALLS] = {
	{ 0x0123456789abcdefull, RC_FLAGS_CHECKED },
	{ 0xfedcba9876543210ull, 0 },
	{ 0x8000000180000001ull, RC_FLAG_CF | RC_FLAG_AF | RC_FLAG_SF | RC_FLAG_DF },
	{ 0x5555aaaa3333ccccull, RC_FLAG_PF | RC_FLAG_ZF | RC_FLAG_OF },
};

static void rc_fail(unsigned call, const char *what, uintptr_t want, uintptr_t got,
		    const char *phase)
{
	print_str("regcheck: FAIL call ");
	print_dec(call);
	print_str(": ");
	print_str(what);
	print_str(" expected ");
	print_hex(want);
	print_str(" got ");
	print_hex(got);
	print_str(" phase=");
	print_line(phase);
}

/* Compares call i's snapshots; prints each difference. */
static bool rc_compare(unsigned i, const char *phase)
{
	bool ok = true;

	/* A flag pattern that did not load would test nothing. */
	if ((regcheck_before[RC_FLAGS] & RC_FLAGS_CHECKED) != rc_calls[i].flags) {
		rc_fail(i + 1, "flags (loaded)", rc_calls[i].flags,
			regcheck_before[RC_FLAGS] & RC_FLAGS_CHECKED, phase);
		ok = false;
	}
	for (unsigned s = 0; s < RC_NR_SLOTS; s++) {
		/* IF, TF, RF and the like are the tracer's business. */
		uintptr_t mask = s == RC_FLAGS ? RC_FLAGS_CHECKED : UINTPTR_MAX;
		uintptr_t want = regcheck_before[s] & mask;
		uintptr_t got = regcheck_after[s] & mask;

		if (want != got) {
			rc_fail(i + 1, rc_names[s], want, got, phase);
			ok = false;
		}
	}
	return ok;
}

void regcheck_run(const char *phase)
{
	bool ok = true;

	for (unsigned i = 0; i < REGCHECK_CALLS; i++) {
		regcheck_call((uintptr_t)rc_calls[i].seed, rc_calls[i].flags);
		if (!rc_compare(i, phase))
			ok = false;
	}
	if (!ok)
		machine_exit(REGCHECK_EXIT_FAILED);
	print_str("regcheck: ok (");
	print_dec(REGCHECK_CALLS);
	print_str(" calls, ");
	print_dec(RC_NR_SLOTS);
	print_str(" registers and flags each) phase=");
	print_line(phase);
}
