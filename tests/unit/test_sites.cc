// SPDX-License-Identifier: MIT
// Site discovery, verification and selection on our test kernels, on
// corrupted copies of them, and through the `sites` command.
#include <gtest/gtest.h>

#include <elf.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "tests/fixtures.h"
#include "tests/shim/earlytrace_shim.h"
#include "vmm/cmd/sites.h"
#include "vmm/sites/filter.h"
#include "vmm/sites/sites.h"
#include "vmm/symbols/symbols.h"

namespace {

std::string image_path(const char *arch)
{
	return std::string(ET_TEST_IMAGES) + "/" + arch + ".elf";
}

// Runs a shell command; returns its exit status and stdout+stderr.
int run(const std::string &cmd, std::string *out)
{
	FILE *p = popen((cmd + " 2>&1").c_str(), "r");
	char buf[4096];
	size_t n;

	out->clear();
	if (!p)
		return -1;
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		out->append(buf, n);
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// File offset and size of the __mcount_loc section, read with plain ELF
// structures so the test does not share code with what it checks.
template <typename Ehdr, typename Shdr>
bool mcount_section(const std::vector<uint8_t> &b, size_t *off, size_t *size, uint64_t *addr)
{
	auto *eh = reinterpret_cast<const Ehdr *>(b.data());
	auto *sh = reinterpret_cast<const Shdr *>(b.data() + eh->e_shoff);
	const char *names = reinterpret_cast<const char *>(b.data() + sh[eh->e_shstrndx].sh_offset);

	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (strcmp(names + sh[i].sh_name, "__mcount_loc"))
			continue;
		*off = sh[i].sh_offset;
		*size = sh[i].sh_size;
		*addr = sh[i].sh_addr;
		return true;
	}
	return false;
}

struct Found {
	struct kernel_image img = {};
	struct symbols syms = {};
	struct site_table tab = {};
	int ret = -1;

	Found(const std::vector<uint8_t> &bytes, const char *symbols_path = nullptr)
	{
		if (kernel_image_parse(&img, bytes.data(), bytes.size(), "test.elf"))
			return;
		if (symbols_load(&syms, &img, symbols_path))
			return;
		ret = sites_find(&tab, &img, &syms);
	}
	~Found()
	{
		sites_free(&tab);
		symbols_free(&syms);
		kernel_image_close(&img);
	}
};

class Sites : public ::testing::TestWithParam<const char *> {
protected:
	void SetUp() override
	{
		bytes = read_file_bytes(image_path(GetParam()));
		ASSERT_GT(bytes.size(), 64u);
		is64 = bytes[EI_CLASS] == ELFCLASS64;
		ptr = is64 ? 8 : 4;
		bool ok = is64 ? mcount_section<Elf64_Ehdr, Elf64_Shdr>(bytes, &mc_off, &mc_size, &mc_addr)
			       : mcount_section<Elf32_Ehdr, Elf32_Shdr>(bytes, &mc_off, &mc_size, &mc_addr);
		ASSERT_TRUE(ok);
	}
	uint64_t entry(size_t i)
	{
		uint64_t v = 0;
		memcpy(&v, bytes.data() + mc_off + i * ptr, ptr);
		return v;
	}
	void set_entry(size_t i, uint64_t v) { memcpy(bytes.data() + mc_off + i * ptr, &v, ptr); }
	std::vector<uint8_t> bytes;
	bool is64 = false;
	unsigned ptr = 0;
	size_t mc_off = 0, mc_size = 0;
	uint64_t mc_addr = 0;
};

} // namespace

