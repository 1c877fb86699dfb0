/* SPDX-License-Identifier: MIT */
#include "exitseq.h"

#include <stdint.h>

#include <arch/x86/layout.h>
#include <arch/x86/pc_ports.h>

#include "compiler.h"
#include "io.h"
#include "print.h"
#include "uart.h"

#define ES_MSR_SYSENTER_CS 0x174  /* any KVM keeps it, and any value fits */

static inline void wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)));
}

static inline uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;

	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return lo | (uint64_t)hi << 32;
}

__traced_fn static void es_port(void)
{
	outb(PC_PORT_POST, 0x11);		 /* nobody decodes it */
	(void)inb(PC_PORT_COM1 + UART_LSR); /* the UART, in the VMM */
}

__traced_fn static void es_mmio(void)
{
	volatile uint32_t *mmio = (volatile uint32_t *)(uintptr_t)LAYOUT_UNCLAIMED_MMIO;

	mmio[0] = 0x12345678;
	(void)mmio[1];
}

__traced_fn static uint64_t es_msr(void)
{
	wrmsr(ES_MSR_SYSENTER_CS, 0x10);
	return rdmsr(ES_MSR_SYSENTER_CS);
}

void exitseq_run(void)
{
	uint64_t msr;

	es_port();
	es_mmio();
	msr = es_msr();
	print_str("exits: sequence done msr=");
	print_hex(msr);
	print_str("\n");
}
