// SPDX-License-Identifier: MIT
// The overhead clock: durations without the tracer's own exits
// (vmm/trace/overhead.h), on hand-made event sequences.
#include <gtest/gtest.h>

#include <vector>

#include "tests/shim/earlytrace_shim.h"

namespace {

et_ring_record ev(uint64_t tsc, unsigned kind, unsigned src, uint64_t ip = 0x1000, uint16_t extra = 0)
{
	et_ring_record e{};
	e.tsc = tsc;
	e.ip = ip;
	e.kind = (uint16_t)kind;
	e.flags = (uint16_t)(src | extra);
	return e;
}

trace_info info_with(uint64_t exits, uint64_t exit_ticks, uint64_t rest, uint64_t drains = 0,
		     uint64_t drain_ticks = 0, uint64_t tramp_events = 0)
{
	trace_info in{};
	in.has_overhead = true;
	in.overhead.exits = exits;
	in.overhead.exit_ticks = exit_ticks;
	in.overhead.rest_ticks = rest;
	in.overhead.drains = drains;
	in.overhead.drain_ticks = drain_ticks;
	in.events_by_source[ET_REC_SRC_TRAMPOLINE] = tramp_events;
	return in;
}

std::vector<uint64_t> times(const trace_info &in, const std::vector<et_ring_record> &evs, bool raw)
{
	overhead_clock c;
	overhead_clock_init(&c, &in, raw);
	std::vector<uint64_t> t;
	for (const auto &e : evs)
		t.push_back(overhead_clock_event(&c, &e));
	return t;
}

} // namespace

// A() { B(); }: four breakpoint exits at 100 ticks each (60 measured in
// the VMM, 40 for the round trip). B's duration loses its own call's exit;
// A's loses its call's, B's call's and B's return's.
TEST(Overhead, EachExitIsTakenOutOfWhatFollows)
{
	trace_info in = info_with(4, 240, 40);
	EXPECT_EQ(overhead_per_exit(&in.overhead), 100u);
	std::vector<et_ring_record> evs = {
		ev(1000, ET_REC_CALL, ET_REC_SRC_BREAKPOINT), // A
		ev(1500, ET_REC_CALL, ET_REC_SRC_BREAKPOINT), // B
		ev(1700, ET_REC_RET, ET_REC_SRC_BREAKPOINT),  // B returns
		ev(2500, ET_REC_RET, ET_REC_SRC_BREAKPOINT),  // A returns
	};
	auto t = times(in, evs, false);
	EXPECT_EQ(t, (std::vector<uint64_t>{ 1000, 1400, 1500, 2200 }));
	EXPECT_EQ(t[2] - t[1], 100u) << "B: 200 raw, one exit less";
	EXPECT_EQ(t[3] - t[0], 1200u) << "A: 1500 raw, three exits less";
	// Raw: as recorded.
	EXPECT_EQ(times(in, evs, true), (std::vector<uint64_t>{ 1000, 1500, 1700, 2500 }));
}

// VM exit events, unwound returns and the kernel ring's events took no
// exit of the tracer's: they move nothing.
TEST(Overhead, OnlyTheTracersExitsCount)
{
	trace_info in = info_with(2, 200, 0);
	std::vector<et_ring_record> evs = {
		ev(1000, ET_REC_CALL, ET_REC_SRC_BREAKPOINT),
		ev(1200, ET_REC_EXIT_FIRST, ET_REC_SRC_BREAKPOINT),
		ev(1300, ET_REC_RET, ET_REC_SRC_BREAKPOINT, 0x1000, ET_REC_F_UNWOUND),
		ev(1400, ET_REC_CALL, ET_REC_SRC_GUEST, 0x1000, ET_REC_F_FTRACE),
		ev(1500, ET_REC_CALL, ET_REC_SRC_BREAKPOINT),
		ev(1700, ET_REC_CALL, ET_REC_SRC_GUEST),
	};
	EXPECT_FALSE(overhead_event_had_exit(&evs[1]));
	EXPECT_FALSE(overhead_event_had_exit(&evs[2]));
	EXPECT_FALSE(overhead_event_had_exit(&evs[3]));
	EXPECT_TRUE(overhead_event_had_exit(&evs[4]));
	auto t = times(in, evs, false);
	EXPECT_EQ(t, (std::vector<uint64_t>{ 1000, 1100, 1200, 1300, 1400, 1500 }));
}