TEST_P(Sites, EveryMcountEntryIsAVerifiedNamedSite)
{
	Found f(bytes);
	ASSERT_EQ(f.ret, 0) << et_last_error();
	EXPECT_EQ(f.syms.source, SYM_SOURCE_ELF_SYMTAB);
	EXPECT_EQ(f.tab.origin, SITE_ORIGIN_MCOUNT_LOC);
	ASSERT_EQ(f.tab.nr, mc_size / ptr);
	EXPECT_EQ(f.tab.nr_verified, f.tab.nr);
	EXPECT_EQ(f.tab.nr_rejected, 0u);

	std::set<uint64_t> recorded;
	for (size_t i = 0; i < f.tab.nr; i++)
		recorded.insert(entry(i));
	for (size_t i = 0; i < f.tab.nr; i++) {
		const struct site *s = &f.tab.sites[i];
		uint64_t off = 1;
		const struct symbol *sym = symtab_lookup(&f.syms.tab, s->vaddr, &off);

		EXPECT_TRUE(recorded.count(s->vaddr));
		ASSERT_NE(sym, nullptr);
		EXPECT_EQ(off, 0u);
		EXPECT_STREQ(s->name, sym->name);
		EXPECT_EQ(s->kind, SITE_KIND_NOP5);
		if (i) {
			EXPECT_LT(f.tab.sites[i - 1].vaddr, s->vaddr);
		}
		// x86_64 runs at -2 GiB + 1 MiB but loads at 1 MiB; i386 has VMA == LMA.
		if (is64)
			EXPECT_EQ(s->paddr, s->vaddr - 0xffffffff80000000ull);
		else
			EXPECT_EQ(s->paddr, s->vaddr);
	}
}

TEST_P(Sites, FlippedCodeBytesAreRejectedAsBadBytes)
{
	uint64_t v = entry(0);
	// Text is the first PT_LOAD; find the file offset via the section-free
	// rule both images follow: file offset = 0x1000 + (vaddr - text start).
	uint64_t text = is64 ? 0xffffffff80100000ull : 0x100000ull;
	bytes[0x1000 + (v - text)] = 0x90;
	Found f(bytes);
	ASSERT_EQ(f.ret, 0) << et_last_error();
	EXPECT_EQ(f.tab.nr_rejected, 1u);
	EXPECT_EQ(f.tab.rejects[SITE_REJECT_BYTES], 1u);
	for (size_t i = 0; i < f.tab.nr; i++)
		if (f.tab.sites[i].vaddr == v) {
			EXPECT_EQ(f.tab.sites[i].reject, SITE_REJECT_BYTES);
		}
}

TEST_P(Sites, CorruptMcountEntriesAreRejectedWithTheirReason)
{
	size_t n = mc_size / ptr;
	ASSERT_GE(n, 5u);
	set_entry(0, entry(0) + 1);	    // inside the function: bytes differ
	set_entry(1, 0x10);		    // not in the image at all
	set_entry(2, entry(4));		    // recorded twice
	set_entry(3, mc_addr);		    // the table itself: data, not a site
	Found f(bytes);
	ASSERT_EQ(f.ret, 0) << et_last_error();
	EXPECT_EQ(f.tab.nr, n);
	EXPECT_EQ(f.tab.nr_rejected, 4u);
	EXPECT_EQ(f.tab.rejects[SITE_REJECT_UNMAPPED], 1u);
	EXPECT_EQ(f.tab.rejects[SITE_REJECT_DUPLICATE], 1u);
	EXPECT_EQ(f.tab.rejects[SITE_REJECT_BYTES], 2u);

	struct site_filter flt = {};
	struct site_selection sel = {};
	ASSERT_EQ(site_select(&f.tab, &flt, &sel), 0);
	EXPECT_EQ(sel.nr, n - 4);
	for (size_t i = 0; i < f.tab.nr; i++)
		EXPECT_EQ(f.tab.sites[i].selected, f.tab.sites[i].reject == SITE_OK);
	EXPECT_FALSE(site_selection_contains(&sel, 0x10));
	site_selection_free(&sel);
}

