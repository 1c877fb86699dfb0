/* SPDX-License-Identifier: MIT */
/*
 * The call tree that tracing tests count.
 *
 * Each ct_* function is a real call with its own fentry site (__traced_fn,
 * and the build passes -fno-optimize-sibling-calls so gcc cannot turn the
 * recursion into a loop that runs a body without passing its entry), and
 * each bumps its own counter on entry, so its counter equals the number of
 * times its fentry site executed in this phase.
 *
 * One phase (calltree_run) calls ct_root CT_ROUNDS times; each ct_root calls
 * ct_branch CT_BRANCHES times and ct_fib(CT_FIB_N) once; each ct_branch calls
 * ct_leaf CT_LEAVES times. A naive ct_fib(n) makes 2*F(n+1) - 1 calls in all
 * (C(0) = C(1) = 1, C(n) = 1 + C(n-1) + C(n-2)) and recurses n deep.
 * With R = 4, B = 8, L = 16, N = 8 (F(9) = 34):
 *
 *	ct_root   = R               =   4
 *	ct_branch = R * B           =  32
 *	ct_leaf   = R * B * L       = 512
 *	ct_fib    = R * (2F(N+1)-1) = 268
 *	total                       = 816
 *
 * The repeat=N knob runs the whole phase N times (for benchmarks).
 * Keep this comment, README.md and the constants in step.
 */
#include "calltree.h"

#include <stdint.h>

#include "boot.h"
#include "compiler.h"
#include "print.h"

#define CT_ROUNDS 4
#define CT_BRANCHES 8
#define CT_LEAVES 16
#define CT_FIB_N 8

enum ct_fn { CT_ROOT, CT_BRANCH, CT_LEAF, CT_FIB, CT_NR_FNS };

static const char *const ct_names[CT_NR_FNS] = {
	[CT_ROOT] = "ct_root",
	[CT_BRANCH] = "ct_branch",
	[CT_LEAF] = "ct_leaf",
	[CT_FIB] = "ct_fib",
};

static uint32_t ct_calls[CT_NR_FNS];

/* The arithmetic only gives the calls something to return; nobody checks it. */
__traced_fn static uint32_t ct_leaf(uint32_t branch, uint32_t leaf)
{
	ct_calls[CT_LEAF]++;
	return branch * 31 + leaf;
}

__traced_fn static uint32_t ct_branch(uint32_t branch)
{
	uint32_t sum = 0;

	ct_calls[CT_BRANCH]++;
	for (uint32_t i = 0; i < CT_LEAVES; i++)
		sum += ct_leaf(branch, i);
	return sum;
}

__traced_fn static uint32_t ct_fib(uint32_t n)
{
	ct_calls[CT_FIB]++;
	if (n < 2)
		return n;
	return ct_fib(n - 1) + ct_fib(n - 2);
}

__traced_fn static uint32_t ct_root(void)
{
	uint32_t sum = 0;

	ct_calls[CT_ROOT]++;
	for (uint32_t i = 0; i < CT_BRANCHES; i++)
		sum += ct_branch(i);
	return sum + ct_fib(CT_FIB_N);
}

_Static_assert(CT_NR_FNS == CALLTREE_NR_FNS, "calltree.h is out of step");

const char *calltree_fn_name(unsigned i)
{
	return i < CT_NR_FNS ? ct_names[i] : "";
}

uintptr_t calltree_fn_addr(unsigned i)
{
	switch (i) {
	case CT_ROOT:
		return (uintptr_t)ct_root;
	case CT_BRANCH:
		return (uintptr_t)ct_branch;
	case CT_LEAF:
		return (uintptr_t)ct_leaf;
	case CT_FIB:
		return (uintptr_t)ct_fib;
	}
	return 0;
}

static void ct_report(const char *phase)
{
	uint32_t total = 0;

	for (int i = 0; i < CT_NR_FNS; i++) {
		print_str("calltree phase=");
		print_str(phase);
		print_str(" fn=");
		print_str(ct_names[i]);
		print_str(" calls=");
		print_dec(ct_calls[i]);
		print_str("\n");
		total += ct_calls[i];
	}
	print_str("calltree phase=");
	print_str(phase);
	print_str(" total=");
	print_dec(total);
	print_str("\n");
}

void calltree_run(const char *phase)
{
	for (int i = 0; i < CT_NR_FNS; i++)
		ct_calls[i] = 0;
	/* repeat=N (benchmarks): N times the calls, N times the counts. */
	for (uint32_t r = 0; r < boot_options()->repeat; r++)
		for (int i = 0; i < CT_ROUNDS; i++)
			ct_root();
	ct_report(phase);
}