// Drains: their cost comes out of the gaps they made between the
// trampolines' calls, as far as the calls so far have run up, never more
// than a gap (a first call has no gap before it).
TEST(Overhead, DrainsAreTakenOutOfTheGapsTheyMade)
{
	trace_info in = info_with(0, 0, 10, 1, 290, 3); // one drain, 300 ticks
	EXPECT_EQ(overhead_per_drain(&in.overhead), 300u);
	std::vector<et_ring_record> evs = {
		ev(1000, ET_REC_CALL, ET_REC_SRC_TRAMPOLINE), ev(2000, ET_REC_CALL, ET_REC_SRC_TRAMPOLINE),
		ev(3000, ET_REC_CALL, ET_REC_SRC_TRAMPOLINE), ev(4000, ET_REC_CALL, ET_REC_SRC_GUEST),
	};
	auto t = times(in, evs, false);
	// Due after the 2nd call: 200; after the 3rd: 300, all of it.
	EXPECT_EQ(t, (std::vector<uint64_t>{ 1000, 1800, 2700, 3700 }));
}

// A drain that costs more than its batch's calls took to run (under
// emulation, or a slow VMM): spread evenly over the calls, it stopped the
// clock for all of them; taken from the gap it made, the calls keep their
// spacing and only the gap shrinks.
TEST(Overhead, AnExpensiveDrainLeavesTheCallsApart)
{
	const uint64_t calls = 1000;
	trace_info in = info_with(0, 0, 0, 1, 100000, calls); // one drain, 100000 ticks
	std::vector<et_ring_record> evs;
	for (uint64_t i = 0; i < calls; i++) // 10 ticks apart, the drain after the 500th
		evs.push_back(ev(1000 + 10 * i + (i >= 500 ? 100000 : 0), ET_REC_CALL,
				 ET_REC_SRC_TRAMPOLINE));
	overhead_clock c;
	overhead_clock_init(&c, &in, false);
	std::vector<uint64_t> t;
	for (const auto &e : evs)
		t.push_back(overhead_clock_event(&c, &e));
	for (size_t i = 1; i < t.size(); i++)
		EXPECT_GT(t[i], t[i - 1]) << "call " << i << " at the time of the one before";
	EXPECT_EQ(c.clamped, 0u);
	// Half the drain's cost was due at the gap (501 of 1000 calls seen),
	// the rest comes out of no gap: the calls after it keep their spacing.
	EXPECT_EQ(t[500] - t[499], 100010u - 50100u);
	EXPECT_EQ(t.back() - t[500], 10u * 499);
}

// Time never runs backwards, however large the cost claimed; a note is on
// the same clock as the events around it.
TEST(Overhead, TimeNeverRunsBackwards)
{
	trace_info in = info_with(1, 1000000, 0);
	std::vector<et_ring_record> evs = {
		ev(1000, ET_REC_CALL, ET_REC_SRC_BREAKPOINT),
		ev(1010, ET_REC_RET, ET_REC_SRC_BREAKPOINT),
		ev(1020, ET_REC_CALL, ET_REC_SRC_BREAKPOINT),
	};
	auto t = times(in, evs, false);
	EXPECT_EQ(t, (std::vector<uint64_t>{ 1000, 1000, 1000 }));

	trace_info small = info_with(2, 200, 0);
	overhead_clock c;
	overhead_clock_init(&c, &small, false);
	overhead_clock_event(&c, &evs[0]);
	EXPECT_EQ(overhead_clock_note(&c, 1500), 1400u);
}

