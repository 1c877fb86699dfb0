// SPDX-License-Identifier: MIT
// The hang watchdog's decision (vmm/trace/hang_watch.c), with made-up
// progress values and times: a hang is no vCPU (and nothing shared)
// moving for the timeout; one vCPU moving keeps the run alive, and each
// vCPU's quiet time names who was stuck for how long.
#include <gtest/gtest.h>

#include <vector>

#include "tests/shim/earlytrace_shim.h"

namespace {

struct Watch {
	hang_watch hw{};
	explicit Watch(unsigned cpus, double timeout = 2.0)
	{
		EXPECT_EQ(hang_watch_init(&hw, cpus, timeout), 0);
	}
	~Watch() { hang_watch_free(&hw); }
	bool at(double now, std::vector<uint64_t> v, uint64_t shared = 0)
	{
		return hang_watch_sample(&hw, v.data(), shared, now);
	}
};

} // namespace

TEST(HangWatch, NothingMovingOnAnyVcpuIsAHangAfterTheTimeout)
{
	Watch w(2);
	EXPECT_FALSE(w.at(0.0, { 5, 7 }));
	EXPECT_FALSE(w.at(1.0, { 5, 7 }));
	EXPECT_FALSE(w.at(1.99, { 5, 7 }));
	EXPECT_TRUE(w.at(2.0, { 5, 7 }));
	EXPECT_DOUBLE_EQ(hang_watch_quiet_s(&w.hw, 0, 2.0), 2.0);
	EXPECT_FALSE(hang_watch_ever_moved(&w.hw, 0));
}

// The case the single-counter watchdog got wrong: vCPU 0 is stuck, vCPU 1
// records (say through its own trampoline batch, no exit): no hang.
TEST(HangWatch, OneVcpuMovingIsProgressWhileAnotherIsStuck)
{
	Watch w(2);
	ASSERT_FALSE(w.at(0.0, { 10, 0 }));
	for (int i = 1; i <= 10; i++)
		EXPECT_FALSE(w.at(i * 1.0, { 10, (uint64_t)i })) << i;
	EXPECT_DOUBLE_EQ(hang_watch_quiet_s(&w.hw, 0, 10.0), 10.0);
	EXPECT_DOUBLE_EQ(hang_watch_quiet_s(&w.hw, 1, 10.0), 0.0);
	// vCPU 1 stops too: a hang once it has been still for the timeout.
	EXPECT_FALSE(w.at(11.0, { 10, 10 }));
	EXPECT_TRUE(w.at(12.0, { 10, 10 }));
	EXPECT_DOUBLE_EQ(hang_watch_quiet_s(&w.hw, 0, 12.0), 12.0);
	EXPECT_DOUBLE_EQ(hang_watch_quiet_s(&w.hw, 1, 12.0), 2.0);
	EXPECT_FALSE(hang_watch_ever_moved(&w.hw, 0));
	EXPECT_TRUE(hang_watch_ever_moved(&w.hw, 1));
}

// Any change is progress, a counter going back too (a drained batch's
// cursor returns to its start).
TEST(HangWatch, ACounterGoingBackIsProgress)
{
	Watch w(1, 1.0);
	ASSERT_FALSE(w.at(0.0, { 640 }));
	EXPECT_FALSE(w.at(0.9, { 640 }));
	EXPECT_FALSE(w.at(1.5, { 0 }));
	EXPECT_FALSE(w.at(2.4, { 0 }));
	EXPECT_TRUE(w.at(2.5, { 0 }));
}

// Progress no vCPU can be named for (the guest ring's head) keeps the run
// alive however still the vCPUs' own counters are.
TEST(HangWatch, SharedProgressKeepsTheRunAlive)
{
	Watch w(3, 1.0);
	ASSERT_FALSE(w.at(0.0, { 1, 2, 3 }, 100));
	for (int i = 1; i <= 5; i++)
		EXPECT_FALSE(w.at(i * 0.5, { 1, 2, 3 }, 100 + (uint64_t)i)) << i;
	EXPECT_FALSE(w.at(3.0, { 1, 2, 3 }, 105));
	EXPECT_TRUE(w.at(3.5, { 1, 2, 3 }, 105));
}

// The first look only sets the baseline, whatever the values are.
TEST(HangWatch, TheFirstSampleIsTheBaselineNotProgress)
{
	Watch w(2, 1.0);
	EXPECT_FALSE(w.at(100.0, { 99, 99 }));
	EXPECT_FALSE(hang_watch_ever_moved(&w.hw, 0));
	EXPECT_TRUE(w.at(101.0, { 99, 99 }));
	EXPECT_DOUBLE_EQ(hang_watch_quiet_s(&w.hw, 1, 101.0), 1.0);
	EXPECT_DOUBLE_EQ(hang_watch_quiet_s(&w.hw, 7, 101.0), 0.0); // no such vCPU
}
