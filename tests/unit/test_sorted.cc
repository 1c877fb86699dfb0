// SPDX-License-Identifier: MIT
// sorted_partition_point(), the one binary search: against the standard
// library's lower_bound and upper_bound on arrays with and without
// duplicates, for every key in and around them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "tests/shim/earlytrace_shim.h"

namespace {

bool below(const void *elem, const void *key)
{
	return *(const uint64_t *)elem < *(const uint64_t *)key;
}

bool at_or_below(const void *elem, const void *key)
{
	return *(const uint64_t *)elem <= *(const uint64_t *)key;
}

size_t lower(const std::vector<uint64_t> &v, uint64_t key)
{
	return sorted_partition_point(v.data(), v.size(), sizeof(v[0]), &key, below);
}

size_t upper(const std::vector<uint64_t> &v, uint64_t key)
{
	return sorted_partition_point(v.data(), v.size(), sizeof(v[0]), &key, at_or_below);
}

TEST(SortedSearch, EdgesAndDuplicates)
{
	EXPECT_EQ(lower({}, 5), 0u);
	EXPECT_EQ(upper({}, 5), 0u);
	const std::vector<uint64_t> v = { 1, 3, 3, 3, 7 };
	EXPECT_EQ(lower(v, 0), 0u);
	EXPECT_EQ(lower(v, 1), 0u);
	EXPECT_EQ(upper(v, 1), 1u);
	EXPECT_EQ(lower(v, 3), 1u); // the first of the equal ones
	EXPECT_EQ(upper(v, 3), 4u); // just past the last of them
	EXPECT_EQ(lower(v, 4), 4u);
	EXPECT_EQ(upper(v, 7), 5u);
	EXPECT_EQ(lower(v, UINT64_MAX), 5u);
}

TEST(SortedSearch, AgreesWithTheStandardLibrary)
{
	std::mt19937 rng(7);
	for (size_t n = 0; n < 40; n++) {
		std::vector<uint64_t> v(n);
		for (auto &x : v)
			x = rng() % 16;
		std::sort(v.begin(), v.end());
		for (uint64_t key = 0; key <= 17; key++) {
			EXPECT_EQ(lower(v, key),
				  (size_t)(std::lower_bound(v.begin(), v.end(), key) - v.begin()))
				<< n << " " << key;
			EXPECT_EQ(upper(v, key),
				  (size_t)(std::upper_bound(v.begin(), v.end(), key) - v.begin()))
				<< n << " " << key;
		}
	}
}

} // namespace
