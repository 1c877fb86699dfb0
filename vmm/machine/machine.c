/* SPDX-License-Identifier: MIT */
/*
 * The virtual machine earlytrace builds for a kernel: the KVM VM and its
 * vCPU, the devices, the loaded kernel and its symbols. Commands create
 * one from their options, may attach a tracer, run it, and destroy it.
 * Its parts with a job of their own: the application processors' threads
 * (aps.c), the signals and --timeout (signals.c), the
 * periodic work thread (ticker.c).
 */
#include "vmm/machine/machine.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch/arch.h"
#include "earlytrace/abi.h"
#include "vmm/kvm/arch.h"
#include "vmm/kvm/run_loop.h"
#include "vmm/loader/initrd.h"
#include "vmm/machine/aps.h"
#include "vmm/machine/signals.h"
#include "vmm/machine/ticker.h"
#include "vmm/util/error.h"

static const char *symbolize(void *ctx, uint64_t addr, char *buf, size_t len)
{
	return symtab_format(&((struct symbols *)ctx)->tab, addr, buf, len);
}

/* Appends params that `cmdline` does not have yet, and says so. */
static char *add_params(char *cmdline, const char *params, const char *why)
{
	char *added = NULL, *out;

	if (!params)
		return cmdline;
	out = cmdline_append_params(cmdline, params, &added);
	free(cmdline);
	if (!out) {
		et_error("out of memory");
		return NULL;
	}
	if (added && added[0])
		et_warn("added '%s' to the kernel command line: %s", added, why);
	free(added);
	return out;
}

/* The user's command line plus what the CPU model needs Linux to know and
 * what the command asked for. */
static char *effective_cmdline(const struct machine *m, const struct cpu_model *model,
			       const struct run_options *o)
{
	char why[256], *cmdline = strdup(o->append ? o->append : "");

	if (!cmdline) {
		et_error("out of memory");
		return NULL;
	}
	if (!m->kernel.is_linux)
		return cmdline;
	snprintf(why, sizeof(why), "CPU model %s: %s", model->name,
		 model->linux_params_reason ? model->linux_params_reason : "");
	cmdline = add_params(cmdline, model->linux_params, why);
	return cmdline ? add_params(cmdline, o->extra_params, o->extra_params_why) : NULL;
}

/*
 * A command line longer than the kernel takes would be cut by the guest
 * without a word: refuse it, naming the limit, and when earlytrace's own
 * additions are what pushes it over, say so and how many bytes they are.
 */
static int check_cmdline_length(const struct machine *m, const struct run_options *o,
				const char *cmdline)
{
	const char *source;
	size_t max = boot_cmdline_max(&m->kernel, &source);
	size_t len = strlen(cmdline), user = o->append ? strlen(o->append) : 0;

	if (len <= max)
		return 0;
	if (user > max)
		return et_error("--append: the kernel command line is %zu bytes; this kernel takes "
				"at most %zu (%s)",
				user, max, source);
	return et_error("--append: %zu bytes, with the %zu earlytrace adds (see above), make a "
			"%zu-byte command line; this kernel takes at most %zu (%s): shorten "
			"--append by %zu bytes",
			user, len - user, len, max, source, len - max);
}

/* Where a breakpoint's address is for a code hook: the kernel's own
 * addresses, before the guest maps them (vmm/kvm/code_hook.h). */
static bool kernel_vaddr_to_paddr(void *ctx, uint64_t vaddr, uint64_t *paddr)
{
	return kernel_image_vaddr_to_paddr(ctx, vaddr, ARCH_CODE_HOOK_LEN, paddr);
}

