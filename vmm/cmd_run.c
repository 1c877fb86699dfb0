/* SPDX-License-Identifier: MIT */
/*
 * `earlytrace run`: parse options, load the kernel, build the machine, run
 * the vCPU until something stops it, and turn the reason into an exit
 * status. Each step lives in its own module; this file only sequences them.
 */
#include "vmm/cmd_run.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <unistd.h>

#include "arch/x86/boot_cpu.h"
#include "arch/x86/cpu_model.h"
#include "arch/x86/layout.h"
#include "earlytrace/abi.h"
#include "vmm/boot/boot.h"
#include "vmm/boot/cmdline.h"
#include "vmm/cli.h"
#include "vmm/console.h"
#include "vmm/error.h"
#include "vmm/hw/debug_exit.h"
#include "vmm/hw/i8042.h"
#include "vmm/hw/serial8250.h"
#include "vmm/loader/initrd.h"
#include "vmm/loader/kernel_image.h"
#include "vmm/symbols/symbols.h"
#include "vmm/vcpu.h"
#include "vmm/vm.h"

#define COM1_IRQ 4
#define KICK_SIGNAL SIGUSR1

struct machine {
	struct vm vm;
	struct vcpu vcpu;
	struct serial8250 com1;
	struct i8042 kbc;
	struct debug_exit debug_exit;
	struct console console;
	struct kernel_image kernel;
	struct symbols symbols;
};

/* The machine the signal handlers act on; one run per process. */
static struct machine *signal_target;

static void on_stop_signal(int sig)
{
	struct machine *m = signal_target;

	if (!m)
		return;
	vm_request_stop(&m->vm, sig == SIGALRM ? VM_STOP_TIMEOUT : VM_STOP_SIGNAL,
			sig == SIGALRM ? EXIT_STATUS_TIMEOUT : EXIT_STATUS_SIGNAL_BASE + sig);
	vcpu_kick(&m->vcpu);
}

static void on_kick_signal(int sig)
{
	(void)sig;
	if (signal_target)
		vcpu_kick(&signal_target->vcpu);
}

static void install_signals(struct machine *m, double timeout_s)
{
	/* No SA_RESTART: the point is to interrupt KVM_RUN. */
	struct sigaction stop = { .sa_handler = on_stop_signal };
	struct sigaction kick = { .sa_handler = on_kick_signal };

	signal_target = m;
	sigaction(SIGINT, &stop, NULL);
	sigaction(SIGTERM, &stop, NULL);
	sigaction(SIGHUP, &stop, NULL);
	sigaction(SIGALRM, &stop, NULL);
	sigaction(KICK_SIGNAL, &kick, NULL);
	if (timeout_s > 0) {
		struct itimerval t = { .it_value = {
					       .tv_sec = (time_t)timeout_s,
					       .tv_usec = (suseconds_t)((timeout_s - (time_t)timeout_s) * 1e6),
				       } };

		if (!t.it_value.tv_sec && !t.it_value.tv_usec)
			t.it_value.tv_usec = 1;
		setitimer(ITIMER_REAL, &t, NULL);
	}
}

