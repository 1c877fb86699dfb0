// SPDX-License-Identifier: MIT
// Symbol sources: the kernel's .symtab, --symbols as System.map or ELF
// (round trip through nm, and refusal of files for another kernel).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "tests/shim/earlytrace_shim.h"
#include "vmm/sites/sites.h"
#include "vmm/symbols/symbols.h"

namespace {

std::string image_path(const char *arch)
{
	return std::string(ET_TEST_IMAGES) + "/" + arch + ".elf";
}

int sh(const std::string &cmd)
{
	int st = system(cmd.c_str());
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

std::string slurp_text(const std::string &path)
{
	std::ifstream f(path);
	return std::string(std::istreambuf_iterator<char>(f), {});
}

void spit(const std::string &path, const std::string &text)
{
	std::ofstream(path) << text;
}

// A scratch directory with nm's System.map and a stripped copy of each image.
class Symbols : public ::testing::Test {
protected:
	static void SetUpTestSuite()
	{
		char tmpl[] = "/tmp/et-symbols-XXXXXX";
		ASSERT_NE(mkdtemp(tmpl), nullptr);
		dir = tmpl;
		for (const char *a : { "x86_64", "i386" }) {
			ASSERT_EQ(sh("nm -n " + image_path(a) + " > " + dir + "/" + a + ".map"), 0);
			ASSERT_EQ(sh("objcopy --strip-all " + image_path(a) + " " + dir + "/" + a +
				     ".stripped"),
				  0);
		}
	}
	static void TearDownTestSuite() { sh("rm -rf " + dir); }
	void TearDown() override
	{
		symbols_free(&syms);
		kernel_image_close(&img);
	}
	int load(const std::string &kernel, const char *symbols)
	{
		symbols_free(&syms);
		kernel_image_close(&img);
		if (kernel_image_open(&img, kernel.c_str()))
			return -1;
		return symbols_load(&syms, &img, symbols);
	}
	// "name vaddr paddr kind" for every verified site.
	std::vector<std::string> site_list()
	{
		struct site_table tab = {};
		std::vector<std::string> out;

		EXPECT_EQ(sites_find(&tab, &img, &syms), 0) << et_last_error();
		for (size_t i = 0; i < tab.nr; i++) {
			std::ostringstream s;
			s << (tab.sites[i].name ? tab.sites[i].name : "?") << ' ' << std::hex
			  << tab.sites[i].vaddr << ' ' << tab.sites[i].paddr << ' '
			  << site_kind_name(tab.sites[i].kind) << ' '
			  << site_reject_tag(tab.sites[i].reject);
			out.push_back(s.str());
		}
		sites_free(&tab);
		return out;
	}
	static std::string dir;
	struct kernel_image img = {};
	struct symbols syms = {};
};

std::string Symbols::dir;

} // namespace

TEST_F(Symbols, KernelSymtabIsPreferred)
{
	ASSERT_EQ(load(image_path("x86_64"), nullptr), 0) << et_last_error();
	EXPECT_EQ(syms.source, SYM_SOURCE_ELF_SYMTAB);
	EXPECT_STREQ(sym_source_name(syms.source), "kernel .symtab");
	uint64_t a;
	EXPECT_EQ(symbols_addr(&syms, "__start_mcount_loc", &a), 0);
	EXPECT_EQ(symbols_addr(&syms, "no_such_symbol", &a), -1);
}

TEST_F(Symbols, SystemMapRoundTripGivesTheSameSites)
{
	for (const char *a : { "x86_64", "i386" }) {
		ASSERT_EQ(load(image_path(a), nullptr), 0) << et_last_error();
		auto want = site_list();
		ASSERT_FALSE(want.empty());

		// A matching map is accepted next to the kernel's own .symtab...
		ASSERT_EQ(load(image_path(a), (dir + "/" + a + ".map").c_str()), 0)
			<< et_last_error();
		EXPECT_EQ(syms.source, SYM_SOURCE_ELF_SYMTAB);
		// ...and is what names a stripped copy's sites.
		ASSERT_EQ(load(dir + "/" + a + ".stripped", (dir + "/" + a + ".map").c_str()), 0)
			<< et_last_error();
		EXPECT_EQ(syms.source, SYM_SOURCE_SYSTEM_MAP);
		EXPECT_EQ(site_list(), want) << a;

		// An ELF with .symtab works the same way.
		ASSERT_EQ(load(dir + "/" + a + ".stripped", image_path(a).c_str()), 0)
			<< et_last_error();
		EXPECT_EQ(syms.source, SYM_SOURCE_FILE_ELF);
		EXPECT_EQ(site_list(), want) << a;
	}
}

TEST_F(Symbols, StrippedKernelWithoutSourcesIsAClearError)
{
	EXPECT_EQ(load(dir + "/x86_64.stripped", nullptr), -1);
	std::string err = et_last_error();
	EXPECT_NE(err.find("no symbols"), std::string::npos) << err;
	EXPECT_NE(err.find("kallsyms"), std::string::npos) << err;
}

TEST_F(Symbols, MapForAnotherKernelIsRefused)
{
	std::string other = dir + "/i386.map";
	EXPECT_EQ(load(dir + "/x86_64.stripped", other.c_str()), -1);
	EXPECT_NE(std::string(et_last_error()).find("does not match"), std::string::npos)
		<< et_last_error();
	// Also when the kernel has its own .symtab to compare with.
	EXPECT_EQ(load(image_path("x86_64"), other.c_str()), -1);
	EXPECT_NE(std::string(et_last_error()).find("does not match"), std::string::npos);
	// And an ELF for another kernel.
	EXPECT_EQ(load(dir + "/i386.stripped", image_path("x86_64").c_str()), -1);
	EXPECT_NE(std::string(et_last_error()).find("does not match"), std::string::npos);

	// The right kernel's map with every address moved by 16 bytes.
	std::istringstream in(slurp_text(dir + "/x86_64.map"));
	std::ostringstream out;
	std::string addr, type, name;
	while (in >> addr >> type >> name) {
		char buf[32];
		snprintf(buf, sizeof(buf), "%016llx", std::stoull(addr, nullptr, 16) + 16);
		out << buf << ' ' << type << ' ' << name << '\n';
	}
	spit(dir + "/shifted.map", out.str());
	EXPECT_EQ(load(dir + "/x86_64.stripped", (dir + "/shifted.map").c_str()), -1);
	EXPECT_NE(std::string(et_last_error()).find("does not match"), std::string::npos);
	EXPECT_EQ(load(image_path("x86_64"), (dir + "/shifted.map").c_str()), -1);
}

TEST_F(Symbols, MalformedMapsAreErrorsWithTheLine)
{
	spit(dir + "/bad.map", "ffffffff80100000 T ok\nnot a map line at all\n");
	EXPECT_EQ(load(dir + "/x86_64.stripped", (dir + "/bad.map").c_str()), -1);
	EXPECT_NE(std::string(et_last_error()).find("bad.map:2"), std::string::npos)
		<< et_last_error();
	spit(dir + "/empty.map", "\n\n");
	EXPECT_EQ(load(dir + "/x86_64.stripped", (dir + "/empty.map").c_str()), -1);
	EXPECT_EQ(load(dir + "/x86_64.stripped", "/nonexistent.map"), -1);
	EXPECT_NE(std::string(et_last_error()).find("/nonexistent.map"), std::string::npos);
}

TEST(SymbolsParse, SystemMapFormatDetails)
{
	const char text[] = "0000000000000000 A absolute_sym\r\n"
			    "\n"
			    "ffffffff81000000 T _text\r\n"
			    "ffffffff81000010 t local_fn\t[some_module]\n"
			    "                 U undefined_sym\n"
			    "ffffffff81000000 T startup_64";
	struct symbols s;
	ASSERT_EQ(symbols_parse_system_map(&s, text, sizeof(text) - 1, "t.map"), 0)
		<< et_last_error();
	EXPECT_EQ(s.source, SYM_SOURCE_SYSTEM_MAP);
	ASSERT_EQ(s.tab.nr, 3u);
	// Aliases: the name with fewer leading underscores first, like kallsyms.
	EXPECT_STREQ(s.tab.syms[0].name, "startup_64");
	EXPECT_STREQ(s.tab.syms[1].name, "_text");
	EXPECT_EQ(s.tab.syms[2].type, 't');
	char buf[64];
	EXPECT_STREQ(symtab_format(&s.tab, 0xffffffff81000014ull, buf, sizeof(buf)),
		     "local_fn+0x4");
	symbols_free(&s);

	const char *bad[] = { "zzzz T x\n", "ffff TT x\n", "ffff T\n",
			      "11112222333344445 T toolong\n", "ffff T a b\n" };
	for (auto b : bad)
		EXPECT_EQ(symbols_parse_system_map(&s, b, strlen(b), "b.map"), -1) << b;
}

TEST(SymbolsCli, SymbolsOptionEndToEnd)
{
	char tmpl[] = "/tmp/et-symcli-XXXXXX";
	ASSERT_NE(mkdtemp(tmpl), nullptr);
	std::string d = tmpl, bin = ET_TEST_BIN;
	ASSERT_EQ(sh("nm -n " + image_path("i386") + " > " + d + "/i.map && objcopy --strip-all " +
		     image_path("x86_64") + " " + d + "/x.elf && nm -n " + image_path("x86_64") +
		     " > " + d + "/x.map"),
		  0);
	EXPECT_EQ(sh(bin + " sites --kernel " + d + "/x.elf --symbols " + d + "/x.map > " + d +
		     "/out 2>&1"),
		  0);
	EXPECT_NE(slurp_text(d + "/out").find("# symbols: --symbols System.map"), std::string::npos);
	EXPECT_EQ(sh(bin + " sites --kernel " + d + "/x.elf --symbols " + d + "/i.map > " + d +
		     "/out 2>&1"),
		  1);
	std::string err = slurp_text(d + "/out");
	EXPECT_EQ(err.rfind("earlytrace: ", 0), 0u) << err;
	EXPECT_NE(err.find("does not match"), std::string::npos) << err;
	sh("rm -rf " + d);
}
