/* SPDX-License-Identifier: MIT */
/*
 * What a run is asked to be: the machine, its kernel and how the run may
 * end. The core's own description, filled in by the commands' option
 * parsing (vmm/cmd/cli.c) or from a libvirt domain (vmm/libvirt/), and
 * read by the machine and the tracer. Like kvmtool's struct kvm_config,
 * it belongs to the core, not to the commands, so nothing that runs a
 * guest includes the command layer; vmm/run/ includes nothing of the
 * VMM's, so every layer may use it.
 */
#ifndef VMM_RUN_OPTIONS_H
#define VMM_RUN_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* --boot: how the kernel is entered (arch/x86/boot/boot.c). */
enum boot_protocol {
	BOOT_AUTO,    /* PVH when the kernel has the note, else Linux 64-bit */
	BOOT_PVH,     /* Xen HVM direct boot: 32-bit, paging off */
	BOOT_LINUX64, /* Linux x86-64 boot protocol: long mode, zero page */
};

#define RUN_DEFAULT_MEM (512ull << 20)

/* --on-panic: what a guest kernel panic does to the run. */
enum panic_action {
	PANIC_ACTION_EXIT = 0,	/* end it (status 3) once the panic output is out */
	PANIC_ACTION_CONTINUE,	/* let the guest go on: it reboots or waits as
				 * its panic= parameter says (status 3 at the end) */
};

struct run_options {
	const char *kernel;
	const char *initrd;
	const char *append;
	const char *symbols; /* --symbols FILE, or NULL */
	uint64_t mem_size;
	unsigned nr_cpus;     /* --cpus N: vCPUs, 1 (default) or more */
	double timeout_s;     /* 0: no timeout */
	const char *cpu_model;
	enum boot_protocol boot;
	bool debug_io;
	enum panic_action on_panic;
	const char *nmi_at;   /* --nmi-at SYMBOL, or NULL */
	bool help;	      /* --help given: print usage, do nothing else */
	bool list_cpu_models; /* --cpu help */
	const char *connect;  /* --connect URI: the libvirt connection, or NULL */
	const char *domain;   /* --domain NAME: a libvirt domain to take the machine from */
	unsigned given;	      /* RUN_GIVEN_*: options set on the command line, which
			       * win over the domain's */
	/* Kernel parameters a command adds for a Linux guest (trace --follow:
	 * the kernel's own tracer), and why, said when they are added. */
	char *extra_params;
	const char *extra_params_why;
};

enum {
	RUN_GIVEN_KERNEL = 1 << 0,
	RUN_GIVEN_INITRD = 1 << 1,
	RUN_GIVEN_APPEND = 1 << 2,
	RUN_GIVEN_MEM = 1 << 3,
	RUN_GIVEN_CPUS = 1 << 4,
};

#ifdef __cplusplus
}
#endif

#endif /* VMM_RUN_OPTIONS_H */
