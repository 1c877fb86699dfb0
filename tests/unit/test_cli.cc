// SPDX-License-Identifier: MIT
// Option parsing for `earlytrace run`: values, defaults and every refusal.
#include <gtest/gtest.h>

#include <cstring>
#include <list>
#include <string>
#include <vector>

#include "tests/shim/earlytrace_shim.h"

namespace {

// The parsed options point into argv, so the strings must outlive the
// test: keep every argument list for the life of the process.
int parse(std::vector<std::string> args_in, struct run_options *opts)
{
	static std::list<std::vector<std::string>> keep;
	keep.push_back(std::move(args_in));
	std::vector<std::string> &args = keep.back();
	std::vector<char *> argv;
	args.insert(args.begin(), "run");
	for (auto &a : args)
		argv.push_back(&a[0]);
	argv.push_back(nullptr);
	return cli_parse_run((int)args.size(), argv.data(), opts);
}

std::string error_of(std::vector<std::string> args)
{
	struct run_options opts;
	EXPECT_EQ(parse(args, &opts), -1);
	return et_last_error();
}

} // namespace

TEST(Cli, Sizes)
{
	uint64_t b;
	ASSERT_EQ(cli_parse_size("512", &b), 0);
	EXPECT_EQ(b, 512ull << 20);
	ASSERT_EQ(cli_parse_size("64M", &b), 0);
	EXPECT_EQ(b, 64ull << 20);
	ASSERT_EQ(cli_parse_size("2G", &b), 0);
	EXPECT_EQ(b, 2ull << 30);
	ASSERT_EQ(cli_parse_size("2g", &b), 0);
	EXPECT_EQ(b, 2ull << 30);
	ASSERT_EQ(cli_parse_size("1024k", &b), 0);
	EXPECT_EQ(b, 1ull << 20);
	ASSERT_EQ(cli_parse_size("256MiB", &b), 0);
	EXPECT_EQ(b, 256ull << 20);
	ASSERT_EQ(cli_parse_size("4096B", &b), 0);
	EXPECT_EQ(b, 4096u);
	EXPECT_EQ(cli_parse_size("", &b), -1);
	EXPECT_EQ(cli_parse_size("-1", &b), -1);
	EXPECT_EQ(cli_parse_size("12X", &b), -1);
	EXPECT_EQ(cli_parse_size("12MX", &b), -1);
	EXPECT_EQ(cli_parse_size("99999999999999999999", &b), -1);
	EXPECT_EQ(cli_parse_size("99999999999T", &b), -1);
	EXPECT_EQ(cli_parse_size("M", &b), -1);
}

TEST(Cli, Seconds)
{
	double s;
	ASSERT_EQ(cli_parse_seconds("2.5", &s), 0);
	EXPECT_DOUBLE_EQ(s, 2.5);
	EXPECT_EQ(cli_parse_seconds("0", &s), -1);
	EXPECT_EQ(cli_parse_seconds("-3", &s), -1);
	EXPECT_EQ(cli_parse_seconds("abc", &s), -1);
	EXPECT_EQ(cli_parse_seconds("5s", &s), -1);
	EXPECT_EQ(cli_parse_seconds("nan", &s), -1);
	EXPECT_EQ(cli_parse_seconds("inf", &s), -1);
}

TEST(Cli, RunDefaultsAndValues)
{
	struct run_options o;
	ASSERT_EQ(parse({ "--kernel", "k.elf" }, &o), 0) << et_last_error();
	EXPECT_STREQ(o.kernel, "k.elf");
	EXPECT_EQ(o.initrd, nullptr);
	EXPECT_EQ(o.append, nullptr);
	EXPECT_EQ(o.mem_size, RUN_DEFAULT_MEM);
	EXPECT_EQ(o.timeout_s, 0.0);
	EXPECT_STREQ(o.cpu_model, "auto");
	EXPECT_EQ(o.boot, BOOT_AUTO);
	EXPECT_FALSE(o.debug_io);
	EXPECT_EQ(o.on_panic, PANIC_ACTION_EXIT);
	EXPECT_EQ(o.nr_cpus, 1u);

	ASSERT_EQ(parse({ "-k", "k.elf", "--cpus", "4" }, &o), 0) << et_last_error();
	EXPECT_EQ(o.nr_cpus, 4u);
	EXPECT_TRUE(o.given & RUN_GIVEN_CPUS);

	ASSERT_EQ(parse({ "-k", "k.elf", "-i", "rd.img", "-p", "console=ttyS0 quiet", "-m", "1G",
			  "--timeout", "30", "--cpu", "nested-pvm", "--debug-io", "--boot", "linux64",
			  "--on-panic", "continue" }, &o), 0)
		<< et_last_error();
	EXPECT_STREQ(o.initrd, "rd.img");
	EXPECT_STREQ(o.append, "console=ttyS0 quiet");
	EXPECT_EQ(o.mem_size, 1ull << 30);
	EXPECT_EQ(o.timeout_s, 30.0);
	EXPECT_STREQ(o.cpu_model, "nested-pvm");
	EXPECT_TRUE(o.debug_io);
	EXPECT_EQ(o.boot, BOOT_LINUX64);
	EXPECT_EQ(o.on_panic, PANIC_ACTION_CONTINUE);

	ASSERT_EQ(parse({ "--kernel=k.elf", "--mem=128M", "--append=", "--on-panic=exit" }, &o), 0);
	EXPECT_EQ(o.on_panic, PANIC_ACTION_EXIT);
	EXPECT_EQ(o.mem_size, 128ull << 20);
	EXPECT_STREQ(o.append, "");
}

TEST(Cli, HelpNeedsNoKernel)
{
	struct run_options o;
	ASSERT_EQ(parse({ "--help" }, &o), 0);
	EXPECT_TRUE(o.help);
	ASSERT_EQ(parse({ "--cpu", "help" }, &o), 0);
	EXPECT_TRUE(o.list_cpu_models);
}

TEST(Cli, Refusals)
{
	EXPECT_NE(error_of({}).find("--kernel FILE is required"), std::string::npos);
	EXPECT_NE(error_of({ "-k", "k", "--bogus" }).find("unknown option '--bogus'"), std::string::npos);
	EXPECT_NE(error_of({ "-k", "k", "-z" }).find("unknown option '-z'"), std::string::npos);
	EXPECT_NE(error_of({ "-k" }).find("needs a value"), std::string::npos);
	EXPECT_NE(error_of({ "-k", "k", "--mem" }).find("needs a value"), std::string::npos);
	EXPECT_NE(error_of({ "-k", "k", "--mem", "lots" }).find("--mem: invalid size 'lots'"),
		  std::string::npos);
	EXPECT_NE(error_of({ "-k", "k", "--timeout", "-1" }).find("--timeout: invalid time"),
		  std::string::npos);
	EXPECT_NE(error_of({ "-k", "k", "--cpu", "486" }).find("unknown CPU model '486'"),
		  std::string::npos);
	EXPECT_NE(error_of({ "-k", "k", "--on-panic", "pause" })
			  .find("--on-panic: invalid action 'pause': expected exit or continue"),
		  std::string::npos);
	for (const char *bad : { "0", "-1", "two", "2x", "", "255", "99999999999" })
		EXPECT_NE(error_of({ "-k", "k", "--cpus", bad })
				  .find(std::string("--cpus: invalid number of vCPUs '") + bad +
					"': expected 1 to 254"),
			  std::string::npos)
			<< bad;
	EXPECT_NE(error_of({ "-k", "k", "extra" }).find("unexpected argument 'extra'"),
		  std::string::npos);
}