// No OVERHEAD record, or one with nothing in it: durations as recorded,
// and the header says why.
TEST(Overhead, WithoutARecordNothingChanges)
{
	trace_info none{};
	std::vector<et_ring_record> evs = { ev(1000, ET_REC_CALL, ET_REC_SRC_BREAKPOINT),
					    ev(2000, ET_REC_RET, ET_REC_SRC_BREAKPOINT) };
	EXPECT_EQ(times(none, evs, false), (std::vector<uint64_t>{ 1000, 2000 }));
	char buf[256];
	EXPECT_NE(std::string(overhead_describe(&none, false, buf, sizeof(buf))).find("as recorded"),
		  std::string::npos);
	trace_info in = info_with(4, 240, 40);
	EXPECT_NE(std::string(overhead_describe(&in, false, buf, sizeof(buf)))
			  .find("4 breakpoint exits at 100 TSC ticks each"),
		  std::string::npos)
		<< buf;
	EXPECT_NE(std::string(overhead_describe(&in, true, buf, sizeof(buf))).find("--raw-durations"),
		  std::string::npos);
}

// The correction subtracts exactly the recorded per-exit cost, and where
// that would put an event before the one before it (a gap shorter than
// the mean exit) the event is clamped to that time, never earlier, and
// counted; raw durations clamp nothing.
TEST(Overhead, ClampsAreCountedAndNoDurationIsNegative)
{
	trace_info in = info_with(4, 2000, 500); // (2000 + 4 * 500) / 4: 1000 ticks an exit
	std::vector<et_ring_record> evs = {
		ev(10000, ET_REC_CALL, ET_REC_SRC_BREAKPOINT), // A
		ev(12000, ET_REC_CALL, ET_REC_SRC_BREAKPOINT), // B: 2000 after A
		ev(12500, ET_REC_RET, ET_REC_SRC_BREAKPOINT),  // B returns 500 later
		ev(15000, ET_REC_RET, ET_REC_SRC_BREAKPOINT),  // A returns
	};
	overhead_clock c;
	overhead_clock_init(&c, &in, false);
	std::vector<uint64_t> t;
	for (const auto &e : evs)
		t.push_back(overhead_clock_event(&c, &e));
	EXPECT_EQ(t[1] - t[0], 1000u) << "B's call: one exit (A's) taken out";
	EXPECT_EQ(t[2], t[1]) << "B: 500 raw less 1000 would be negative: clamped to 0";
	EXPECT_EQ(t[3], 15000u - 3000u) << "A's return: three exits before it taken out";
	EXPECT_EQ(c.clamped, 1u);
	char buf[256];
	EXPECT_NE(std::string(overhead_clamped_text(&c, buf, sizeof(buf))).find("1 events"),
		  std::string::npos)
		<< buf;

	overhead_clock raw;
	overhead_clock_init(&raw, &in, true);
	for (const auto &e : evs)
		overhead_clock_event(&raw, &e);
	EXPECT_EQ(raw.clamped, 0u);
	EXPECT_STREQ(overhead_clamped_text(&raw, buf, sizeof(buf)), "");
}

// The host thread's wait for a CPU is said, and left in the durations.
TEST(Overhead, TheHostWaitIsSaidNotTakenOut)
{
	trace_info in = info_with(2, 200, 0);
	in.tsc_khz = 1000000; // 1 GHz: 1 ms is 1e6 ticks
	in.overhead.waited_ticks = 2500000;
	in.overhead.flags = TRACE_OVERHEAD_WAITED_KNOWN;
	char buf[512];
	EXPECT_NE(std::string(overhead_describe(&in, false, buf, sizeof(buf)))
			  .find("the vCPU thread waited 2.5 ms for a host CPU"),
		  std::string::npos)
		<< buf;
	std::vector<et_ring_record> evs = { ev(1000, ET_REC_CALL, ET_REC_SRC_BREAKPOINT),
					    ev(5000, ET_REC_RET, ET_REC_SRC_BREAKPOINT) };
	EXPECT_EQ(times(in, evs, false), (std::vector<uint64_t>{ 1000, 4900 }));
	in.overhead.flags = 0; // an older record: not known, not said
	EXPECT_EQ(std::string(overhead_describe(&in, false, buf, sizeof(buf))).find("waited"),
		  std::string::npos);
}

