// SPDX-License-Identifier: MIT
// ftrace-style function-name patterns: the fast forms, full globs, and
// malformed patterns refused with a message.
#include <gtest/gtest.h>

#include <string>

#include "tests/shim/earlytrace_shim.h"
#include "vmm/sites/glob.h"

namespace {

bool m(const char *pattern, const char *name)
{
	struct glob g;

	EXPECT_EQ(glob_compile(&g, pattern), 0) << pattern;
	return glob_match(&g, name);
}

enum glob_kind kind(const char *pattern)
{
	struct glob g;

	EXPECT_EQ(glob_compile(&g, pattern), 0) << pattern;
	return g.kind;
}

} // namespace

TEST(Glob, FtraceFormsAreClassifiedLikeFilterParseRegex)
{
	EXPECT_EQ(kind("schedule"), GLOB_FULL);
	EXPECT_EQ(kind("sched*"), GLOB_FRONT);
	EXPECT_EQ(kind("*_lock"), GLOB_END);
	EXPECT_EQ(kind("*spin*"), GLOB_MIDDLE);
	EXPECT_EQ(kind("*"), GLOB_END);
	EXPECT_EQ(kind("a*b"), GLOB_GENERAL);
	EXPECT_EQ(kind("sched?"), GLOB_GENERAL);
	EXPECT_EQ(kind("[ab]x"), GLOB_GENERAL);
	EXPECT_EQ(kind("x\\*"), GLOB_GENERAL);
}

TEST(Glob, FastForms)
{
	EXPECT_TRUE(m("schedule", "schedule"));
	EXPECT_FALSE(m("schedule", "schedule_idle"));
	EXPECT_FALSE(m("schedule", "schedul"));
	EXPECT_TRUE(m("sched*", "sched"));
	EXPECT_TRUE(m("sched*", "schedule"));
	EXPECT_FALSE(m("sched*", "_sched"));
	EXPECT_TRUE(m("*_lock", "spin_lock"));
	EXPECT_TRUE(m("*_lock", "_lock"));
	EXPECT_FALSE(m("*_lock", "spin_lock_irq"));
	EXPECT_TRUE(m("*spin*", "raw_spin_lock"));
	EXPECT_TRUE(m("*spin*", "spin"));
	EXPECT_FALSE(m("*spin*", "spi"));
	EXPECT_TRUE(m("*", "anything"));
	EXPECT_TRUE(m("*", ""));
	EXPECT_TRUE(m("**", "x"));
}

TEST(Glob, GeneralGlobs)
{
	EXPECT_TRUE(m("a*b", "ab"));
	EXPECT_TRUE(m("a*b", "a_x_b"));
	EXPECT_FALSE(m("a*b", "a_x_bc"));
	EXPECT_TRUE(m("*a*b*c*", "xxaxxbxxcxx"));
	EXPECT_FALSE(m("*a*b*c*", "xxaxxcxxbxx"));
	EXPECT_TRUE(m("uart_?utc", "uart_putc"));
	EXPECT_FALSE(m("uart_?utc", "uart_utc"));
	EXPECT_TRUE(m("[a-c]x", "bx"));
	EXPECT_FALSE(m("[a-c]x", "dx"));
	EXPECT_TRUE(m("[!a-c]x", "dx"));
	EXPECT_TRUE(m("[^a-c]x", "dx"));
	EXPECT_FALSE(m("[!a-c]x", "ax"));
	EXPECT_TRUE(m("[]]", "]"));
	EXPECT_TRUE(m("[!]]", "a"));
	EXPECT_TRUE(m("[a-]", "-"));
	EXPECT_TRUE(m("x\\*", "x*"));
	EXPECT_FALSE(m("x\\*", "xy"));
	EXPECT_TRUE(m("x\\?y*", "x?yz"));
	/* Backtracking that must not blow up on long names. */
	std::string longname(4000, 'a');
	EXPECT_FALSE(m("*a*a*a*a*a*b", longname.c_str()));
}

TEST(Glob, MalformedPatternsAreErrors)
{
	struct glob g;

	EXPECT_EQ(glob_compile(&g, ""), -1);
	EXPECT_NE(std::string(et_last_error()).find("empty"), std::string::npos);
	EXPECT_EQ(glob_compile(&g, "foo["), -1);
	EXPECT_NE(std::string(et_last_error()).find("'['"), std::string::npos);
	EXPECT_EQ(glob_compile(&g, "[!]"), -1);
	EXPECT_EQ(glob_compile(&g, "foo\\"), -1);
	EXPECT_NE(std::string(et_last_error()).find("backslash"), std::string::npos);
	EXPECT_EQ(glob_compile(&g, nullptr), -1);
}
