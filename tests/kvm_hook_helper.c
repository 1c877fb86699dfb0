/* SPDX-License-Identifier: MIT */
#include "tests/kvm_hook_helper.h"

#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "arch/x86/boot_cpu.h"
#include "arch/x86/cpu_model.h"
#include "vmm/kvm/kvm_device.h"
#include "vmm/kvm/kvm_traits.h"
#include "vmm/kvm/vcpu.h"
#include "vmm/kvm/vm.h"
#include "vmm/util/error.h"

int khh_get_traits(struct khh_traits *out)
{
	int fd = kvm_device_open();
	struct kvm_traits probed;
	const struct kvm_traits *t = &probed;

	if (fd < 0)
		return -1;
	if (kvm_traits_probe(fd, &probed)) {
		close(fd);
		return -1;
	}
	close(fd);
	memset(out, 0, sizeof(*out));
	out->int3_exits = t->int3_exits;
	out->hw_bp_exits = t->hw_bp_exits;
	out->code_hooks = t->code_hooks;
	out->shutdown_keeps_state = t->shutdown_keeps_state;
	out->int3_exit_ticks = t->int3_exit_ticks;
	memcpy(out->no_int3, t->no_int3, sizeof(out->no_int3));
	memcpy(out->no_hw_bp, t->no_hw_bp, sizeof(out->no_hw_bp));
	memcpy(out->no_code_hooks, t->no_code_hooks, sizeof(out->no_code_hooks));
	return 0;
}

int khh_fresh_ram_is_untouched(uint64_t mem_size)
{
	struct vm vm;
	int untouched = 1;

	if (vm_create(&vm, mem_size))
		return -1;
	for (unsigned r = 0; r < vm.mem.nr_regions; r++)
		for (uint64_t i = 0; i < vm.mem.regions[r].size && untouched; i++)
			untouched = vm.mem.regions[r].host[i] == 0;
	vm_destroy(&vm);
	return untouched;
}

#define CODE 0x100000

static struct khh_hook_run *current_run;

static void on_hook(void *ctx, struct vcpu *vcpu, unsigned slot)
{
	struct kvm_regs regs;

	(void)ctx;
	current_run->handler_calls++;
	if (vcpu_get_regs(vcpu, &regs, NULL) == 0)
		current_run->handler_rip = regs.rip;
	guest_debug_set_hw(vcpu, slot, 0, NULL, NULL);
}

int khh_code_hook_run(int with_site, struct khh_hook_run *r)
{
	static const uint8_t nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	static const uint8_t body[] = {
		0xb8, 0x01, 0x00, 0x00, 0x00, /* mov eax, 1 */
		0x40,			      /* inc eax: the hook covers it and the next */
		0x40,			      /* inc eax */
		0xe6, 0x80,		      /* out 0x80, al */
		0xf4,			      /* hlt */
	};
	uint8_t code[sizeof(nop5) + sizeof(body)], after[sizeof(code)];
	size_t len = 0, body_at;
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	struct vcpu vcpu;
	struct vm vm;
	int ret = -1;

	memset(r, 0, sizeof(*r));
	current_run = r;
	if (with_site) {
		memcpy(code, nop5, sizeof(nop5));
		len = sizeof(nop5);
	}
	body_at = len;
	memcpy(code + len, body, sizeof(body));
	len += sizeof(body);
	if (vm_create(&vm, 4 << 20))
		return -1;
	vm.hooks.on = true; /* as on a KVM without debug-register exits */
	if (vcpu_create(&vcpu, &vm, 0, cpu_model_find("auto")))
		goto out_vm;
	if (guest_mem_write(&vm.mem, CODE, code, len) || vcpu_get_sregs(&vcpu, &sregs) ||
	    boot_cpu_setup_pvh(&vm.mem, CODE, 0, &regs, &sregs) ||
	    vcpu_set_boot_state(&vcpu, &regs, &sregs))
		goto out;
	if (guest_debug_set_hw(&vcpu, 0, CODE + (with_site ? 0 : body_at + 5), on_hook, NULL))
		goto out;
	r->hooked_at = code_hooks_at(&vm, CODE + (with_site ? 0 : body_at + 5));
	for (int exits = 0; exits < 10; exits++) {
		bool fatal;

		if (ioctl(vcpu.fd, KVM_RUN, 0) < 0) {
			et_error_errno("KVM_RUN failed");
			goto out;
		}
		if (vcpu.run->exit_reason != KVM_EXIT_IO) {
			et_error("exit reason %u", vcpu.run->exit_reason);
			goto out;
		}
		if (guest_debug_code_hook_exit(&vcpu, &fatal)) {
			if (fatal)
				goto out;
			continue;
		}
		if (vcpu.run->io.port == 0x80) {
			r->reached_end = 1;
			break;
		}
	}
	if (vcpu_get_regs(&vcpu, &regs, NULL))
		goto out;
	r->eax = (uint32_t)regs.rax;
	guest_mem_read(&vm.mem, CODE, after, len);
	r->bytes_restored = !memcmp(after, code, len);
	ret = 0;
out:
	vcpu_destroy(&vcpu);
out_vm:
	vm_destroy(&vm);
	return ret;
}
