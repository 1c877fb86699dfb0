// SPDX-License-Identifier: MIT
// The host event buffer: its two overflow policies count every event they
// do not keep, and the events live in a mapping of their own, fenced by
// inaccessible pages.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "tests/shim/earlytrace_shim.h"
#include "vmm/trace/host_buffer.h"

namespace {

struct et_ring_record event(uint64_t tsc)
{
	struct et_ring_record ev = {};
	ev.tsc = tsc;
	ev.ip = 0x1000 + tsc;
	return ev;
}

TEST(HostBuffer, StopKeepsTheFirstAndCountsTheRest)
{
	struct host_buffer b;
	ASSERT_EQ(host_buffer_init(&b, 3, OVERFLOW_STOP), 0);
	for (uint64_t i = 0; i < 5; i++) {
		struct et_ring_record ev = event(i);
		EXPECT_EQ(host_buffer_add(&b, &ev), i < 3) << i;
	}
	EXPECT_EQ(b.count, 3u);
	EXPECT_EQ(b.recorded, 5u);
	EXPECT_EQ(b.dropped, 2u);
	for (size_t i = 0; i < 3; i++)
		EXPECT_EQ(host_buffer_at(&b, i)->tsc, i);
	host_buffer_free(&b);
	EXPECT_EQ(b.events, nullptr);
}

TEST(HostBuffer, OverwriteKeepsTheNewestAndCountsTheOverwritten)
{
	struct host_buffer b;
	ASSERT_EQ(host_buffer_init(&b, 3, OVERFLOW_OVERWRITE), 0);
	for (uint64_t i = 0; i < 7; i++) {
		struct et_ring_record ev = event(i);
		EXPECT_TRUE(host_buffer_add(&b, &ev));
	}
	EXPECT_EQ(b.count, 3u);
	EXPECT_EQ(b.dropped, 4u);
	for (size_t i = 0; i < 3; i++)
		EXPECT_EQ(host_buffer_at(&b, i)->tsc, 4 + i);
	host_buffer_free(&b);
}

TEST(HostBuffer, RefusesNothingAndTheImpossible)
{
	struct host_buffer b;
	EXPECT_EQ(host_buffer_init(&b, 0, OVERFLOW_STOP), -1);
	EXPECT_NE(std::string(et_last_error()).find("at least one event"), std::string::npos);
	EXPECT_EQ(host_buffer_init(&b, SIZE_MAX / 8, OVERFLOW_STOP), -1);
	EXPECT_NE(std::string(et_last_error()).find("too large"), std::string::npos);
}

// /proc/self/maps: the events are exactly one mapping, whole pages, with
// an inaccessible page on each side.
TEST(HostBuffer, EventsHaveAFencedMappingOfTheirOwn)
{
	struct host_buffer b;
	const size_t capacity = 1000; // 32,000 bytes: 8 pages, the last one partly used
	ASSERT_EQ(host_buffer_init(&b, capacity, OVERFLOW_STOP), 0);
	const uintptr_t start = reinterpret_cast<uintptr_t>(b.events);
	const uintptr_t page = 4096, end = start + 8 * page;
	bool found = false, guard_before = false, guard_after = false;
	FILE *f = fopen("/proc/self/maps", "r");
	ASSERT_NE(f, nullptr);
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[5];
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) != 3)
			continue;
		if (lo == start && hi == end && !strncmp(perms, "rw", 2))
			found = true;
		if (hi == start && lo <= start - page && !strncmp(perms, "---", 3))
			guard_before = true;
		if (lo == end && hi >= end + page && !strncmp(perms, "---", 3))
			guard_after = true;
	}
	fclose(f);
	EXPECT_TRUE(found);
	EXPECT_TRUE(guard_before);
	EXPECT_TRUE(guard_after);
	host_buffer_free(&b);
}

} // namespace
