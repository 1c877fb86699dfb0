// SPDX-License-Identifier: MIT
// The I/O bus: registration rules and dispatch of port and MMIO accesses.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tests/shim/earlytrace_shim.h"

namespace {

struct Access {
	uint64_t offset;
	uint32_t len;
	bool is_write;
	uint8_t first;
};

struct Recorder {
	std::vector<Access> log;
	uint8_t read_value = 0x5a;
};

void record(void *opaque, uint64_t offset, uint8_t *data, uint32_t len, bool is_write)
{
	Recorder *r = static_cast<Recorder *>(opaque);

	if (!is_write)
		memset(data, r->read_value, len);
	r->log.push_back({ offset, len, is_write, data[0] });
}

class IoBus : public ::testing::Test {
protected:
	void SetUp() override { iobus_init(&bus); }
	void TearDown() override { iobus_free(&bus); }
	struct iobus bus;
};

} // namespace

TEST_F(IoBus, DispatchesWithOffsetIntoRange)
{
	Recorder com, dbg;
	uint8_t data[4] = { 0x41 };

	ASSERT_EQ(iobus_register(&bus, IOBUS_PIO, 0x3f8, 8, record, &com, "com1"), 0);
	ASSERT_EQ(iobus_register(&bus, IOBUS_PIO, 0x510, 4, record, &dbg, "dbg"), 0);

	EXPECT_TRUE(iobus_access(&bus, IOBUS_PIO, 0x3f8, data, 1, true));
	EXPECT_TRUE(iobus_access(&bus, IOBUS_PIO, 0x3fd, data, 1, false));
	EXPECT_TRUE(iobus_access(&bus, IOBUS_PIO, 0x510, data, 4, true));
	ASSERT_EQ(com.log.size(), 2u);
	EXPECT_EQ(com.log[0].offset, 0u);
	EXPECT_TRUE(com.log[0].is_write);
	EXPECT_EQ(com.log[0].first, 0x41);
	EXPECT_EQ(com.log[1].offset, 5u);
	EXPECT_FALSE(com.log[1].is_write);
	EXPECT_EQ(data[0], 0x5a);
	ASSERT_EQ(dbg.log.size(), 1u);
	EXPECT_EQ(dbg.log[0].len, 4u);
}

TEST_F(IoBus, UnclaimedReadsReturnAllOnesAndAreCounted)
{
	uint8_t data[4] = { 0, 0, 0, 0 };

	EXPECT_FALSE(iobus_access(&bus, IOBUS_PIO, 0x80, data, 4, false));
	EXPECT_EQ(data[0], 0xff);
	EXPECT_EQ(data[3], 0xff);
	EXPECT_FALSE(iobus_access(&bus, IOBUS_MMIO, 0xfee00000, data, 4, true));
	EXPECT_EQ(bus.unclaimed[IOBUS_PIO], 1u);
	EXPECT_EQ(bus.unclaimed[IOBUS_MMIO], 1u);
}

TEST_F(IoBus, RejectsOverlapsAndBadRanges)
{
	Recorder r;

	ASSERT_EQ(iobus_register(&bus, IOBUS_PIO, 0x3f8, 8, record, &r, "com1"), 0);
	EXPECT_EQ(iobus_register(&bus, IOBUS_PIO, 0x3ff, 1, record, &r, "late"), -1);
	EXPECT_NE(strstr(et_last_error(), "overlaps com1"), nullptr) << et_last_error();
	EXPECT_EQ(iobus_register(&bus, IOBUS_PIO, 0x3f0, 9, record, &r, "early"), -1);
	EXPECT_EQ(iobus_register(&bus, IOBUS_PIO, 0x100, 0, record, &r, "empty"), -1);
	EXPECT_EQ(iobus_register(&bus, IOBUS_MMIO, ~0ull - 1, 4, record, &r, "wrap"), -1);
	// Adjacent ranges and the same range on the other bus are fine.
	EXPECT_EQ(iobus_register(&bus, IOBUS_PIO, 0x3f0, 8, record, &r, "below"), 0);
	EXPECT_EQ(iobus_register(&bus, IOBUS_PIO, 0x400, 8, record, &r, "above"), 0);
	EXPECT_EQ(iobus_register(&bus, IOBUS_MMIO, 0x3f8, 8, record, &r, "mmio"), 0);
}

TEST_F(IoBus, FindsRangesAmongMany)
{
	std::vector<Recorder> devs(100);

	// Register out of order; lookups must still find every one.
	for (int i = 99; i >= 0; i--)
		ASSERT_EQ(iobus_register(&bus, IOBUS_MMIO, 0x10000 + i * 0x100, 0x10, record,
					 &devs[i], "dev"), 0);
	for (int i = 0; i < 100; i++) {
		const struct iobus_range *r = iobus_find(&bus, IOBUS_MMIO, 0x10000 + i * 0x100 + 0xf);
		ASSERT_NE(r, nullptr);
		EXPECT_EQ(r->opaque, &devs[i]);
		EXPECT_EQ(iobus_find(&bus, IOBUS_MMIO, 0x10000 + i * 0x100 + 0x10), nullptr);
	}
	EXPECT_EQ(iobus_find(&bus, IOBUS_MMIO, 0xffff), nullptr);
}