/* protocol: resolved already (boot_choose_protocol()). */
static int load_guest(struct machine *m, const struct run_options *o,
		      const struct cpu_model *model, enum boot_protocol protocol)
{
	struct boot_request boot = { .protocol = protocol };
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	char *cmdline;
	int ret;

	if (kernel_image_load(&m->kernel, &m->vm.mem))
		return -1;
	m->vm.hooks.translate = kernel_vaddr_to_paddr;
	m->vm.hooks.translate_ctx = &m->kernel;
	if (o->initrd && initrd_load(&m->vm.mem, o->initrd, m->kernel.phys_end,
				     &boot.initrd_paddr, &boot.initrd_size))
		return -1;
	boot.acpi_rsdp = boot_write_firmware_tables(&m->vm.mem, m->nr_cpus);
	if (!boot.acpi_rsdp || arch_install_reset_code(&m->vm.mem))
		return -1;
	if (vcpu_get_sregs(&m->vcpu, &sregs))
		return et_error_errno("KVM_GET_SREGS failed");
	cmdline = effective_cmdline(m, model, o);
	if (!cmdline)
		return -1;
	if (check_cmdline_length(m, o, cmdline)) {
		free(cmdline);
		return -1;
	}
	boot.cmdline = cmdline;
	ret = boot_prepare(&m->vm.mem, &m->kernel, &boot, &regs, &sregs);
	free(cmdline);
	return ret ? ret : vcpu_set_boot_state(&m->vcpu, &regs, &sregs);
}

/*
 * Symbols name code in crash reports and locate panic(). A kernel without
 * any symbol source still runs; a --symbols file that does not match it
 * is an error, as everywhere.
 */
static int load_symbols(struct machine *m, const struct run_options *o)
{
	if (symbols_load(&m->symbols, &m->kernel, o->symbols)) {
		if (o->symbols)
			return -1;
		symbols_free(&m->symbols);
		memset(&m->symbols, 0, sizeof(m->symbols));
		return 0;
	}
	return panic_watch_start(m);
}

/* After a panic, however the run ended: what the user sees. */
static void report_panic(struct machine *m)
{
	char how[160], msg[PANIC_MESSAGE_MAX + 4] = "";

	if (m->panic.message[0])
		snprintf(msg, sizeof(msg), ": \"%s\"", m->panic.message);
	if (vm_stop_reason(&m->vm) == RUN_END_GUEST_PANIC)
		et_warn("the guest kernel panicked%s; the run ends after its panic output "
			"(--on-panic exit)", msg);
	else
		et_warn("the guest kernel panicked%s; then %s", msg,
			vm_stop_describe(&m->vm, how, sizeof(how)));
}

static int exit_status_for(struct machine *m, double timeout_s)
{
	enum run_end reason = vm_stop_reason(&m->vm);
	int status = vm_stop_status(&m->vm);
	char how[192];

	/* A panic is the root cause however the guest ended after it
	 * (panic=-1 reboots, panic=0 waits until --timeout). */
	if (m->panic.panicked) {
		report_panic(m);
		return EXIT_STATUS_GUEST_PANIC;
	}

	switch (reason) {
	case RUN_END_TIMEOUT:
		et_warn("guest still running after %g s (--timeout)",
			timeout_s);
		break;
	case RUN_END_SIGNAL:
		et_warn("stopped by signal %d (%s)", vm_stop_value(&m->vm),
			machine_signal_describe(vm_stop_value(&m->vm)));
		break;
	case RUN_END_HALTED:
		et_warn("guest halted with nothing to wake it");
		break;
	case RUN_END_RESET:
	case RUN_END_POWER_OFF:
		et_warn("%s", vm_stop_describe(&m->vm, how, sizeof(how)));
		break;
	default:
		break;
	}
	return status;
}

