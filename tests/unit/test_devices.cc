// SPDX-License-Identifier: MIT
// The small platform devices: i8042 reset and self tests, debug exit, the
// reset control register.
#include <gtest/gtest.h>

#include <string>

#include "tests/shim/earlytrace_shim.h"
#include "arch/x86/hw/reset_control.h"

namespace {

struct StopLog {
	int count = 0;
	enum run_end reason = RUN_END_NONE;
	int status = -1;
	std::string detail;
};

void on_stop(void *ctx, enum run_end reason, int status, const char *detail)
{
	StopLog *log = static_cast<StopLog *>(ctx);
	log->count++;
	log->reason = reason;
	log->status = status;
	log->detail = detail ? detail : "";
}

uint8_t rd(void (*fn)(void *, uint64_t, uint8_t *, uint32_t, bool), void *dev)
{
	uint8_t v = 0;
	fn(dev, 0, &v, 1, false);
	return v;
}

void wr(void (*fn)(void *, uint64_t, uint8_t *, uint32_t, bool), void *dev, uint8_t v)
{
	fn(dev, 0, &v, 1, true);
}

} // namespace

TEST(I8042, ResetCommandStopsCleanly)
{
	StopLog log;
	struct i8042 kbc;
	i8042_init(&kbc, on_stop, &log);
	wr(i8042_cmd_io, &kbc, 0xfe);
	EXPECT_EQ(log.count, 1);
	EXPECT_EQ(log.reason, RUN_END_RESET);
	EXPECT_EQ(log.status, 0);
	EXPECT_EQ(log.detail, "i8042 reset line");
}

TEST(I8042, OutputPortResetBit)
{
	StopLog log;
	struct i8042 kbc;
	i8042_init(&kbc, on_stop, &log);
	wr(i8042_cmd_io, &kbc, 0xd1);
	wr(i8042_data_io, &kbc, 0x01); // reset line stays high
	EXPECT_EQ(log.count, 0);
	wr(i8042_cmd_io, &kbc, 0xd1);
	wr(i8042_data_io, &kbc, 0x00); // pulls it low
	EXPECT_EQ(log.reason, RUN_END_RESET);
}

TEST(I8042, SelfTestAndConfigByte)
{
	StopLog log;
	struct i8042 kbc;
	i8042_init(&kbc, on_stop, &log);
	EXPECT_EQ(rd(i8042_cmd_io, &kbc) & 0x01, 0); // nothing to read
	wr(i8042_cmd_io, &kbc, 0xaa);
	EXPECT_EQ(rd(i8042_cmd_io, &kbc) & 0x01, 1);
	EXPECT_EQ(rd(i8042_data_io, &kbc), 0x55);
	EXPECT_EQ(rd(i8042_cmd_io, &kbc) & 0x01, 0);

	wr(i8042_cmd_io, &kbc, 0x60);
	wr(i8042_data_io, &kbc, 0x30);
	wr(i8042_cmd_io, &kbc, 0x20);
	EXPECT_EQ(rd(i8042_data_io, &kbc), 0x30);
	EXPECT_EQ(log.count, 0);
}

TEST(I8042, PortDisablesShowInTheConfigByteAndTheKeylockIsOff)
{
	StopLog log;
	struct i8042 kbc;
	i8042_init(&kbc, on_stop, &log);
	EXPECT_EQ(rd(i8042_cmd_io, &kbc) & 0x10, 0x10); // not inhibited
	wr(i8042_cmd_io, &kbc, 0xa7);			  // AUX off
	wr(i8042_cmd_io, &kbc, 0xad);			  // KBD off
	wr(i8042_cmd_io, &kbc, 0x20);
	EXPECT_EQ(rd(i8042_data_io, &kbc) & 0x30, 0x30);
	wr(i8042_cmd_io, &kbc, 0xa8);
	wr(i8042_cmd_io, &kbc, 0xae);
	wr(i8042_cmd_io, &kbc, 0x20);
	EXPECT_EQ(rd(i8042_data_io, &kbc) & 0x30, 0x00);
}

TEST(DebugExit, StatusIsTheLowByte)
{
	StopLog log;
	struct debug_exit dev = { on_stop, &log };
	uint8_t value[4] = { 0x07, 0x01, 0, 0 }; // 32-bit write of 0x107
	debug_exit_io(&dev, 0, value, 4, true);
	EXPECT_EQ(log.reason, RUN_END_DEBUG_EXIT);
	EXPECT_EQ(log.status, 7);
}

TEST(DebugExit, ReadsDoNotStop)
{
	StopLog log;
	struct debug_exit dev = { on_stop, &log };
	uint8_t v = 0;
	debug_exit_io(&dev, 0, &v, 1, false);
	EXPECT_EQ(log.count, 0);
}

// Linux's reboot=p writes 0x02 (a hard reset, please) and then 0x06 or
// 0x0e; the FADT's reset value is 0x06: only a write with RST_CPU resets.
TEST(ResetControl, OnlyRstCpuResetsAndTheOtherBitsReadBack)
{
	StopLog log;
	struct reset_control rc = { on_stop, &log, 0 };
	EXPECT_EQ(rd(reset_control_io, &rc), 0);
	wr(reset_control_io, &rc, PC_RESET_CONTROL_SYS);
	EXPECT_EQ(log.count, 0);
	EXPECT_EQ(rd(reset_control_io, &rc), PC_RESET_CONTROL_SYS);
	wr(reset_control_io, &rc, 0x08); // FULL_RST alone
	EXPECT_EQ(log.count, 0);
	EXPECT_EQ(rd(reset_control_io, &rc), 0x08);
	wr(reset_control_io, &rc, PC_RESET_CONTROL_VALUE);
	EXPECT_EQ(log.count, 1);
	EXPECT_EQ(log.reason, RUN_END_RESET);
	EXPECT_EQ(log.status, 0);
	EXPECT_EQ(log.detail, "reset control register 0xcf9");
	EXPECT_EQ(rd(reset_control_io, &rc), PC_RESET_CONTROL_SYS) << "RST_CPU never reads back";
}
