// SPDX-License-Identifier: MIT
// wait_spread(): a host wait KVM reported as one sum at an exit, placed in
// the gaps it left between the calls the guest recorded during that
// KVM_RUN (vmm/trace/wait_spread.h).
#include <gtest/gtest.h>

#include <vector>

#include "tests/shim/earlytrace_shim.h"

namespace {

struct Spread {
	std::vector<wait_piece> pieces;
	uint64_t total = 0;
};

Spread spread(std::vector<uint64_t> tscs, uint64_t lo, uint64_t hi, uint64_t ticks,
	      size_t max = 64)
{
	Spread s;
	s.pieces.resize(max);
	size_t n = wait_spread(tscs.data(), tscs.size(), lo, hi, ticks, s.pieces.data(), max);
	s.pieces.resize(n);
	for (const wait_piece &p : s.pieces)
		s.total += p.ticks;
	return s;
}

// Calls every 100 ticks from 1000 on, with the gaps `waits` names
// stretched by that many ticks: what the guest's TSC shows when the
// thread waited there.
std::vector<uint64_t> calls(size_t n, const std::vector<std::pair<size_t, uint64_t>> &waits)
{
	std::vector<uint64_t> t;
	uint64_t at = 1000;
	for (size_t i = 0; i < n; i++) {
		for (const auto &[before, ticks] : waits)
			if (before == i)
				at += ticks;
		t.push_back(at);
		at += 100;
	}
	return t;
}

} // namespace

TEST(WaitSpread, OneWaitLandsInTheGapItStretched)
{
	std::vector<uint64_t> t = calls(50, { { 20, 40000 } });
	Spread s = spread(t, 950, t.back() + 50, 40000);
	ASSERT_EQ(s.pieces.size(), 1u);
	EXPECT_EQ(s.pieces[0].ticks, 40000u);
	// Just before the call after the gap, after the one before it.
	EXPECT_EQ(s.pieces[0].tsc, t[20] - 1);
	EXPECT_GT(s.pieces[0].tsc, t[19]);
}

TEST(WaitSpread, SeveralWaitsReportedAsOneSumSplitIntoTheirGaps)
{
	std::vector<uint64_t> t = calls(200, { { 10, 40000 }, { 90, 38000 }, { 150, 41000 } });
	Spread s = spread(t, 900, t.back() + 100, 40000 + 38000 + 41000);
	ASSERT_EQ(s.pieces.size(), 3u);
	EXPECT_EQ(s.total, 119000u);
	EXPECT_EQ(s.pieces[0].tsc, t[10] - 1);
	EXPECT_EQ(s.pieces[1].tsc, t[90] - 1);
	EXPECT_EQ(s.pieces[2].tsc, t[150] - 1);
	// Each takes what its gap stood out by, over the usual 100.
	EXPECT_EQ(s.pieces[0].ticks, 40000u);
	EXPECT_EQ(s.pieces[1].ticks, 38000u);
	EXPECT_EQ(s.pieces[2].ticks, 41000u);
	for (size_t i = 1; i < s.pieces.size(); i++)
		EXPECT_LT(s.pieces[i - 1].tsc, s.pieces[i].tsc) << "in TSC order";
}

TEST(WaitSpread, RecordsInAnyOrderAndOutsideTheRunAreHandled)
{
	std::vector<uint64_t> t = calls(40, { { 30, 50000 } });
	std::vector<uint64_t> shuffled(t.rbegin(), t.rend());
	shuffled.push_back(10);		// before the run
	shuffled.push_back(UINT64_MAX); // after it
	Spread s = spread(shuffled, 900, t.back() + 100, 50000);
	ASSERT_EQ(s.pieces.size(), 1u);
	EXPECT_EQ(s.pieces[0].tsc, t[30] - 1);
}

TEST(WaitSpread, AWaitAfterTheLastCallGoesAtTheRunsEnd)
{
	std::vector<uint64_t> t = calls(20, {});
	uint64_t hi = t.back() + 100 + 30000;
	Spread s = spread(t, 900, hi, 30000);
	ASSERT_EQ(s.pieces.size(), 1u);
	EXPECT_EQ(s.pieces[0].tsc, hi);
	EXPECT_EQ(s.pieces[0].ticks, 30000u);
}

TEST(WaitSpread, APieceIsWhatItsGapStandsOutByAndNoMore)
{
	// Gaps of 1000 with one of 3000: that one shows 2000 of the 4500
	// waited; the rest shows nowhere and is left to the caller.
	std::vector<uint64_t> t = { 1000, 2000, 3000, 6000, 7000 };
	Spread s = spread(t, 0, 8000, 4500);
	ASSERT_EQ(s.pieces.size(), 1u);
	EXPECT_EQ(s.pieces[0].tsc, 5999u);
	EXPECT_EQ(s.pieces[0].ticks, 2000u);
	// Gaps all alike: none stands out, nothing is placed.
	std::vector<uint64_t> even = { 1000, 2000, 3000, 4000 };
	EXPECT_EQ(spread(even, 0, 5000, 500).pieces.size(), 0u);
	// A wait shorter than the excess takes only itself.
	Spread small = spread(t, 0, 8000, 700);
	ASSERT_EQ(small.pieces.size(), 1u);
	EXPECT_EQ(small.pieces[0].ticks, 700u);
}

TEST(WaitSpread, WithoutRecordsInTheRunNothingIsPlaced)
{
	std::vector<wait_piece> p(4);
	EXPECT_EQ(wait_spread(nullptr, 0, 0, 1000, 500, p.data(), p.size()), 0u);
	std::vector<uint64_t> outside = { 5, 7000 };
	EXPECT_EQ(spread(outside, 100, 5000, 500).pieces.size(), 0u);
	std::vector<uint64_t> t = { 200, 300 };
	EXPECT_EQ(spread(t, 100, 5000, 0).pieces.size(), 0u) << "no wait";
	EXPECT_EQ(spread(t, 5000, 100, 50).pieces.size(), 0u) << "an empty run";
}

TEST(WaitSpread, AtMostMaxPiecesTheLargestKept)
{
	std::vector<std::pair<size_t, uint64_t>> waits;
	for (size_t i = 1; i <= 10; i++)
		waits.push_back({ i * 10, 1000 * i });
	std::vector<uint64_t> t = calls(120, waits);
	Spread s = spread(t, 900, t.back() + 100, 55000, 3);
	ASSERT_EQ(s.pieces.size(), 3u);
	// The three largest: 10000, 9000 and 8000, the rest left to the caller.
	EXPECT_EQ(s.total, 27000u);
	EXPECT_EQ(s.pieces[0].tsc, t[80] - 1);
	EXPECT_EQ(s.pieces[2].tsc, t[100] - 1);
}