int machine_create(struct machine *m, const struct run_options *o)
{
	enum boot_protocol protocol;

	memset(m, 0, sizeof(*m));
	m->vcpu.fd = -1;
	m->nr_cpus = 1;
	pthread_mutex_init(&m->kick_lock, NULL); /* a plain mutex: nothing to destroy */
	m->vm.vm_fd = m->vm.kvm_fd = -1;
	m->opts = o;
	m->model = cpu_model_find(o->cpu_model);

	if (kernel_image_open(&m->kernel, o->kernel))
		return -1;
	/* Refuse a kernel we cannot boot before touching KVM. */
	if (boot_choose_protocol(&m->kernel, o->boot, &protocol))
		goto fail;
	if (vm_create(&m->vm, o->mem_size))
		goto fail;
	if (vcpu_create(&m->vcpu, &m->vm, 0, m->model) || machine_create_aps(m, o))
		goto fail;
	if (arch_devices_attach(&m->devices, &m->vm, &m->uart, STDOUT_FILENO) || load_guest(m, o, m->model, protocol) || load_symbols(m, o) ||
	    nmi_at_start(m))
		goto fail;
	for (unsigned i = 0; i < m->nr_cpus; i++) {
		struct vcpu *v = machine_vcpu(m, i);

		v->symbolize = symbolize;
		v->symbolize_ctx = &m->symbols;
		v->debug_io = o->debug_io;
	}
	return 0;
fail:
	machine_destroy(m);
	return -1;
}

static void kick_from_vm(void *ctx, struct vcpu *vcpu)
{
	machine_kick_vcpu(ctx, vcpu);
}

int machine_run(struct machine *m)
{
	int status = EXIT_STATUS_ERROR;

	machine_signals_install(m, m->opts->timeout_s);
	m->run_thread = pthread_self();
	m->vm.exit_lock_on = m->nr_cpus > 1;
	m->vm.kick = kick_from_vm;
	m->vm.kick_ctx = m;
	atomic_store(&m->running, true);
	if (console_start(&m->console, &m->uart, &m->vm, MACHINE_KICK_SIGNAL) == 0 &&
	    machine_start_aps(m) == 0) {
		bool ok = vcpu_run(&m->vcpu) == 0;

		machine_stop_aps(m);
		console_stop(&m->console);
		/* The reset vector's code resets through the reset control
		 * register: name the path the kernel took. */
		if (vm_stop_reason(&m->vm) == RUN_END_RESET && arch_runs_reset_code(&m->vcpu))
			vm_set_stop_detail(&m->vm, "BIOS reset vector");
		if (ok)
			status = exit_status_for(m, m->opts->timeout_s);
		else
			et_print_error();
	} else {
		vm_request_stop(&m->vm, RUN_END_VMM_ERROR);
		machine_stop_aps(m);
		console_stop(&m->console);
		et_print_error();
	}
	/* Every vCPU has stopped: the guest's code as it was, and a word on
	 * any hook the guest had overwritten. */
	code_hooks_remove_all(&m->vm);
	machine_ticker_stop(m);
	pthread_mutex_lock(&m->kick_lock);
	atomic_store(&m->running, false);
	pthread_mutex_unlock(&m->kick_lock);
	m->vm.kick = NULL;
	machine_signals_remove();
	return status;
}

void machine_destroy(struct machine *m)
{
	machine_ticker_stop(m);
	symbols_free(&m->symbols);
	for (unsigned i = 1; i < m->nr_cpus; i++)
		if (m->aps[i - 1].fd >= 0)
			vcpu_destroy(&m->aps[i - 1]);
	free(m->aps);
	free(m->ap_threads);
	m->aps = NULL;
	m->ap_threads = NULL;
	m->nr_cpus = 1;
	if (m->vcpu.fd >= 0)
		vcpu_destroy(&m->vcpu);
	arch_devices_destroy(m->devices);
	m->devices = NULL;
	if (m->vm.kvm_fd >= 0)
		vm_destroy(&m->vm);
	kernel_image_close(&m->kernel);
}

int machine_release_image(struct machine *m)
{
	if (symbols_keep_functions(&m->symbols))
		return -1;
	kernel_image_release_data(&m->kernel);
	malloc_trim(0); /* give the freed heap back, not just to malloc */
	return 0;
}