static void remove_signals(void)
{
	struct itimerval off = { 0 };

	setitimer(ITIMER_REAL, &off, NULL);
	signal(SIGALRM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(KICK_SIGNAL, SIG_DFL);
	signal_target = NULL;
}

static void com1_irq(void *ctx, int level)
{
	vm_set_irq_line(ctx, COM1_IRQ, level);
}

static const char *symbolize(void *ctx, uint64_t addr, char *buf, size_t len)
{
	return symtab_format(&((struct symbols *)ctx)->tab, addr, buf, len);
}

static int attach_devices(struct machine *m)
{
	struct vm *vm = &m->vm;

	serial8250_init(&m->com1, STDOUT_FILENO, com1_irq, vm);
	i8042_init(&m->kbc, vm_request_stop, vm);
	m->debug_exit = (struct debug_exit){ .stop = vm_request_stop, .vm = vm };

	if (iobus_register(&vm->bus, IOBUS_PIO, ET_PORT_COM1, SERIAL8250_NR_REGS,
			   serial8250_io, &m->com1, "com1") ||
	    iobus_register(&vm->bus, IOBUS_PIO, ET_PORT_I8042_DATA, 1, i8042_data_io, &m->kbc,
			   "i8042") ||
	    iobus_register(&vm->bus, IOBUS_PIO, ET_PORT_I8042_CMD, 1, i8042_cmd_io, &m->kbc,
			   "i8042") ||
	    iobus_register(&vm->bus, IOBUS_PIO, ET_PORT_DEBUG_EXIT, 4, debug_exit_io,
			   &m->debug_exit, "debug-exit"))
		return -1;
	return 0;
}

/* The user's command line plus what the CPU model needs Linux to know. */
static char *effective_cmdline(const struct machine *m, const struct cpu_model *model,
			       const char *user)
{
	char *added = NULL, *cmdline;
	const char *params = m->kernel.is_linux ? model->linux_params : NULL;

	cmdline = cmdline_append_params(user, params, &added);
	if (!cmdline) {
		et_error("out of memory");
		return NULL;
	}
	if (added && added[0])
		fprintf(stderr, "earlytrace: added '%s' to the kernel command line: CPU model %s: %s\n",
			added, model->name, model->linux_params_reason);
	free(added);
	return cmdline;
}

static int load_guest(struct machine *m, const struct run_options *o,
		      const struct cpu_model *model)
{
	struct boot_request boot = { .protocol = o->boot };
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	char *cmdline;
	int ret;

	if (boot_choose_protocol(&m->kernel, o->boot, &boot.protocol) ||
	    kernel_image_load(&m->kernel, &m->vm.mem))
		return -1;
	if (o->initrd && initrd_load(&m->vm.mem, o->initrd, m->kernel.phys_end,
				     &boot.initrd_paddr, &boot.initrd_size))
		return -1;
	if (ioctl(m->vcpu.fd, KVM_GET_SREGS, &sregs) < 0)
		return et_error_errno("KVM_GET_SREGS failed");
	cmdline = effective_cmdline(m, model, o->append);
	if (!cmdline)
		return -1;
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
	uint64_t panic_addr;

	if (symbols_load(&m->symbols, &m->kernel, o->symbols)) {
		if (o->symbols)
			return -1;
		symbols_free(&m->symbols);
		memset(&m->symbols, 0, sizeof(m->symbols));
		return 0;
	}
	if (symbols_addr(&m->symbols, "panic", &panic_addr) == 0)
		return vcpu_watch_panic(&m->vcpu, panic_addr);
	return 0;
}

static int exit_status_for(struct machine *m, double timeout_s)
{
	enum vm_stop_reason reason = vm_stop_reason(&m->vm);
	int status = vm_stop_status(&m->vm);

	/* A panic is the root cause however the guest ended after it
	 * (panic=-1 reboots, panic=0 hangs until --timeout). */
	if (m->vcpu.guest_panicked) {
		fprintf(stderr, "earlytrace: the guest kernel panicked (%s after it)\n",
			vm_stop_reason_name(reason));
		return EXIT_STATUS_GUEST_PANIC;
	}

	switch (reason) {
	case VM_STOP_TIMEOUT:
		fprintf(stderr, "earlytrace: guest still running after %g s (--timeout)\n",
			timeout_s);
		break;
	case VM_STOP_SIGNAL:
		fprintf(stderr, "earlytrace: stopped by signal %d\n",
			status - EXIT_STATUS_SIGNAL_BASE);
		break;
	case VM_STOP_HALTED:
		fprintf(stderr, "earlytrace: guest halted with nothing to wake it\n");
		break;
	default:
		break;
	}
	return status;
}

/* Returns the exit status; prints the one-line error when setup fails. */
static int run_machine(struct machine *m, const struct run_options *o)
{
	const struct cpu_model *model = cpu_model_find(o->cpu_model);
	enum boot_protocol protocol;
	int status = EXIT_STATUS_ERROR;
	bool ready = false;

	if (kernel_image_open(&m->kernel, o->kernel))
		goto report;
	/* Refuse a kernel we cannot boot before touching KVM. */
	if (boot_choose_protocol(&m->kernel, o->boot, &protocol))
		goto out_kernel;
	if (vm_create(&m->vm, o->mem_size))
		goto out_kernel;
	if (vcpu_create(&m->vcpu, &m->vm, 0, model))
		goto out_vm;
	if (attach_devices(m) || load_guest(m, o, model) || load_symbols(m, o))
		goto out_vcpu;
	m->vcpu.symbolize = symbolize;
	m->vcpu.symbolize_ctx = &m->symbols;
	m->vcpu.debug_io = o->debug_io;

	install_signals(m, o->timeout_s);
	if (console_start(&m->console, &m->com1, &m->vm, KICK_SIGNAL) == 0) {
		ready = vcpu_run(&m->vcpu) == 0;
		console_stop(&m->console);
		if (ready)
			status = exit_status_for(m, o->timeout_s);
	}
	remove_signals();
out_vcpu:
	symbols_free(&m->symbols);
	vcpu_destroy(&m->vcpu);
	serial8250_destroy(&m->com1);
out_vm:
	vm_destroy(&m->vm);
out_kernel:
	kernel_image_close(&m->kernel);
report:
	if (!ready)
		fprintf(stderr, "earlytrace: %s\n", et_last_error());
	return status;
}

static void list_cpu_models(void)
{
	const struct cpu_model *model;

	for (unsigned i = 0; (model = cpu_model_at(i)) != NULL; i++) {
		printf("%-12s %s%s\n", model->name, model->description,
		       model == cpu_model_auto() ? " (auto picks it on this host)" : "");
		for (unsigned j = 0; j < model->nr_hidden; j++)
			printf("             hides %s: %s\n", model->hidden[j].name,
			       model->hidden[j].reason);
		if (model->linux_params)
			printf("             adds '%s' for Linux guests: %s\n", model->linux_params,
			       model->linux_params_reason);
	}
}

int cmd_run(int argc, char **argv)
{
	static struct machine machine;
	struct run_options opts;

	et_clear_error();
	if (cli_parse_run(argc, argv, &opts)) {
		fprintf(stderr, "earlytrace: %s\n", et_last_error());
		return EXIT_STATUS_ERROR;
	}
	if (opts.help) {
		fputs(cli_run_usage, stdout);
		return 0;
	}
	if (opts.list_cpu_models) {
		list_cpu_models();
		return 0;
	}
	memset(&machine, 0, sizeof(machine));
	machine.vcpu.fd = -1;
	return run_machine(&machine, &opts);
}
