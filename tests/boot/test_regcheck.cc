// SPDX-License-Identifier: MIT
// regcheck (images/common/regcheck.h): the test kernels call a traced
// function with every general register, the arithmetic flags and DF loaded
// with a pattern, and compare them right after its site. Whatever a tracing
// mode puts at the site (an int3 the VMM steps over, a call to a trampoline)
// must leave them all as they were, and still record every call.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "tests/boot/vmm_process.h"
#include "tests/fixtures.h"

namespace {

// REGCHECK_CALLS in images/common/regcheck.h: calls per phase.
constexpr long kCallsPerPhase = 4;

struct Csv {
	long calls = 0;		// rows for the function
	long other_source = 0;	// of those, rows with another source
};

// Rows of `earlytrace report --format csv` whose function is fn; the columns
// are seconds,tsc,cpu,source,function,... (docs/trace-format.md).
Csv count_csv(const std::string &csv, const std::string &fn, const std::string &source)
{
	Csv c;
	std::istringstream in(csv);
	std::string line;
	while (std::getline(in, line)) {
		std::vector<std::string> col;
		std::istringstream fields(line);
		std::string f;
		while (col.size() < 5 && std::getline(fields, f, ','))
			col.push_back(f);
		if (col.size() < 5 || col[4] != fn)
			continue;
		c.calls++;
		c.other_source += col[3] != source;
	}
	return c;
}

// The phases a kernel runs regcheck in, from what it printed: i386 runs a
// second one at its alias only where the KVM allows 32-bit paging.
std::vector<std::string> phases(const std::string &arch, const std::string &out)
{
	if (arch == "x86_64")
		return { "longmode" };
	if (out.find("paging: on, alias") != std::string::npos)
		return { "prepaging", "paging" };
	return { "prepaging" };
}

// Every phase printed its ok line, and nothing failed.
void expect_ok_lines(const std::string &arch, const std::string &out)
{
	const std::string regs = arch == "x86_64" ? "17" : "9";
	for (const std::string &phase : phases(arch, out)) {
		std::string line = "regcheck: ok (" + std::to_string(kCallsPerPhase) + " calls, " + regs +
				   " registers and flags each) phase=" + phase + "\n";
		EXPECT_NE(out.find(line), std::string::npos) << line << out;
	}
	EXPECT_EQ(out.find("regcheck: FAIL"), std::string::npos) << out;
	EXPECT_NE(out.find("done\n"), std::string::npos) << out;
}

using Param = std::tuple<const char *, const char *>; // arch, --mode

class RegcheckTrace : public ::testing::TestWithParam<Param> {
protected:
	// Breakpoint mode needs a KVM that reports int3s (fixtures.h).
	void SetUp() override { REQUIRE_MODE(std::get<1>(GetParam())); }
};

} // namespace

TEST_P(RegcheckTrace, RegistersAndFlagsSurviveATracedSite)
{
	REQUIRE_KVM();
	const std::string arch = std::get<0>(GetParam());
	const std::string mode = std::get<1>(GetParam());
	TempDir dir;
	const std::string trace = dir.file("regcheck.trace");

	VmmResult r = run_vmm({ "trace", "--kernel", image(arch.c_str()), "--mode", mode, "--mem", "32M",
				"--append", "regcheck", "--output", trace, "--timeout", "120" });
	ASSERT_EQ(r.status, 0) << r.err << r.out;
	expect_ok_lines(arch, r.out);

	VmmResult rep = run_vmm({ "report", trace, "--format", "csv" });
	ASSERT_EQ(rep.status, 0) << rep.err;
	// Every call reached the tracer, by the mechanism asked for.
	const std::string source = mode == "int3" ? "breakpoint" : "trampoline";
	Csv c = count_csv(rep.out, "regcheck_target", source);
	EXPECT_EQ(c.calls, kCallsPerPhase * (long)phases(arch, r.out).size()) << rep.out;
	EXPECT_EQ(c.other_source, 0) << rep.out;
}

INSTANTIATE_TEST_SUITE_P(Boot, RegcheckTrace,
			 ::testing::Combine(::testing::Values("i386", "x86_64"),
					    ::testing::Values("int3", "trampoline")),
			 [](const ::testing::TestParamInfo<Param> &p) {
				 return std::string(std::get<0>(p.param)) + "_" +
					std::get<1>(p.param);
			 });

// Untraced, the site is a plain nop: the check itself must hold.
TEST(RegcheckBoot, UntracedRunPasses)
{
	REQUIRE_KVM();
	for (const char *arch : { "i386", "x86_64" }) {
		VmmResult r = run_vmm({ "run", "--kernel", image(arch), "--append", "regcheck", "--timeout",
					"60" });
		ASSERT_EQ(r.status, 0) << arch << r.err << r.out;
		expect_ok_lines(arch, r.out);
	}
}
