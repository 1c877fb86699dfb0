/* SPDX-License-Identifier: MIT */
/*
 * regcheck: do the registers and flags survive a traced call?
 *
 * regcheck.S (one per arch) has a hand-written traced function,
 * regcheck_target, whose fentry site comes before anything else, and a
 * caller, regcheck_call, that loads every general register and the
 * arithmetic flags with a pattern, snapshots them ("before"), and calls it.
 * Right after its site regcheck_target snapshots them again ("after"). A
 * tracer that executes the site (a nop, an int3 the VMM steps over, a call
 * to a trampoline) must leave every slot unchanged, stack pointer included.
 * Shared with the assembly, hence the slot numbers as macros.
 */
#ifndef IMAGES_REGCHECK_H
#define IMAGES_REGCHECK_H

/* The arithmetic flags and DF, which a tracer must preserve exactly. */
#define RC_FLAG_CF 0x001
#define RC_FLAG_PF 0x004
#define RC_FLAG_AF 0x010
#define RC_FLAG_ZF 0x040
#define RC_FLAG_SF 0x080
#define RC_FLAG_DF 0x400
#define RC_FLAG_OF 0x800
#define RC_FLAGS_CHECKED (RC_FLAG_CF | RC_FLAG_PF | RC_FLAG_AF | RC_FLAG_ZF | \
			  RC_FLAG_SF | RC_FLAG_DF | RC_FLAG_OF)

/* Snapshot slots, one machine word each; the flags slot is last. */
#ifdef __x86_64__
#define RC_WORD 8
#define RC_RAX 0
#define RC_RBX 1
#define RC_RCX 2
#define RC_RDX 3
#define RC_RSI 4
#define RC_RDI 5
#define RC_RBP 6
#define RC_R8 7
#define RC_R9 8
#define RC_R10 9
#define RC_R11 10
#define RC_R12 11
#define RC_R13 12
#define RC_R14 13
#define RC_R15 14
#define RC_RSP 15	/* at regcheck_target's entry: the return address */
#define RC_FLAGS 16
#else
#define RC_WORD 4
#define RC_EAX 0
#define RC_EBX 1
#define RC_ECX 2
#define RC_EDX 3
#define RC_ESI 4
#define RC_EDI 5
#define RC_EBP 6
#define RC_ESP 7	/* at regcheck_target's entry: the return address */
#define RC_FLAGS 8
#endif
#define RC_NR_SLOTS (RC_FLAGS + 1)

#ifndef __ASSEMBLER__
#include <stdint.h>

/* Both written by regcheck.S. */
extern uintptr_t regcheck_before[RC_NR_SLOTS];
extern uintptr_t regcheck_after[RC_NR_SLOTS];

/*
 * Loads register i with seed ^ (a constant of its own), the flags in
 * RC_FLAGS_CHECKED with `flags` (the others as they were), fills
 * regcheck_before, calls regcheck_target, which fills regcheck_after, and
 * returns with DF clear. regcheck_before[RC_RSP/RC_ESP] is the stack
 * pointer regcheck_target sees on entry.
 */
void regcheck_call(uintptr_t seed, uintptr_t flags);

/* The traced function; not for C to call (it expects regcheck_call). */
void regcheck_target(void);

/*
 * Runs regcheck_call REGCHECK_CALLS times with different seeds and flag
 * patterns and compares every slot. Prints
 * "regcheck: ok (<n> calls, <m> registers and flags each) phase=<phase>",
 * or one "regcheck: FAIL call <k>: <reg> expected 0x.. got 0x.. phase=<phase>"
 * per differing slot and ends the run with status REGCHECK_EXIT_FAILED.
 */
#define REGCHECK_CALLS 4
#define REGCHECK_EXIT_FAILED 4
void regcheck_run(const char *phase);
#endif /* !__ASSEMBLER__ */

#endif /* IMAGES_REGCHECK_H */
