/* SPDX-License-Identifier: MIT */
#include "arch/x86/cpu_model.h"

#include <cpuid.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CPUID1_ECX_CX16 (1u << 13)
#define CPUID1_ECX_POPCNT (1u << 23)
/* PCLMULQDQ, SSSE3, SSE4.1, SSE4.2, AES */
#define CPUID1_ECX_SIMD_BEYOND_SSE2 ((1u << 1) | (1u << 9) | (1u << 19) | (1u << 20) | (1u << 25))
#define CPUID1_ECX_RDRAND (1u << 30)
#define CPUID1_ECX_XSAVE (1u << 26)
#define CPUID1_ECX_OSXSAVE (1u << 27)
#define CPUID1_ECX_AVX (1u << 28)
#define CPUID1_ECX_HYPERVISOR (1u << 31)
#define CPUID7_EBX_AVX2 (1u << 5)
#define CPUID7_EBX_SMAP (1u << 20)
#define CPUID7_EBX_FSGSBASE (1u << 0)
#define CPUID7_EBX_INVPCID (1u << 10)
#define CPUID7_EBX_RDSEED (1u << 18)
#define CPUID7_EBX_AVX512 0xd0230000u /* F, DQ, IFMA, CD, BW, VL */

/*
 * "nested-pvm": for nested, emulating KVMs such as kvm-pvm, whose
 * instruction emulator stops with an emulation failure on some
 * instructions kernels use when CPUID offers them. Measured on such a
 * host: CMPXCHG16B and XRSTOR are not emulated.
 */
static const struct cpu_feature_mask nested_pvm_hidden[] = {
	{ 1, 0, CPUID_ECX, CPUID1_ECX_CX16, "cx16",
	  "CMPXCHG16B is not emulated by kvm-pvm" },
	{ 1, 0, CPUID_ECX, CPUID1_ECX_XSAVE | CPUID1_ECX_OSXSAVE, "xsave osxsave",
	  "XRSTOR is not emulated by kvm-pvm; kernels fall back to FXSAVE" },
	{ 1, 0, CPUID_ECX, CPUID1_ECX_AVX, "avx", "needs XSAVE-managed state" },
	{ 7, 0, CPUID_EBX, CPUID7_EBX_AVX2 | CPUID7_EBX_AVX512, "avx2 avx512*",
	  "needs XSAVE-managed state" },
	{ 7, 0, CPUID_EBX, CPUID7_EBX_SMAP, "smap",
	  "CLAC and STAC are not emulated by kvm-pvm (Linux runs CLAC on every exception)" },
	{ 1, 0, CPUID_ECX, CPUID1_ECX_POPCNT, "popcnt", "POPCNT is not emulated by kvm-pvm" },
	{ 1, 0, CPUID_ECX, CPUID1_ECX_SIMD_BEYOND_SSE2, "pclmulqdq ssse3 sse4_1 sse4_2 aes",
	  "kvm-pvm emulates no SIMD instructions beyond SSE2's basics" },
	{ 1, 0, CPUID_ECX, CPUID1_ECX_RDRAND, "rdrand", "RDRAND is not emulated by kvm-pvm" },
	{ 7, 0, CPUID_EBX, CPUID7_EBX_RDSEED, "rdseed", "RDSEED is not emulated by kvm-pvm" },
	{ 7, 0, CPUID_EBX, CPUID7_EBX_FSGSBASE, "fsgsbase",
	  "RD/WRFSBASE and RD/WRGSBASE are not emulated by kvm-pvm" },
	{ 7, 0, CPUID_EBX, CPUID7_EBX_INVPCID, "invpcid", "INVPCID is not emulated by kvm-pvm" },
	{ 0xd, 0, CPUID_EAX, 0xffffffffu, "xsave leaf 0xd.0",
	  "describes XSAVE state that is hidden" },
	{ 0xd, 1, CPUID_EAX, 0xffffffffu, "xsaveopt xsavec xsaves",
	  "XSAVE variants, hidden with XSAVE" },
};