TEST_P(Sites, FiltersFollowFtraceSemantics)
{
	Found f(bytes);
	ASSERT_EQ(f.ret, 0) << et_last_error();
	auto select = [&](std::vector<const char *> filters, std::vector<const char *> notrace) {
		struct site_filter flt = {};
		struct site_selection sel = {};
		std::set<std::string> names;

		for (auto p : filters)
			EXPECT_EQ(site_filter_add(&flt, p, false), 0);
		for (auto p : notrace)
			EXPECT_EQ(site_filter_add(&flt, p, true), 0);
		if (site_select(&f.tab, &flt, &sel) == 0) {
			for (size_t i = 0; i < f.tab.nr; i++)
				if (f.tab.sites[i].selected) {
					names.insert(f.tab.sites[i].name);
					EXPECT_TRUE(site_selection_contains(&sel, f.tab.sites[i].vaddr));
				} else {
					EXPECT_FALSE(site_selection_contains(&sel, f.tab.sites[i].vaddr));
				}
			EXPECT_EQ(sel.nr, names.size());
		} else {
			names.insert("<error>");
		}
		site_selection_free(&sel);
		site_filter_free(&flt);
		return names;
	};
	auto all = select({}, {});
	EXPECT_EQ(all.size(), f.tab.nr);
	EXPECT_TRUE(all.count("uart_putc"));
	EXPECT_EQ(select({ "uart_putc" }, {}), std::set<std::string>{ "uart_putc" });
	auto start_info = select({ "start_info_*" }, {});
	EXPECT_GE(start_info.size(), 3u);
	for (auto &n : start_info)
		EXPECT_EQ(n.rfind("start_info_", 0), 0u);
	// notrace removes from the filter, and from "all" without a filter.
	auto fewer = select({ "start_info_*" }, { "*memmap" });
	EXPECT_EQ(fewer.size(), start_info.size() - 1);
	EXPECT_FALSE(fewer.count("start_info_print_memmap"));
	EXPECT_EQ(select({}, { "uart_putc" }).size(), all.size() - 1);
	// Both naming the same function: notrace wins.
	EXPECT_TRUE(select({ "uart_putc" }, { "uart_putc" }).empty());
	// Several filters add up; a glob and an exact name may overlap.
	auto two = select({ "uart_putc", "uart_*" }, {});
	EXPECT_TRUE(two.count("uart_putc"));
	// A filter matching nothing is refused, as ftrace refuses it.
	EXPECT_EQ(select({ "no_such_function" }, {}), std::set<std::string>{ "<error>" });
	EXPECT_NE(std::string(et_last_error()).find("no_such_function"), std::string::npos);
	// A notrace matching nothing is fine.
	EXPECT_EQ(select({}, { "no_such_function" }).size(), all.size());
}

TEST_P(Sites, TruncatedImagesAreErrorsNotCrashes)
{
	for (size_t len : { size_t(0), size_t(16), size_t(64), bytes.size() / 2, mc_off + 3,
			    bytes.size() - 1 }) {
		std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + len);
		Found f(cut);
		if (f.ret == 0) {
			EXPECT_LE(f.tab.nr_verified, mc_size / ptr);
		}
	}
}

INSTANTIATE_TEST_SUITE_P(SitesOn, Sites, ::testing::Values("x86_64", "i386"));

TEST(SitesCli, ListsSitesAndSummary)
{
	std::string out;
	ASSERT_EQ(run(std::string(ET_TEST_BIN) + " sites --kernel " + image_path("x86_64"), &out), 0)
		<< out;
	EXPECT_NE(out.find("uart_putc 0xffffffff801"), std::string::npos) << out;
	EXPECT_NE(out.find(" 0x10"), std::string::npos);
	EXPECT_NE(out.find(" nop5\n"), std::string::npos);
	EXPECT_NE(out.find("# symbols: kernel .symtab"), std::string::npos);
	// The images grow; the count must just agree with itself and the list.
	std::smatch m;
	ASSERT_TRUE(std::regex_search(out, m, std::regex("# sites: ([0-9]+) found in __mcount_loc[^,]*, "
							 "([0-9]+) verified, 0 rejected, ([0-9]+) selected")))
		<< out;
	EXPECT_EQ(m[1], m[2]);
	EXPECT_EQ(m[1], m[3]);
	EXPECT_EQ(std::to_string(std::count(out.begin(), out.end(), '\n') - 3), m[1].str());

	ASSERT_EQ(run(std::string(ET_TEST_BIN) + " sites --kernel " + image_path("x86_64") +
			      " --filter 'uart_*' --notrace uart_putc --filter start_info_get",
		      &out),
		  0)
		<< out;
	EXPECT_EQ(out.find("uart_putc 0x"), std::string::npos) << out;
	EXPECT_NE(out.find("start_info_get 0x"), std::string::npos) << out;

	// One function asked for: its line and a one-line summary, nothing else.
	ASSERT_EQ(run(std::string(ET_TEST_BIN) + " sites --kernel " + image_path("x86_64") +
			      " -f start_info_get",
		      &out),
		  0)
		<< out;
	ASSERT_TRUE(std::regex_match(out, std::regex("start_info_get 0x[0-9a-f]+ 0x[0-9a-f]+ nop5\n"
						     "# 1 selected of [0-9]+ sites \\([0-9]+ verified, 0 "
						     "rejected\\) in __mcount_loc[^\n]*; symbols: kernel "
						     "\\.symtab \\([0-9]+ symbols\\)\n")))
		<< out;
	// The source is not said twice ("kernel .symtab: kernel .symtab").
	ASSERT_EQ(run(std::string(ET_TEST_BIN) + " sites --kernel " + image_path("x86_64"), &out), 0);
	EXPECT_NE(out.find("\n# symbols: kernel .symtab ("), std::string::npos) << out;
}

