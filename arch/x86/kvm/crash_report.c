/* SPDX-License-Identifier: MIT */
#include "vmm/kvm/arch.h"

#include <linux/kvm.h>
#include <string.h>

#include "arch/x86/boot_cpu.h"
#include "arch/x86/disasm.h"
#include "arch/x86/page_walk.h"

#define MAX_INSN_BYTES 15

static void exit_details(const struct kvm_run *run, FILE *out)
{
	switch (run->exit_reason) {
	case KVM_EXIT_FAIL_ENTRY:
		fprintf(out, "  hardware entry failure reason 0x%llx\n",
			(unsigned long long)run->fail_entry.hardware_entry_failure_reason);
		break;
	case KVM_EXIT_INTERNAL_ERROR:
		fprintf(out, "  suberror %u%s", run->internal.suberror,
			run->internal.suberror == KVM_INTERNAL_ERROR_EMULATION ? " (emulation failure)"
										: "");
		for (unsigned i = 0; i < run->internal.ndata && i < 16; i++)
			fprintf(out, " data[%u]=0x%llx", i, (unsigned long long)run->internal.data[i]);
		fputc('\n', out);
		break;
	case KVM_EXIT_SHUTDOWN:
	case KVM_EXIT_SYSTEM_EVENT:
		break;
	default:
		fprintf(out, "  exit reason %u\n", run->exit_reason);
		break;
	}
}

static void print_instruction(struct vcpu *vcpu, const struct kvm_regs *r,
			      const struct kvm_sregs *s, FILE *out)
{
	struct arch_paging pg = arch_paging_of(s);
	uint64_t linear = x86_instruction_pointer(s, r), phys;
	uint8_t code[MAX_INSN_BYTES];
	size_t len = MAX_INSN_BYTES;
	char text[160], sym[160];
	const uint8_t *src;

	if (arch_translate(&vcpu->vm->mem, &pg, linear, &phys, NULL)) {
		fprintf(out, "  code: rip 0x%llx is not mapped\n", (unsigned long long)r->rip);
		return;
	}
	/* Stay inside the page: the next one may map elsewhere or nowhere. */
	if (len > 0x1000 - (phys & 0xfff))
		len = 0x1000 - (phys & 0xfff);
	src = guest_mem_ptr(&vcpu->vm->mem, phys, len);
	if (!src) {
		fprintf(out, "  code: rip 0x%llx (phys 0x%llx) is not in guest RAM\n",
			(unsigned long long)r->rip, (unsigned long long)phys);
		return;
	}
	memcpy(code, src, len);
	x86_disasm_one(code, len, r->rip, x86_code_mode(s), text, sizeof(text));
	fprintf(out, "  code: %016llx", (unsigned long long)r->rip);
	if (vcpu->symbolize && vcpu->symbolize(vcpu->symbolize_ctx, r->rip, sym, sizeof(sym)))
		fprintf(out, " <%s>", sym);
	fprintf(out, ": %s   [", text);
	for (size_t i = 0; i < len && i < 8; i++)
		fprintf(out, "%s%02x", i ? " " : "", code[i]);
	fprintf(out, "]\n");
}

static void print_segment(const char *name, const struct kvm_segment *seg, FILE *out)
{
	fprintf(out, "  %-3s sel=%04x base=%016llx limit=%08x type=%x%s%s%s\n", name,
		seg->selector, (unsigned long long)seg->base, seg->limit, seg->type,
		seg->l ? " L" : "", seg->db ? " D" : "", seg->present ? "" : " not-present");
}

void arch_crash_report(struct vcpu *vcpu, const char *what, FILE *out)
{
	if (vcpu->vm && vcpu->vm->nr_vcpus > 1)
		fprintf(out, "earlytrace: guest stopped on vCPU %u: %s\n", vcpu->id, what);
	else
		fprintf(out, "earlytrace: guest stopped: %s\n", what);
	exit_details(vcpu->run, out);
	arch_show_vcpu_state(vcpu, out);
}

void arch_show_vcpu_state(struct vcpu *vcpu, FILE *out)
{
	struct kvm_regs r;
	struct kvm_sregs s;

	if (vcpu_get_regs(vcpu, &r, &s) < 0) {
		fprintf(out, "  (registers unavailable)\n");
		return;
	}
	fprintf(out, "  rip=%016llx rflags=%016llx mode=%d-bit\n", (unsigned long long)r.rip,
		(unsigned long long)r.rflags, (int)x86_code_mode(&s));
	fprintf(out, "  rax=%016llx rbx=%016llx rcx=%016llx rdx=%016llx\n",
		(unsigned long long)r.rax, (unsigned long long)r.rbx, (unsigned long long)r.rcx,
		(unsigned long long)r.rdx);
	fprintf(out, "  rsi=%016llx rdi=%016llx rbp=%016llx rsp=%016llx\n",
		(unsigned long long)r.rsi, (unsigned long long)r.rdi, (unsigned long long)r.rbp,
		(unsigned long long)r.rsp);
	fprintf(out, "  r8 =%016llx r9 =%016llx r10=%016llx r11=%016llx\n",
		(unsigned long long)r.r8, (unsigned long long)r.r9, (unsigned long long)r.r10,
		(unsigned long long)r.r11);
	fprintf(out, "  r12=%016llx r13=%016llx r14=%016llx r15=%016llx\n",
		(unsigned long long)r.r12, (unsigned long long)r.r13, (unsigned long long)r.r14,
		(unsigned long long)r.r15);
	fprintf(out, "  cr0=%016llx cr2=%016llx cr3=%016llx cr4=%016llx efer=%llx\n",
		(unsigned long long)s.cr0, (unsigned long long)s.cr2, (unsigned long long)s.cr3,
		(unsigned long long)s.cr4, (unsigned long long)s.efer);
	print_segment("cs", &s.cs, out);
	print_segment("ss", &s.ss, out);
	fprintf(out, "  gdt=%016llx/%04x idt=%016llx/%04x\n", (unsigned long long)s.gdt.base,
		s.gdt.limit, (unsigned long long)s.idt.base, s.idt.limit);
	print_instruction(vcpu, &r, &s, out);
}