static const struct cpu_model models[] = {
	{
		.name = "host",
		.description = "everything KVM offers on this host (KVM_GET_SUPPORTED_CPUID)",
		.hidden = NULL,
		.nr_hidden = 0,
	},
	{
		.name = "nested-pvm",
		.description = "host minus features a nested kvm-pvm cannot emulate",
		.hidden = nested_pvm_hidden,
		.nr_hidden = sizeof(nested_pvm_hidden) / sizeof(nested_pvm_hidden[0]),
		/* Measured: a kvm-pvm guest's kernel still sees the host's CPUID
		 * after KVM_SET_CPUID2 masks it, so Linux must be told directly:
		 * noxsave (FXSAVE instead of XRSTOR), and clearcpuid= with the
		 * X86_FEATURE_* numbers (32 * word + bit, stable across Linux
		 * versions) of features whose instructions Linux uses when it
		 * sees them and the emulator lacks: PCLMULQDQ 129, SSSE3 137,
		 * CX16 141, SSE4.1 147, SSE4.2 148, POPCNT 151, AES 153,
		 * RDRAND 158, FSGSBASE 288, INVPCID 298, RDSEED 306, SMAP 308
		 * (CLAC/STAC). The SIMD ones keep built-in crypto (blake2s for
		 * the RNG, crc32c) on its generic C code. See
		 * docs/cpu-models.md. */
		.linux_params = "noxsave clearcpuid=129,137,141,147,148,151,153,158,288,298,306,308",
		.linux_params_reason = "kvm-pvm guests still see the host's CPUID, and it cannot "
				       "emulate XRSTOR, CMPXCHG16B, POPCNT, RDRAND, RDSEED, "
				       "RD/WRFSBASE, INVPCID, CLAC, STAC or SIMD beyond SSE2",
	},
};

#define KVM_PVM_MODULE "/sys/module/kvm_pvm"

bool cpu_host_is_amd(void)
{
	unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;

	return __get_cpuid(0, &eax, &ebx, &ecx, &edx) && ebx == 0x68747541 /* "Auth" */ &&
	       edx == 0x69746e65 /* "enti" */ && ecx == 0x444d4163 /* "cAMD" */;
}

const struct cpu_model *cpu_model_auto(void)
{
	return cpu_model_find(access(KVM_PVM_MODULE, F_OK) == 0 ? "nested-pvm" : "host");
}

const struct cpu_model *cpu_model_find(const char *name)
{
	if (!strcmp(name, "auto"))
		return cpu_model_auto();
	for (unsigned i = 0; i < sizeof(models) / sizeof(models[0]); i++)
		if (!strcmp(models[i].name, name))
			return &models[i];
	return NULL;
}

const struct cpu_model *cpu_model_at(unsigned index)
{
	return index < sizeof(models) / sizeof(models[0]) ? &models[index] : NULL;
}

struct kvm_cpuid2 *cpuid_alloc(unsigned max_entries)
{
	struct kvm_cpuid2 *cpuid =
		calloc(1, sizeof(*cpuid) + max_entries * sizeof(cpuid->entries[0]));

	if (cpuid)
		cpuid->nent = max_entries;
	return cpuid;
}

struct kvm_cpuid_entry2 *cpuid_entry(struct kvm_cpuid2 *cpuid, unsigned index)
{
	return index < cpuid->nent ? &cpuid->entries[index] : NULL;
}

struct kvm_cpuid_entry2 *cpuid_find_entry(struct kvm_cpuid2 *cpuid, uint32_t leaf,
					  uint32_t subleaf)
{
	for (uint32_t i = 0; i < cpuid->nent; i++) {
		struct kvm_cpuid_entry2 *e = &cpuid->entries[i];

		if (e->function != leaf)
			continue;
		if ((e->flags & KVM_CPUID_FLAG_SIGNIFCANT_INDEX) && e->index != subleaf)
			continue;
		return e;
	}
	return NULL;
}

static uint32_t *reg_of(struct kvm_cpuid_entry2 *e, enum cpuid_reg reg)
{
	switch (reg) {
	case CPUID_EAX:
		return &e->eax;
	case CPUID_EBX:
		return &e->ebx;
	case CPUID_ECX:
		return &e->ecx;
	default:
		return &e->edx;
	}
}

void cpu_model_apply(const struct cpu_model *model, struct kvm_cpuid2 *cpuid,
		     unsigned vcpu_id)
{
	struct kvm_cpuid_entry2 *e;

	for (unsigned i = 0; i < model->nr_hidden; i++) {
		const struct cpu_feature_mask *m = &model->hidden[i];

		e = cpuid_find_entry(cpuid, m->leaf, m->subleaf);
		if (e)
			*reg_of(e, m->reg) &= ~m->bits;
	}

	/* Tell the guest it runs under a hypervisor: Linux then trusts the
	 * TSC frequency KVM reports and skips slow calibrations. */
	e = cpuid_find_entry(cpuid, 1, 0);
	if (e) {
		e->ecx |= CPUID1_ECX_HYPERVISOR;
		/* Initial APIC ID in EBX[31:24]; one logical CPU per package. */
		e->ebx = (e->ebx & 0x0000ffffu) | (1u << 16) | (vcpu_id << 24);
	}
	/* Topology leaves report the x2APIC ID in EDX for every subleaf. */
	for (uint32_t i = 0; i < cpuid->nent; i++) {
		e = &cpuid->entries[i];
		if (e->function == 0xb || e->function == 0x1f)
			e->edx = vcpu_id;
	}
}
