/* SPDX-License-Identifier: MIT */
#include "reset.h"

#include <arch/x86/pc_ports.h>
#include <stdbool.h>
#include <stdint.h>

#include "io.h"
#include "machine.h"
#include "phys.h"
#include "print.h"

/* Where a PC's RSDP may be: the BIOS area, on a 16-byte boundary. */
#define BIOS_AREA_START 0xe0000
#define BIOS_AREA_END 0x100000
#define SDT_HEADER 36
/* FADT fields (ACPI 6.x, table 5.9), as byte offsets. */
#define FADT_FLAGS 112
#define FADT_RESET_REG 116
#define FADT_RESET_VALUE 128
#define FADT_FLAG_RESET_REG_SUP (1u << 10)
#define GAS_SYSTEM_IO 1

static uint32_t get32(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return get32(p) | (uint64_t)get32(p + 4) << 32;
}

static bool sums_to_zero(const uint8_t *p, uint32_t len)
{
	uint8_t sum = 0;

	for (uint32_t i = 0; i < len; i++)
		sum = (uint8_t)(sum + p[i]);
	return sum == 0;
}

static bool same(const uint8_t *p, const char *sig, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (p[i] != (uint8_t)sig[i])
			return false;
	return true;
}

static const uint8_t *find_rsdp(void)
{
	for (uint64_t pa = BIOS_AREA_START; pa < BIOS_AREA_END; pa += 16) {
		const uint8_t *p = phys_ptr(pa, 36);

		if (p && same(p, "RSD PTR ", 8) && sums_to_zero(p, 20))
			return p;
	}
	return 0;
}

/* A table's header, when it is in reach and its length is sane. */
static const uint8_t *table_at(uint64_t pa)
{
	const uint8_t *t = phys_ptr(pa, SDT_HEADER);

	if (!t || get32(t + 4) < SDT_HEADER || !phys_ptr(pa, get32(t + 4)))
		return 0;
	return t;
}

/* The FADT through the XSDT (ACPI 2+), else the RSDT. */
static const uint8_t *find_fadt(void)
{
	const uint8_t *rsdp = find_rsdp(), *root;
	unsigned entry;

	if (!rsdp)
		return 0;
	if (rsdp[15] >= 2 && get64(rsdp + 24)) {
		root = table_at(get64(rsdp + 24));
		entry = 8;
	} else {
		root = table_at(get32(rsdp + 16));
		entry = 4;
	}
	if (!root)
		return 0;
	for (uint32_t off = SDT_HEADER; off + entry <= get32(root + 4); off += entry) {
		uint64_t pa = entry == 8 ? get64(root + off) : get32(root + off);
		const uint8_t *t = table_at(pa);

		if (t && same(t, "FACP", 4))
			return t;
	}
	return 0;
}

/* Linux's acpi_reboot(): a FADT of revision 2 or later whose flags say
 * the reset register is there; only I/O ports here. False when there is
 * none. */
static bool reset_acpi(void)
{
	const uint8_t *fadt = find_fadt();
	uint64_t port;

	if (!fadt || get32(fadt + 4) <= FADT_RESET_VALUE || fadt[8] < 2 ||
	    !(get32(fadt + FADT_FLAGS) & FADT_FLAG_RESET_REG_SUP) ||
	    fadt[FADT_RESET_REG] != GAS_SYSTEM_IO) {
		print_line("reset: acpi: no reset register in an I/O port");
		return false;
	}
	port = get64(fadt + FADT_RESET_REG + 4);
	print_str("reset: acpi register=");
	print_hex(port);
	print_str(" value=");
	print_hex(fadt[FADT_RESET_VALUE]);
	print_str("\n");
	outb((uint16_t)port, fadt[FADT_RESET_VALUE]);
	return true;
}

/* Linux's BOOT_CF9: pick a hard reset, then set RST_CPU. */
static void reset_cf9(void)
{
	print_line("reset: cf9");
	outb(PC_PORT_RESET_CONTROL, PC_RESET_CONTROL_SYS);
	outb(PC_PORT_RESET_CONTROL, PC_RESET_CONTROL_VALUE);
}

/* Linux's BOOT_TRIPLE: idt_invalidate(), then int3. */
static void reset_triple(void)
{
	static const struct {
		uint16_t limit;
		uintptr_t base;
	} __attribute__((packed)) empty_idt = { 0, 0 };

	print_line("reset: triple");
	__asm__ volatile("lidt %0; int3" : : "m"(empty_idt));
}

void reset_machine(enum reset_method how)
{
	switch (how) {
	case RESET_KBD:
		print_line("reset: kbd");
		machine_reboot_kbd();
	case RESET_BIOS:
		print_line("reset: bios");
		reset_bios();
	case RESET_ACPI:
		if (!reset_acpi())
			return;
		break;
	case RESET_CF9:
		reset_cf9();
		break;
	case RESET_TRIPLE:
		reset_triple();
		break;
	case RESET_NONE:
		return;
	}
	/* Only if the VMM went on after the reset. */
	for (;;)
		__asm__ volatile("pause");
}