// WAIT records: each wait comes out of its own CPU's times from the exit
// that learnt of it on (its TSC), on top of the exits; another CPU's
// times keep it; raw durations keep every wait.
TEST(Overhead, EachWaitIsTakenOutOfItsCpuFromTheExitThatLearntOfIt)
{
	trace_info in = info_with(4, 240, 40); // 100 ticks an exit
	in.tsc_khz = 1000000;
	const trace_wait waits[] = {
		{ 1500, 0, 300 }, // CPU 0 waited before its exit at 1500
		{ 1600, 1, 50 },  // CPU 1's wait, never CPU 0's
	};
	in.waits = waits;
	in.nr_waits = 2;
	in.waits_ticks = 350;
	auto on = [](et_ring_record e, uint32_t cpu) {
		e.cpu = cpu;
		return e;
	};
	std::vector<et_ring_record> evs = {
		on(ev(1000, ET_REC_CALL, ET_REC_SRC_BREAKPOINT), 0), // A
		on(ev(1500, ET_REC_CALL, ET_REC_SRC_BREAKPOINT), 0), // B, after the wait
		on(ev(1650, ET_REC_CALL, ET_REC_SRC_BREAKPOINT), 1), // C on CPU 1
		on(ev(1700, ET_REC_RET, ET_REC_SRC_BREAKPOINT), 0),  // B returns
	};
	auto t = times(in, evs, false);
	EXPECT_EQ(t[0], 1000u);
	EXPECT_EQ(t[1], 1500u - 100 - 300) << "A's exit and the wait";
	EXPECT_EQ(t[2], 1650u - 200 - 50) << "two exits before it, and only CPU 1's wait";
	EXPECT_EQ(t[3], 1700u - 300 - 300) << "three exits, CPU 0's wait";
	auto raw = times(in, evs, true);
	EXPECT_EQ(raw, (std::vector<uint64_t>{ 1000, 1500, 1650, 1700 }));

	char buf[512];
	EXPECT_NE(std::string(overhead_describe(&in, false, buf, sizeof(buf)))
			  .find("2 waits of the vCPU threads for a host CPU, 0.0 ms, taken out"),
		  std::string::npos)
		<< buf;
	EXPECT_NE(std::string(overhead_describe(&in, true, buf, sizeof(buf))).find("included"),
		  std::string::npos)
		<< buf;
}

// Waits alone (a run that died before its OVERHEAD record) still come
// out; a wait claimed larger than the TSC itself leaves time at zero,
// never wrapped, and clamping is per CPU.
TEST(Overhead, WaitsWithoutAnOverheadRecordAndHugeOnesStayBounded)
{
	trace_info in{};
	const trace_wait waits[] = { { 2000, 0, 700 }, { 3000, 0, UINT64_MAX } };
	in.waits = waits;
	in.nr_waits = 2;
	std::vector<et_ring_record> evs = { ev(1000, ET_REC_CALL, ET_REC_SRC_BREAKPOINT),
					    ev(2000, ET_REC_RET, ET_REC_SRC_BREAKPOINT),
					    ev(3000, ET_REC_CALL, ET_REC_SRC_BREAKPOINT) };
	overhead_clock c;
	overhead_clock_init(&c, &in, false);
	std::vector<uint64_t> t;
	for (const auto &e : evs)
		t.push_back(overhead_clock_event(&c, &e));
	EXPECT_EQ(t, (std::vector<uint64_t>{ 1000, 1300, 1300 }));
	EXPECT_EQ(c.clamped, 1u);
	char buf[512];
	EXPECT_NE(std::string(overhead_describe(&in, false, buf, sizeof(buf)))
			  .find("with the tracer's exits in (no OVERHEAD record"),
		  std::string::npos)
		<< buf;
}
