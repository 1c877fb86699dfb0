/* SPDX-License-Identifier: MIT */
/*
 * Named CPU models: which of the CPUID features KVM can offer the guest
 * actually sees. A model is KVM_GET_SUPPORTED_CPUID minus a documented list
 * of hidden features, each with the reason it is hidden, plus the fix-ups
 * every model gets (hypervisor bit, APIC IDs). See docs/cpu-models.md.
 */
#ifndef ARCH_X86_CPU_MODEL_H
#define ARCH_X86_CPU_MODEL_H

#include <linux/kvm.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum cpuid_reg { CPUID_EAX, CPUID_EBX, CPUID_ECX, CPUID_EDX };

struct cpu_feature_mask {
	uint32_t leaf;
	uint32_t subleaf;   /* ignored unless the leaf is indexed */
	enum cpuid_reg reg;
	uint32_t bits;
	const char *name;   /* feature names as /proc/cpuinfo spells them */
	const char *reason; /* why the model hides it */
};

struct cpu_model {
	const char *name;
	const char *description;
	const struct cpu_feature_mask *hidden;
	unsigned nr_hidden;
	/* Linux parameters a Linux guest needs under this model, and why;
	 * the VMM appends them and says so. NULL for none. */
	const char *linux_params;
	const char *linux_params_reason;
};

/* "auto": nested-pvm on a kvm-pvm host, host everywhere else. */
#define CPU_MODEL_DEFAULT "auto"

/* NULL if no model has that name; "auto" resolves to cpu_model_auto(). */
const struct cpu_model *cpu_model_find(const char *name);
/* The model for this host: nested-pvm when the kvm_pvm module is loaded
 * (its emulator cannot run some instructions), otherwise host. Only the
 * kernel module's presence decides, so no real KVM host is affected. */
const struct cpu_model *cpu_model_auto(void);
/* Whether the host CPU is AMD's (CPUID vendor "AuthenticAMD"). */
bool cpu_host_is_amd(void);

/* Iterates the table: NULL past the end. */
const struct cpu_model *cpu_model_at(unsigned index);

/* Applies `model` and the common fix-ups for vCPU `vcpu_id` in place. */
void cpu_model_apply(const struct cpu_model *model, struct kvm_cpuid2 *cpuid,
		     unsigned vcpu_id);

/* A zeroed table with room for `max_entries` (nent = max_entries); free()
 * it. Entries are reached through cpuid_entry(): C++ lays out the
 * zero-length array in struct kvm_cpuid2 differently from C. */
struct kvm_cpuid2 *cpuid_alloc(unsigned max_entries);
struct kvm_cpuid_entry2 *cpuid_entry(struct kvm_cpuid2 *cpuid, unsigned index);

/* The entry for (leaf, subleaf) or NULL. */
struct kvm_cpuid_entry2 *cpuid_find_entry(struct kvm_cpuid2 *cpuid, uint32_t leaf,
					  uint32_t subleaf);

#ifdef __cplusplus
}
#endif

#endif /* ARCH_X86_CPU_MODEL_H */
