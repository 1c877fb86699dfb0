/* SPDX-License-Identifier: MIT */
#include "arch/x86/boot/acpi.h"

#include <string.h>

#include "arch/x86/layout.h"
#include "arch/x86/pc_ports.h"
#include "vmm/util/error.h"

/* Where each table goes inside LAYOUT_ACPI_TABLES (the BIOS area the
 * memory map reserves; the RSDP is 16-byte aligned there, where a kernel
 * scanning for it looks too). */
#define RSDP_OFF 0x000
#define XSDT_OFF 0x040
#define FADT_OFF 0x080
#define DSDT_OFF 0x200
#define MADT_OFF 0x300

#define SDT_HEADER 36
#define RSDP_LEN 36
#define FADT_LEN 276 /* ACPI 6 */
#define FADT_FLAG_RESET_REG_SUP (1u << 10)
#define FADT_FLAG_HW_REDUCED (1u << 20)
#define BOOT_ARCH_8042 (1u << 1)
#define BOOT_ARCH_NO_VGA (1u << 2)
#define BOOT_ARCH_NO_CMOS_RTC (1u << 5)
#define GAS_SYSTEM_IO 1
#define GAS_ACCESS_BYTE 1

/*
 * The DSDT, in AML:
 *
 *   Name (_S5, Package (4) { 5, 5, 0, 0 })
 *   Scope (\_SB) {
 *       Device (COM1) {
 *           Name (_HID, EisaId ("PNP0501"))
 *           Name (_UID, 1)
 *           Name (_CRS, ResourceTemplate () {
 *               IO (Decode16, 0x3f8, 0x3f8, 0, 8)
 *               IRQNoFlags () { 4 }
 *           })
 *       }
 *   }
 *
 * COM1 is there for its interrupt, as in QEMU's microvm and Firecracker:
 * a hardware-reduced FADT tells Linux there is no 8259, so it maps no ISA
 * interrupt by default, and the UART's IRQ 4 reaches a driver only
 * through a device that names it (8250_pnp takes the port over from the
 * legacy one, with the I/O APIC pin the MADT gives GSI 4). Without it
 * /dev/console cannot open and user space starts with no stdio.
 */
static const uint8_t dsdt_aml[] = {
	0x08, '_', 'S', '5', '_',	/* NameOp "_S5_" */
	0x12, 0x08, 0x04,		/* PackageOp, PkgLength 8, 4 elements */
	0x0a, ACPI_SLEEP_TYPE_S5,	/* BytePrefix 5: SLP_TYPa */
	0x0a, ACPI_SLEEP_TYPE_S5,	/* BytePrefix 5: SLP_TYPb */
	0x00, 0x00,			/* reserved */
	0x10, 0x32, '_', 'S', 'B', '_', /* ScopeOp, PkgLength 50, "_SB_" */
	0x5b, 0x82, 0x2b, 'C', 'O', 'M', '1', /* DeviceOp, PkgLength 43, "COM1" */
	0x08, '_', 'H', 'I', 'D',	/* NameOp "_HID" */
	0x0c, 0x41, 0xd0, 0x05, 0x01,	/* DWordPrefix: EisaId ("PNP0501") */
	0x08, '_', 'U', 'I', 'D', 0x01, /* NameOp "_UID", OneOp */
	0x08, '_', 'C', 'R', 'S',	/* NameOp "_CRS" */
	0x11, 0x10, 0x0a, 0x0d,		/* BufferOp, PkgLength 16, 13 bytes */
	0x47, 0x01,			/* IO descriptor, 16-bit decode */
	PC_PORT_COM1 & 0xff, PC_PORT_COM1 >> 8, /* minimum */
	PC_PORT_COM1 & 0xff, PC_PORT_COM1 >> 8, /* maximum */
	0x00, 0x08,			/* alignment, 8 ports */
	0x22, 1u << PC_IRQ_COM1, 0x00,	/* IRQ descriptor (no flags): IRQ 4 */
	0x79, 0x00,			/* end tag, no checksum */
};

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

/* Every byte of a table, the checksum included, sums to 0. */
static uint8_t checksum(const uint8_t *p, size_t len)
{
	uint8_t sum = 0;

	for (size_t i = 0; i < len; i++)
		sum = (uint8_t)(sum + p[i]);
	return (uint8_t)-sum;
}

static void sdt_header(uint8_t *t, const char *sig, uint32_t len, uint8_t rev)
{
	memcpy(t, sig, 4);
	put32(t + 4, len);
	t[8] = rev;
	memcpy(t + 10, "ETRACE", 6);	/* OEM ID */
	memcpy(t + 16, "EARLYTRC", 8);	/* OEM table ID */
	put32(t + 24, 1);		/* OEM revision */
	memcpy(t + 28, "ETRC", 4);	/* creator ID */
	put32(t + 32, 1);		/* creator revision */
}

/* A Generic Address Structure naming one I/O port, byte access. */
static void gas_port(uint8_t *g, uint16_t port)
{
	g[0] = GAS_SYSTEM_IO;
	g[1] = 8; /* bit width */
	g[2] = 0; /* bit offset */
	g[3] = GAS_ACCESS_BYTE;
	put64(g + 4, port);
}

#define MADT_FLAG_PCAT_COMPAT 1u /* an 8259 pair is there too */
#define MADT_LOCAL_APIC 0
#define MADT_IO_APIC 1
#define MADT_INT_OVERRIDE 2
#define MADT_LAPIC_ENABLED 1u

