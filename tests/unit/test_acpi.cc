// SPDX-License-Identifier: MIT
// The ACPI tables a guest gets for power-off: every table where the RSDP
// chain says, valid checksums, a hardware-reduced FADT naming the sleep
// registers, \_S5 in the DSDT; and the sleep register ending the run.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tests/shim/earlytrace_shim.h"
#include "arch/x86/boot/acpi.h"
#include "arch/x86/hw/acpi_sleep.h"
#include "vmm/kvm/vm.h"

namespace {

uint8_t sum(const uint8_t *p, size_t n)
{
	uint8_t s = 0;
	for (size_t i = 0; i < n; i++)
		s = (uint8_t)(s + p[i]);
	return s;
}

template <typename T> T get(const uint8_t *p)
{
	T v;
	memcpy(&v, p, sizeof(v));
	return v;
}

class Acpi : public ::testing::Test {
protected:
	void SetUp() override { ASSERT_EQ(guest_mem_init(&mem, 16 << 20), 0); }
	void TearDown() override { guest_mem_free(&mem); }
	const uint8_t *at(uint64_t pa, uint64_t len)
	{
		return static_cast<const uint8_t *>(guest_mem_ptr(&mem, pa, len));
	}
	struct guest_mem mem;
};

TEST_F(Acpi, TablesChainFromTheRsdpWithValidChecksums)
{
	uint64_t rsdp_pa = acpi_write_tables(&mem);
	ASSERT_EQ(rsdp_pa, (uint64_t)LAYOUT_ACPI_TABLES);
	EXPECT_EQ(rsdp_pa % 16, 0u) << "a kernel scanning for the RSDP looks at 16-byte boundaries";
	const uint8_t *rsdp = at(rsdp_pa, 36);
	ASSERT_EQ(memcmp(rsdp, "RSD PTR ", 8), 0);
	EXPECT_EQ(rsdp[15], 2);
	EXPECT_EQ(sum(rsdp, 20), 0);
	EXPECT_EQ(sum(rsdp, 36), 0);

	uint64_t xsdt_pa = get<uint64_t>(rsdp + 24);
	const uint8_t *xsdt = at(xsdt_pa, 52);
	ASSERT_EQ(memcmp(xsdt, "XSDT", 4), 0);
	ASSERT_EQ(get<uint32_t>(xsdt + 4), 52u) << "the FADT and the MADT";
	EXPECT_EQ(sum(xsdt, 52), 0);

	const uint8_t *fadt = at(get<uint64_t>(xsdt + 36), 276);
	ASSERT_EQ(memcmp(fadt, "FACP", 4), 0);
	ASSERT_EQ(get<uint32_t>(fadt + 4), 276u);
	EXPECT_EQ(fadt[8], 6);
	EXPECT_EQ(sum(fadt, 276), 0);
	EXPECT_TRUE(get<uint32_t>(fadt + 112) & (1u << 20)) << "hardware-reduced";
	// Sleep control and status: system I/O, byte access, at our ports.
	EXPECT_EQ(fadt[244], 1);
	EXPECT_EQ(get<uint64_t>(fadt + 248), (uint64_t)PC_PORT_ACPI_SLEEP_CONTROL);
	EXPECT_EQ(fadt[256], 1);
	EXPECT_EQ(get<uint64_t>(fadt + 260), (uint64_t)PC_PORT_ACPI_SLEEP_STATUS);
	// No CMOS RTC, no VGA, an 8042.
	EXPECT_EQ(get<uint16_t>(fadt + 109), (1u << 1) | (1u << 2) | (1u << 5));
	// The reset register (reboot=a): RESET_REG_SUP, a byte in system I/O
	// at the reset control register, and the value that sets RST_CPU.
	EXPECT_TRUE(get<uint32_t>(fadt + 112) & (1u << 10)) << "RESET_REG_SUP";
	EXPECT_EQ(fadt[116], 1) << "system I/O";
	EXPECT_EQ(fadt[117], 8) << "bit width";
	EXPECT_EQ(get<uint64_t>(fadt + 120), (uint64_t)PC_PORT_RESET_CONTROL);
	EXPECT_EQ(fadt[128], PC_RESET_CONTROL_VALUE);
	EXPECT_TRUE(fadt[128] & PC_RESET_CONTROL_CPU);

	uint64_t dsdt_pa = get<uint64_t>(fadt + 140);
	EXPECT_EQ(get<uint32_t>(fadt + 40), (uint32_t)dsdt_pa);
	const uint8_t *dsdt = at(dsdt_pa, 36);
	ASSERT_EQ(memcmp(dsdt, "DSDT", 4), 0);
	uint32_t len = get<uint32_t>(dsdt + 4);
	dsdt = at(dsdt_pa, len);
	EXPECT_EQ(sum(dsdt, len), 0);
	// Name (_S5, Package (4) { 5, 5, 0, 0 })
	const uint8_t s5[] = { 0x08, '_', 'S', '5', '_', 0x12, 0x08, 0x04, 0x0a, 5, 0x0a, 5, 0, 0 };
	ASSERT_GT(len, 36u + sizeof(s5));
	EXPECT_EQ(memcmp(dsdt + 36, s5, sizeof(s5)), 0);
	// Scope (\_SB) { Device (COM1) { _HID PNP0501, _UID, _CRS } }: each
	// package's length reaches exactly the table's end.
	const uint8_t *sc = dsdt + 36 + sizeof(s5);
	ASSERT_EQ(sc[0], 0x10) << "ScopeOp";
	ASSERT_EQ(sc + 1 + sc[1], dsdt + len) << "the scope ends the table";
	EXPECT_EQ(memcmp(sc + 2, "_SB_", 4), 0);
	const uint8_t *dev = sc + 6;
	ASSERT_EQ(dev[0], 0x5b);
	ASSERT_EQ(dev[1], 0x82) << "DeviceOp";
	ASSERT_EQ(dev + 2 + dev[2], dsdt + len) << "the device ends the scope";
	EXPECT_EQ(memcmp(dev + 3, "COM1", 4), 0);
	const uint8_t hid[] = { 0x08, '_', 'H', 'I', 'D', 0x0c, 0x41, 0xd0, 0x05, 0x01 };
	EXPECT_EQ(memcmp(dev + 7, hid, sizeof(hid)), 0) << "_HID EisaId (\"PNP0501\")";
	const uint8_t *crs = dev + 7 + sizeof(hid) + 6; // past Name (_UID, One)
	ASSERT_EQ(memcmp(crs, "\x08_CRS\x11", 6), 0);
	ASSERT_EQ(crs + 6 + crs[6], dsdt + len) << "the buffer ends the device";
	ASSERT_EQ(crs[7], 0x0a);
	const uint8_t *res = crs + 9;
	ASSERT_EQ(crs[8], 13) << "IO (8 bytes), IRQ (3), end tag (2)";
	EXPECT_EQ(res[0], 0x47) << "IO descriptor";
	EXPECT_EQ(res[2] | res[3] << 8, PC_PORT_COM1) << "minimum";
	EXPECT_EQ(res[4] | res[5] << 8, PC_PORT_COM1) << "maximum";
	EXPECT_EQ(res[7], 8) << "length";
	EXPECT_EQ(res[8], 0x22) << "IRQ descriptor, no flags";
	EXPECT_EQ(res[9] | res[10] << 8, 1 << PC_IRQ_COM1);
	EXPECT_EQ(res[11], 0x79) << "end tag";
	// Everything inside the reserved window.
	EXPECT_LE(dsdt_pa + len, (uint64_t)LAYOUT_ACPI_TABLES + LAYOUT_ACPI_TABLES_SIZE);
}

// A MADT whatever the vCPUs: a local APIC per vCPU (APIC id = vCPU id),
// the I/O APIC, and IRQ 0 on GSI 2. With one vCPU it is what gives the
// ISA interrupts a controller (the FADT is hardware-reduced: no 8259).
TEST_F(Acpi, MadtWithOneLocalApicPerCpu)
{
	uint64_t rsdp_pa = acpi_write_tables_cpus(&mem, 1);
	const uint8_t *xsdt = at(get<uint64_t>(at(rsdp_pa, 36) + 24), 36);
	ASSERT_EQ(get<uint32_t>(xsdt + 4), 52u) << "the FADT and the MADT";
	const uint8_t *madt1 = at(get<uint64_t>(xsdt + 44), 44);
	ASSERT_EQ(memcmp(madt1, "APIC", 4), 0);
	EXPECT_EQ(madt1[44], 0) << "the first entry: vCPU 0's local APIC";

	rsdp_pa = acpi_write_tables_cpus(&mem, 3);
	const uint8_t *rsdp = at(rsdp_pa, 36);
	EXPECT_EQ(sum(rsdp, 20), 0);
	xsdt = at(get<uint64_t>(rsdp + 24), 52);
	ASSERT_EQ(get<uint32_t>(xsdt + 4), 52u) << "the FADT and the MADT";
	EXPECT_EQ(sum(xsdt, 52), 0);
	uint64_t madt_pa = get<uint64_t>(xsdt + 44);
	const uint8_t *madt = at(madt_pa, 44);
	ASSERT_EQ(memcmp(madt, "APIC", 4), 0);
	uint32_t len = get<uint32_t>(madt + 4);
	madt = at(madt_pa, len);
	EXPECT_EQ(sum(madt, len), 0);
	EXPECT_EQ(get<uint32_t>(madt + 36), (uint32_t)LAYOUT_LOCAL_APIC);
	EXPECT_EQ(get<uint32_t>(madt + 40), 1u) << "PCAT_COMPAT: the 8259s are there too";
	std::vector<int> apic_ids;
	int io_apics = 0, overrides = 0;
	for (uint32_t off = 44; off < len; off += madt[off + 1]) {
		ASSERT_GT(madt[off + 1], 0);
		if (madt[off] == 0) {
			EXPECT_EQ(madt[off + 1], 8);
			EXPECT_EQ(get<uint32_t>(madt + off + 4), 1u) << "enabled";
			apic_ids.push_back(madt[off + 3]);
		} else if (madt[off] == 1) {
			io_apics++;
			EXPECT_EQ(get<uint32_t>(madt + off + 4), (uint32_t)LAYOUT_IO_APIC);
			EXPECT_EQ(get<uint32_t>(madt + off + 8), 0u) << "GSI base";
		} else if (madt[off] == 2) {
			overrides++;
			EXPECT_EQ(madt[off + 3], 0) << "IRQ 0";
			EXPECT_EQ(get<uint32_t>(madt + off + 4), 2u) << "on GSI 2";
		}
	}
	EXPECT_EQ(apic_ids, (std::vector<int>{ 0, 1, 2 }));
	EXPECT_EQ(io_apics, 1);
	EXPECT_EQ(overrides, 1);
	EXPECT_LE(madt_pa + len, (uint64_t)LAYOUT_ACPI_TABLES + LAYOUT_ACPI_TABLES_SIZE);

	// The most vCPUs still fit the window.
	rsdp_pa = acpi_write_tables_cpus(&mem, VM_MAX_VCPUS);
	xsdt = at(get<uint64_t>(at(rsdp_pa, 36) + 24), 52);
	madt_pa = get<uint64_t>(xsdt + 44);
	len = get<uint32_t>(at(madt_pa, 8) + 4);
	EXPECT_EQ(len, 44u + 8u * VM_MAX_VCPUS + 12u + 10u);
	EXPECT_LE(madt_pa + len, (uint64_t)LAYOUT_ACPI_TABLES + LAYOUT_ACPI_TABLES_SIZE);
}

struct Stop {
	int calls = 0;
	enum run_end reason = RUN_END_NONE;
	int status = -1;
};

void record_stop(void *vm, enum run_end reason, int status, const char *detail)
{
	Stop *s = static_cast<Stop *>(vm);
	(void)detail;
	s->calls++;
	s->reason = reason;
	s->status = status;
}

TEST(AcpiSleep, S5EndsTheRunWithStatus0AndNothingElseDoes)
{
	Stop stop;
	struct acpi_sleep dev = { record_stop, &stop };
	uint8_t v;

	v = 0x34; // SLP_TYP 5, SLP_EN
	acpi_sleep_io(&dev, 0, &v, 1, true);
	EXPECT_EQ(stop.calls, 1);
	EXPECT_EQ(stop.reason, RUN_END_POWER_OFF);
	EXPECT_EQ(stop.status, 0);

	Stop other;
	dev.vm = &other;
	for (uint8_t x : { 0x14, 0x2c, 0x20, 0x00, 0xff & ~0x20 }) { // no S5 with SLP_EN
		acpi_sleep_io(&dev, 0, &x, 1, true);
	}
	v = 0x34;
	acpi_sleep_io(&dev, 1, &v, 1, true); // the status register
	EXPECT_EQ(other.calls, 0);
	v = 0xaa;
	acpi_sleep_io(&dev, 1, &v, 1, false);
	EXPECT_EQ(v, 0) << "no wake status";
}

} // namespace
