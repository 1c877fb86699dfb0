// SPDX-License-Identifier: MIT
// array_grow() (vmm/util/grow.c), the one grow-an-array helper: the first
// size, doubling with the contents kept, and every size that would not fit
// a size_t refused with the array and its capacity untouched.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>

#include "tests/shim/earlytrace_shim.h"

namespace {

TEST(ArrayGrow, FirstSizeThenDoubles)
{
	uint32_t *v = nullptr;
	size_t cap = 0;

	v = static_cast<uint32_t *>(array_grow(v, &cap, sizeof(*v), 16));
	ASSERT_NE(v, nullptr);
	EXPECT_EQ(cap, 16u);
	for (uint32_t i = 0; i < 16; i++)
		v[i] = i * 7;
	for (size_t want = 32; want <= 1024; want *= 2) {
		const size_t old = cap;
		uint32_t *bigger = static_cast<uint32_t *>(array_grow(v, &cap, sizeof(*v), 16));

		ASSERT_NE(bigger, nullptr);
		v = bigger;
		EXPECT_EQ(cap, want);
		for (size_t i = old; i < cap; i++)
			v[i] = static_cast<uint32_t>(i * 7);
	}
	for (uint32_t i = 0; i < cap; i++)
		ASSERT_EQ(v[i], i * 7) << "element " << i << " lost while growing";
	free(v);
}

TEST(ArrayGrow, FirstSizeIsTheCallers)
{
	size_t cap = 0;
	void *v = array_grow(nullptr, &cap, 24, 1);

	ASSERT_NE(v, nullptr);
	EXPECT_EQ(cap, 1u);
	v = array_grow(v, &cap, 24, 1);
	ASSERT_NE(v, nullptr);
	EXPECT_EQ(cap, 2u);
	free(v);
}

// Refused before any allocation, so the array is still the caller's.
TEST(ArrayGrow, OverflowRefusedArrayUntouched)
{
	char *v = static_cast<char *>(malloc(4));
	ASSERT_NE(v, nullptr);
	v[3] = 'x';

	// Doubling the capacity itself would overflow.
	size_t cap = SIZE_MAX / 2 + 1;
	EXPECT_EQ(array_grow(v, &cap, 1, 16), nullptr);
	EXPECT_EQ(cap, SIZE_MAX / 2 + 1);

	// The doubled capacity fits, its size in bytes does not.
	cap = SIZE_MAX / 16;
	EXPECT_EQ(array_grow(v, &cap, 16, 16), nullptr);
	EXPECT_EQ(cap, SIZE_MAX / 16);

	// The first size in bytes does not fit.
	cap = 0;
	EXPECT_EQ(array_grow(v, &cap, 8, SIZE_MAX / 4), nullptr);
	EXPECT_EQ(cap, 0u);

	// Nothing to grow to: no first size, or no element size.
	EXPECT_EQ(array_grow(v, &cap, 8, 0), nullptr);
	EXPECT_EQ(array_grow(v, &cap, 0, 16), nullptr);
	EXPECT_EQ(cap, 0u);

	EXPECT_EQ(v[3], 'x');
	free(v);
}

} // namespace