/* The MADT for nr_cpus vCPUs; returns its length. */
static uint32_t write_madt(uint8_t *madt, unsigned nr_cpus)
{
	uint8_t *e = madt + SDT_HEADER + 8;
	uint32_t len;

	put32(madt + SDT_HEADER, LAYOUT_LOCAL_APIC);
	put32(madt + SDT_HEADER + 4, MADT_FLAG_PCAT_COMPAT);
	for (unsigned i = 0; i < nr_cpus; i++, e += 8) {
		e[0] = MADT_LOCAL_APIC;
		e[1] = 8;
		e[2] = (uint8_t)i; /* ACPI processor UID */
		e[3] = (uint8_t)i; /* APIC id: vcpu_create()'s id */
		put32(e + 4, MADT_LAPIC_ENABLED);
	}
	e[0] = MADT_IO_APIC;
	e[1] = 12;
	e[2] = (uint8_t)nr_cpus; /* its id, after the CPUs' */
	put32(e + 4, LAYOUT_IO_APIC);
	put32(e + 8, 0); /* GSI base */
	e += 12;
	e[0] = MADT_INT_OVERRIDE;
	e[1] = 10;
	e[2] = 0;	    /* ISA bus */
	e[3] = 0;	    /* IRQ 0, the PIT... */
	put32(e + 4, 2); /* ...on the I/O APIC's pin 2, as on every PC */
	put16(e + 8, 0); /* the bus's polarity and trigger */
	e += 10;
	len = (uint32_t)(e - madt);
	sdt_header(madt, "APIC", len, 4);
	madt[9] = checksum(madt, len);
	return len;
}

uint64_t acpi_write_tables(const struct guest_mem *gm)
{
	return acpi_write_tables_cpus(gm, 1);
}

uint64_t acpi_write_tables_cpus(const struct guest_mem *gm, unsigned nr_cpus)
{
	uint64_t base = LAYOUT_ACPI_TABLES;
	/* The MADT with one vCPU too: a hardware-reduced FADT tells Linux
	 * there is no 8259 (it then takes null_legacy_pic), so its I/O APIC
	 * is the one controller the UART's interrupt can reach (the DSDT's
	 * COM1 names the line). */
	const unsigned nr_tables = 2;
	uint8_t *t = guest_mem_ptr(gm, base, LAYOUT_ACPI_TABLES_SIZE);
	uint8_t *rsdp, *xsdt, *fadt, *dsdt;
	uint32_t dsdt_len = SDT_HEADER + sizeof(dsdt_aml);

	if (!t) {
		et_error("no RAM for the ACPI tables at 0x%llx", (unsigned long long)base);
		return 0;
	}
	memset(t, 0, LAYOUT_ACPI_TABLES_SIZE);
	rsdp = t + RSDP_OFF;
	xsdt = t + XSDT_OFF;
	fadt = t + FADT_OFF;
	dsdt = t + DSDT_OFF;

	sdt_header(dsdt, "DSDT", dsdt_len, 2);
	memcpy(dsdt + SDT_HEADER, dsdt_aml, sizeof(dsdt_aml));
	dsdt[9] = checksum(dsdt, dsdt_len);

	sdt_header(fadt, "FACP", FADT_LEN, 6);
	put32(fadt + 40, (uint32_t)(base + DSDT_OFF));	/* DSDT */
	put16(fadt + 109, BOOT_ARCH_8042 | BOOT_ARCH_NO_VGA | BOOT_ARCH_NO_CMOS_RTC);
	put32(fadt + 112, FADT_FLAG_HW_REDUCED | FADT_FLAG_RESET_REG_SUP); /* Flags */
	gas_port(fadt + 116, PC_PORT_RESET_CONTROL);	/* RESET_REG */
	fadt[128] = PC_RESET_CONTROL_VALUE;		/* RESET_VALUE */
	fadt[131] = 3;					/* minor version: 6.3 */
	put64(fadt + 140, base + DSDT_OFF);		/* X_DSDT */
	gas_port(fadt + 244, PC_PORT_ACPI_SLEEP_CONTROL); /* SLEEP_CONTROL_REG */
	gas_port(fadt + 256, PC_PORT_ACPI_SLEEP_STATUS);  /* SLEEP_STATUS_REG */
	memcpy(fadt + 268, "ETRACE\0\0", 8);		/* hypervisor vendor */
	fadt[9] = checksum(fadt, FADT_LEN);

	write_madt(t + MADT_OFF, nr_cpus ? nr_cpus : 1);

	sdt_header(xsdt, "XSDT", SDT_HEADER + 8 * nr_tables, 1);
	put64(xsdt + SDT_HEADER, base + FADT_OFF);
	put64(xsdt + SDT_HEADER + 8, base + MADT_OFF);
	xsdt[9] = checksum(xsdt, SDT_HEADER + 8 * nr_tables);

	memcpy(rsdp, "RSD PTR ", 8);
	memcpy(rsdp + 9, "ETRACE", 6);
	rsdp[15] = 2;					/* revision: ACPI 2+ */
	put32(rsdp + 20, RSDP_LEN);
	put64(rsdp + 24, base + XSDT_OFF);
	rsdp[8] = checksum(rsdp, 20);			/* ACPI 1 part */
	rsdp[32] = checksum(rsdp, RSDP_LEN);		/* extended checksum */
	return base + RSDP_OFF;
}
