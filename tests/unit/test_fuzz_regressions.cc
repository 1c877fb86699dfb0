// SPDX-License-Identifier: MIT
// Every input the fuzzers ever crashed on (tests/fuzz-regressions/<target>/)
// and every seed (tests/fuzz-corpus/<target>/), fed through the same entry
// points the libFuzzer binaries use (fuzz/targets*.c). Under the sanitizer
// build any out-of-bounds access, leak or undefined behaviour they bring
// back fails the run; in both builds a crash does.
#include <gtest/gtest.h>

#include <dirent.h>

#include <algorithm>
#include <string>
#include <vector>

#include "fuzz/targets.h"
#include "tests/fixtures.h"
#include "tests/shim/earlytrace_shim.h"
#include "tests/unit/ftrace_ring_sim.h"

namespace {

// Regular files in dir, sorted; empty when it does not exist.
std::vector<std::string> files_in(const std::string &dir)
{
	std::vector<std::string> out;
	DIR *d = opendir(dir.c_str());
	if (!d)
		return out;
	while (struct dirent *e = readdir(d)) {
		std::string name = e->d_name;
		if (name[0] == '.')
			continue;
		out.push_back(dir + "/" + name);
	}
	closedir(d);
	std::sort(out.begin(), out.end());
	return out;
}

// Feeds every file under tests/<kind>/<target>/ to the target; the count.
size_t feed(const char *target, const char *kind)
{
	const struct fuzz_target *t = fuzz_target_find(target);
	EXPECT_NE(t, nullptr) << target;
	if (!t)
		return 0;
	size_t n = 0;
	for (const std::string &path : files_in(std::string(ET_TEST_SRCDIR) + "/" + kind + "/" + target)) {
		SCOPED_TRACE(path);
		std::vector<uint8_t> bytes = read_file_bytes(path);
		t->run(bytes.data(), bytes.size());
		n++;
	}
	return n;
}

void check_target(const char *target)
{
	EXPECT_GT(feed(target, "fuzz-corpus"), 0u) << "no seeds in tests/fuzz-corpus/" << target;
	feed(target, "fuzz-regressions");
}

TEST(FuzzRegression, EveryTargetHasSeeds)
{
	for (const struct fuzz_target *t = fuzz_targets; t->name; t++)
		EXPECT_FALSE(files_in(std::string(ET_TEST_SRCDIR) + "/fuzz-corpus/" + t->name).empty())
			<< t->name;
}

TEST(FuzzRegression, Elf) { check_target("elf"); }
TEST(FuzzRegression, BzImage) { check_target("bzimage"); }
TEST(FuzzRegression, SystemMap) { check_target("system_map"); }
TEST(FuzzRegression, Kallsyms) { check_target("kallsyms"); }
TEST(FuzzRegression, TraceReader) { check_target("trace_reader"); }
TEST(FuzzRegression, Hypercall) { check_target("hypercall"); }
TEST(FuzzRegression, TrampDrain) { check_target("tramp_drain"); }
TEST(FuzzRegression, PageWalk) { check_target("page_walk"); }
TEST(FuzzRegression, Expect) { check_target("expect"); }
TEST(FuzzRegression, FtracePage) { check_target("ftrace_page"); }
TEST(FuzzRegression, FtraceRing) { check_target("ftrace_ring"); }
TEST(FuzzRegression, FtraceFill)
{
	check_target("ftrace_fill");
	// The seeds reach both ends: fills that succeed (and so are read back
	// and checked) and rings the fill refuses.
	for (const char *name : { "fits.bin", "overflows.bin", "graph.bin" }) {
		std::vector<uint8_t> b = read_file_bytes(std::string(ET_TEST_SRCDIR) +
							 "/fuzz-corpus/ftrace_fill/" + name);
		EXPECT_EQ(fuzz_ftrace_fill(b.data(), b.size()), 0) << name << ": " << et_last_error();
	}
	for (const char *name : { "no-overwrite.bin", "not-empty.bin", "loop.bin" }) {
		std::vector<uint8_t> b = read_file_bytes(std::string(ET_TEST_SRCDIR) +
							 "/fuzz-corpus/ftrace_fill/" + name);
		EXPECT_EQ(fuzz_ftrace_fill(b.data(), b.size()), -1) << name;
	}
}

// The ftrace targets fuzz with a layout written out in fuzz/targets_ftrace.c;
// it must be the one the committed BTF fixture gives.
TEST(FuzzRegression, FtraceLayoutIsTheFixtures)
{
	ftrace_layout fuzz, fix = fixture_layout();
	fuzz_ftrace_layout(&fuzz);
	fix.btf_types = 0;
	EXPECT_EQ(memcmp(&fuzz, &fix, sizeof(fix)), 0);
}
TEST(FuzzRegression, PanicMessage) { check_target("panic_message"); }
TEST(FuzzRegression, PrintkFormat) { check_target("printk_format"); }
TEST(FuzzRegression, DomainXml) { check_target("domain_xml"); }
TEST(FuzzRegression, TracedatReadback) { check_target("tracedat_readback"); }

// What the fuzzers found, checked for the fix itself where a sanitizer
// alone would not notice (the inputs above only prove there is no crash).

// An lzma header asking for a 1.5 GiB dictionary: refused before liblzma
// allocates it, with a one-line error.
TEST(FuzzRegression, LzmaHugeDictionaryIsRefused)
{
	std::vector<uint8_t> b =
		read_file_bytes(std::string(ET_TEST_SRCDIR) + "/fuzz-regressions/bzimage/lzma-dict-1.5GiB.bin");
	ASSERT_GT(b.size(), 4u);
	uint8_t *out = nullptr;
	EXPECT_EQ(decompress(b.data() + 4, b.size() - 4, 4096, &out), -1);
	EXPECT_NE(std::string(et_last_error()).find("needs more than 256 MiB"), std::string::npos)
		<< et_last_error();
}

// A 615-byte bzImage whose setup header (jump byte 0x6a: up to 0x26c)
// runs past the end of the file: it was copied from beyond the buffer.
TEST(FuzzRegression, BzImageSetupHeaderPastTheEndIsRefused)
{
	std::vector<uint8_t> b = read_file_bytes(std::string(ET_TEST_SRCDIR) +
						 "/fuzz-regressions/bzimage/setup-header-past-end.bin");
	ASSERT_EQ(b.size(), 615u);
	b.shrink_to_fit();
	struct bzimage_info info;
	EXPECT_EQ(bzimage_parse(b.data(), b.size(), &info), -1);
	EXPECT_NE(std::string(et_last_error()).find("cannot hold the 123-byte setup header"),
		  std::string::npos)
		<< et_last_error();
}

// Empty and tiny inputs are where length checks go wrong first.
TEST(FuzzRegression, EmptyAndTinyInputs)
{
	static const uint8_t ones[64] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	for (const struct fuzz_target *t = fuzz_targets; t->name; t++) {
		SCOPED_TRACE(t->name);
		t->run(nullptr, 0);
		for (size_t n = 1; n <= sizeof(ones); n *= 2)
			t->run(ones, n);
	}
}

} // namespace