// Rejections are grouped: each reason once, with its count, however many
// sites it turned away; the sites themselves are for --rejected.
TEST(SitesCli, RejectionReasonsAreSaidOnceWithACount)
{
	std::vector<site> s(6);
	site_table tab{};
	tab.sites = s.data();
	tab.nr = s.size();
	snprintf(tab.origin_desc, sizeof(tab.origin_desc), "__mcount_loc");
	for (size_t i = 0; i < 5; i++) {
		s[i].name = "f";
		s[i].reject = SITE_REJECT_BYTES;
	}
	s[5].name = "g";
	s[5].reject = SITE_REJECT_DUPLICATE;
	tab.nr_rejected = 6;
	tab.rejects[SITE_REJECT_BYTES] = 5;
	tab.rejects[SITE_REJECT_DUPLICATE] = 1;
	site_selection sel{};
	symbols syms{};
	syms.source = SYM_SOURCE_KALLSYMS;
	snprintf(syms.desc, sizeof(syms.desc), "kallsyms recovered from the image (9 symbols)");
	char *buf = nullptr;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	sites_print_summary(f, &tab, &sel, &syms, false, 1.0, 2.0);
	fclose(f);
	std::string out(buf, len);
	free(buf);
	std::string bytes = std::string("# rejected 5 (") + site_reject_tag(SITE_REJECT_BYTES) +
			    "): " + site_reject_reason(SITE_REJECT_BYTES) + "\n";
	EXPECT_NE(out.find(bytes), std::string::npos) << out;
	EXPECT_EQ(out.find(site_reject_reason(SITE_REJECT_BYTES)), out.rfind(site_reject_reason(SITE_REJECT_BYTES)))
		<< out; // once
	EXPECT_NE(out.find("# rejected 1 (" + std::string(site_reject_tag(SITE_REJECT_DUPLICATE))),
		  std::string::npos)
		<< out;
	EXPECT_NE(out.find("# symbols: kallsyms recovered from the image (9 symbols)\n"), std::string::npos)
		<< out;
	EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 6) << out;
}

TEST(SitesCli, BadInputIsOneLineErrorAndStatus1)
{
	const std::string bin = ET_TEST_BIN;
	const std::string k = " --kernel " + image_path("x86_64");
	const char *cases[] = {
		" sites",
		" sites --kernel /nonexistent/vmlinux",
		" sites --kernel /etc/hostname",
		" sites --filter 'foo[' --kernel /nonexistent",
		" sites --bogus",
	};
	std::string out;
	for (auto c : cases) {
		EXPECT_EQ(run(bin + c, &out), 1) << c;
		EXPECT_EQ(out.rfind("earlytrace: ", 0), 0u) << c << ": " << out;
		EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << c << ": " << out;
	}
	EXPECT_EQ(run(bin + " sites" + k + " --filter nothing_matches", &out), 1);
	EXPECT_NE(out.find("matches no traceable function"), std::string::npos) << out;
	EXPECT_EQ(run(bin + " sites --help", &out), 0);
	EXPECT_NE(out.find("--notrace"), std::string::npos);
}
