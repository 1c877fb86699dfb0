// SPDX-License-Identifier: MIT
// kallsyms recovery: synthetic tables in every layout the decoder knows,
// hostile corruptions of them, and the stripped Debian cloud kernel when
// its cache exists (images/fetch-debian-kernel.sh fills it).
#include <gtest/gtest.h>
#include <lzma.h>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "tests/shim/earlytrace_shim.h"
#include "tests/fixtures.h"
#include "vmm/sites/sites.h"
#include "vmm/symbols/kallsyms.h"
#include "vmm/symbols/symbols.h"

namespace {

// Decompresses a whole .xz file (test fixtures); "" on any error.
std::string xz_decompress(const std::string &path)
{
	std::ifstream f(path, std::ios::binary);
	std::string in((std::istreambuf_iterator<char>(f)), {});
	std::string out(64u << 20, '\0');
	uint64_t memlimit = UINT64_MAX;
	size_t in_pos = 0, out_pos = 0;
	if (lzma_stream_buffer_decode(&memlimit, 0, nullptr, reinterpret_cast<const uint8_t *>(in.data()),
				      &in_pos, in.size(), reinterpret_cast<uint8_t *>(&out[0]), &out_pos,
				      out.size()) != LZMA_OK)
		return "";
	out.resize(out_pos);
	return out;
}


struct Sym {
	uint64_t addr;
	char type;
	std::string name;
};

struct Layout {
	unsigned ptr;
	bool new_order;
	bool seqs;
	enum kallsyms_addr_mode mode;
	unsigned marker_size;
};

// Writes tables the way scripts/kallsyms lays them out (see kallsyms.h).
class Encoder {
public:
	explicit Encoder(const Layout &l) : l_(l)
	{
		// Printable characters stand for themselves; the other codes are
		// multi-character tokens, so expansion is exercised.
		for (int i = 0; i < 256; i++) {
			if (i > 0x20 && i < 0x7f)
				tok_[i] = std::string(1, char(i));
			else
				tok_[i] = std::string("_") + char('a' + i % 26) + char('a' + i / 26 % 26);
		}
	}
	std::vector<uint8_t> encode(const std::vector<Sym> &syms, uint64_t base)
	{
		out_.assign(100, 0xab); // unrelated bytes before the tables
		if (!l_.new_order)
			addresses(syms, base);
		label();
		put(syms.size(), 4);
		label();
		std::vector<uint64_t> markers;
		size_t names = out_.size();
		for (size_t i = 0; i < syms.size(); i++) {
			if (i % 256 == 0)
				markers.push_back(out_.size() - names);
			std::vector<uint8_t> e = compress(std::string(1, syms[i].type) + syms[i].name);
			if (e.size() > 127) {
				out_.push_back(uint8_t(0x80 | (e.size() & 0x7f)));
				out_.push_back(uint8_t(e.size() >> 7));
			} else {
				out_.push_back(uint8_t(e.size()));
			}
			out_.insert(out_.end(), e.begin(), e.end());
		}
		label();
		for (auto m : markers)
			put(m, l_.marker_size);
		if (l_.seqs && !l_.new_order)
			seqs(syms.size());
		label();
		std::vector<uint16_t> index;
		size_t table = out_.size();
		for (auto &t : tok_) {
			index.push_back(uint16_t(out_.size() - table));
			out_.insert(out_.end(), t.begin(), t.end());
			out_.push_back(0);
		}
		label();
		for (auto i : index)
			put(i, 2);
		if (l_.new_order) {
			addresses(syms, base);
			if (l_.seqs)
				seqs(syms.size());
		}
		out_.resize(out_.size() + 64, 0xcd);
		return out_;
	}

private:
	void put(uint64_t v, unsigned n)
	{
		for (unsigned i = 0; i < n; i++)
			out_.push_back(uint8_t(v >> (8 * i)));
	}
	void label()
	{
		while (out_.size() % l_.ptr)
			out_.push_back(0);
	}
	void seqs(size_t n)
	{
		label();
		for (size_t i = 0; i < n; i++) {
			out_.push_back(uint8_t(i >> 16));
			out_.push_back(uint8_t(i >> 8));
			out_.push_back(uint8_t(i));
		}
	}
	void addresses(const std::vector<Sym> &syms, uint64_t base)
	{
		label();
		for (auto &s : syms) {
			if (l_.mode == KALLSYMS_ABSOLUTE)
				put(s.addr, l_.ptr);
			else if (l_.mode == KALLSYMS_RELATIVE)
				put(uint32_t(s.addr - base), 4);
			else if (s.addr < base) // per-cpu: absolute
				put(uint32_t(s.addr), 4);
			else
				put(uint32_t(int32_t(int64_t(base - 1 - s.addr))), 4);
		}
		if (l_.mode != KALLSYMS_ABSOLUTE) {
			label();
			put(base, l_.ptr);
		}
	}
	std::vector<uint8_t> compress(const std::string &s)
	{
		std::vector<uint8_t> e;
		for (size_t i = 0; i < s.size();) {
			int best = (unsigned char)s[i];
			for (int t = 0; t < 256; t++)
				if (tok_[t].size() == 3 && s.compare(i, 3, tok_[t]) == 0)
					best = t;
			e.push_back(uint8_t(best));
			i += tok_[best].size();
		}
		return e;
	}
	Layout l_;
	std::string tok_[256];
	std::vector<uint8_t> out_;
};

std::vector<Sym> make_symbols(size_t n, unsigned ptr, bool percpu)
{
	std::vector<Sym> v;
	uint64_t text = ptr == 8 ? 0xffffffff81000000ull : 0xc1000000ull;
	if (percpu) {
		v.push_back({ 0, 'D', "__per_cpu_start" });
		v.push_back({ 0x40, 'D', "fixed_percpu_data" });
	}
	v.push_back({ text, 'T', "_text" });
	v.push_back({ text, 'T', "startup_64" });
	for (size_t i = 0; v.size() < n; i++) {
		std::string name = "fn_" + std::to_string(i) + (i % 7 == 0 ? "_abc_xyz" : "");
		if (i == 300)
			name = std::string(200, 'q'); // needs the two-byte length
		v.push_back({ text + 0x10 * (i + 1), i % 3 ? 't' : 'T', name });
	}
	v.push_back({ text + 0x10 * (n + 10), 'R', "__start_mcount_loc" });
	return v;
}

using Key = std::tuple<uint64_t, char, std::string>;

std::vector<Key> keys(const std::vector<Sym> &v)
{
	std::vector<Key> k;
	for (auto &s : v)
		k.emplace_back(s.addr, s.type, s.name);
	std::sort(k.begin(), k.end());
	return k;
}

std::vector<Key> keys(const struct symtab &t)
{
	std::vector<Key> k;
	for (size_t i = 0; i < t.nr; i++)
		k.emplace_back(t.syms[i].addr, t.syms[i].type, t.syms[i].name);
	std::sort(k.begin(), k.end());
	return k;
}

class KallsymsLayouts : public ::testing::TestWithParam<Layout> {};

} // namespace

TEST_P(KallsymsLayouts, DecodesWhatWasEncoded)
{
	const Layout l = GetParam();
	for (size_t n : { size_t(5), size_t(256), size_t(257), size_t(1000) }) {
		bool percpu = l.mode == KALLSYMS_ABSOLUTE_PERCPU || l.mode == KALLSYMS_ABSOLUTE;
		auto syms = make_symbols(n, l.ptr, percpu);
		uint64_t base = l.ptr == 8 ? 0xffffffff81000000ull : 0xc1000000ull;
		auto blob = Encoder(l).encode(syms, base);
		struct symbols out;
		struct kallsyms_info info;

		ASSERT_EQ(kallsyms_decode(blob.data(), blob.size(), l.ptr, &out, &info), 0)
			<< "n=" << n << ": " << et_last_error();
		EXPECT_EQ(out.source, SYM_SOURCE_KALLSYMS);
		EXPECT_EQ(info.nr_syms, syms.size());
		EXPECT_EQ(info.new_order, l.new_order);
		EXPECT_EQ(info.has_seqs, l.seqs && !l.new_order);
		// With one marker (a single 0) its width cannot show, nor matter.
		if (n > 256) {
			EXPECT_EQ(info.marker_size, l.marker_size) << "n=" << n;
		}
		EXPECT_EQ(info.mode, l.mode);
		EXPECT_EQ(keys(out.tab), keys(syms)) << "n=" << n;
		symbols_free(&out);
	}
}

INSTANTIATE_TEST_SUITE_P(
	KallsymsIn, KallsymsLayouts,
	::testing::Values(
		// 6.1 as Debian ships it (seqs_of_names backported), x86-64 SMP.
		Layout{ 8, false, true, KALLSYMS_ABSOLUTE_PERCPU, 4 },
		// 5.x: no seqs, relative offsets.
		Layout{ 8, false, false, KALLSYMS_ABSOLUTE_PERCPU, 4 },
		// Older: absolute addresses, unsigned long markers.
		Layout{ 8, false, false, KALLSYMS_ABSOLUTE, 8 },
		// 6.4+: addresses after token_index.
		Layout{ 8, true, true, KALLSYMS_ABSOLUTE_PERCPU, 4 },
		Layout{ 8, true, false, KALLSYMS_RELATIVE, 4 },
		// 32-bit kernels.
		Layout{ 4, false, false, KALLSYMS_RELATIVE, 4 },
		Layout{ 4, true, true, KALLSYMS_ABSOLUTE, 4 }));

TEST(Kallsyms, CorruptOrTruncatedTablesNeverCrash)
{
	Layout l{ 8, false, true, KALLSYMS_ABSOLUTE_PERCPU, 4 };
	auto syms = make_symbols(600, 8, true);
	auto blob = Encoder(l).encode(syms, 0xffffffff81000000ull);
	struct symbols out;

	for (size_t cut = 0; cut < blob.size(); cut += 7) {
		if (kallsyms_decode(blob.data(), cut, 8, &out, nullptr) == 0) {
			EXPECT_EQ(keys(out.tab), keys(syms));
			symbols_free(&out);
		}
	}
	for (size_t pos = 0; pos < blob.size(); pos += 3) {
		auto bad = blob;
		bad[pos] ^= 0x5a;
		if (kallsyms_decode(bad.data(), bad.size(), 8, &out, nullptr) == 0)
			symbols_free(&out);
	}
	// A broken token index: found nowhere else, so a clear error.
	EXPECT_EQ(kallsyms_decode(blob.data(), 100, 8, &out, nullptr), -1);
	EXPECT_NE(std::string(et_last_error()).find("token table"), std::string::npos);
}

TEST(Kallsyms, ImageWithoutKallsymsIsAClearError)
{
	struct kernel_image img;
	struct symbols out;
	ASSERT_EQ(kernel_image_open(&img, (std::string(ET_TEST_IMAGES) + "/x86_64.elf").c_str()), 0);
	EXPECT_EQ(symbols_from_kallsyms(&out, &img), -1);
	EXPECT_NE(std::string(et_last_error()).find("no kallsyms token table"), std::string::npos)
		<< et_last_error();
	kernel_image_close(&img);
}

// The point of kallsyms recovery: the stock kernel is stripped, so even
// __start_mcount_loc comes from kallsyms (CONFIG_KALLSYMS_ALL).
TEST(KallsymsDebian, RecoversSymbolsAndNamesEverySite)
{
	std::string vmlinux = debian_kernel_dir() + "/vmlinux";
	if (!file_exists(vmlinux))
		GTEST_SKIP() << "no " << vmlinux << " (run images/fetch-debian-kernel.sh)";
	struct kernel_image img;
	struct symbols syms;
	struct site_table tab;
	ASSERT_EQ(kernel_image_open(&img, vmlinux.c_str()), 0) << et_last_error();

	auto t0 = std::chrono::steady_clock::now();
	ASSERT_EQ(symbols_load(&syms, &img, nullptr), 0) << et_last_error();
	auto t1 = std::chrono::steady_clock::now();
	ASSERT_EQ(sites_find(&tab, &img, &syms), 0) << et_last_error();
	auto t2 = std::chrono::steady_clock::now();
	double ks = std::chrono::duration<double, std::milli>(t1 - t0).count();
	double ss = std::chrono::duration<double, std::milli>(t2 - t1).count();
	RecordProperty("kallsyms_ms", std::to_string(ks));
	RecordProperty("sites_ms", std::to_string(ss));
	printf("[ debian ] %s; %zu sites, %zu verified, %zu rejected; kallsyms %.1f ms, sites %.1f ms\n",
	       syms.desc, tab.nr, tab.nr_verified, tab.nr_rejected, ks, ss);

	EXPECT_EQ(syms.source, SYM_SOURCE_KALLSYMS);
	EXPECT_GT(syms.tab.nr, 50000u);
	uint64_t a, text = 0;
	EXPECT_EQ(symbols_addr(&syms, "__start_mcount_loc", &a), 0);
	EXPECT_EQ(symbols_addr(&syms, "_text", &text), 0);
	EXPECT_EQ(text, 0xffffffff81000000ull);
	EXPECT_EQ(tab.origin, SITE_ORIGIN_MCOUNT_LOC);
	EXPECT_GT(tab.nr, 30000u);
	// Sites in functions kallsyms does not list (see the docs) are
	// rejected as not-entry; they must stay a small minority.
	EXPECT_LT(tab.nr_rejected * 50, tab.nr);
	EXPECT_EQ(tab.nr_rejected, tab.rejects[SITE_REJECT_NOT_ENTRY]);
	for (size_t i = 0; i < tab.nr; i++)
		if (!tab.sites[i].reject) {
			ASSERT_NE(tab.sites[i].name, nullptr);
		}
	// The ftrace count the kernel prints at boot: "ftrace: allocating
	// 37697 entries" for 6.1.0-56 is every __mcount_loc record.
	EXPECT_GE(tab.nr, 30000u);

	// Against the real System.map of the same build: its text symbols are
	// kept, xz-compressed, in tests/fixtures (made once from the -dbg
	// package, which is too big to fetch in CI). A newer Debian kernel
	// than the fixture is skipped, not failed.
	std::string version;
	std::ifstream(debian_kernel_dir() + "/version") >> version;
	std::string fixture = std::string(ET_TEST_SRCDIR) + "/fixtures/System.map-" + version + ".text.xz";
	if (!file_exists(fixture)) {
		printf("[ debian ] no System.map fixture for %s: names not cross-checked\n", version.c_str());
	} else {
		std::string map_text = xz_decompress(fixture);
		ASSERT_FALSE(map_text.empty()) << fixture;
		struct symbols real;
		ASSERT_EQ(symbols_parse_system_map(&real, map_text.data(), map_text.size(), fixture.c_str()), 0)
			<< et_last_error();
		ASSERT_EQ(symbols_check_match(&real, &img, &syms.tab), 0) << et_last_error();
		// Every recovered function has a symbol of the same name at the same
		// address in the real map (which may list aliases there too).
		std::multimap<uint64_t, std::string> real_at;
		size_t text_real = 0, text_k = 0, named = 0;
		for (size_t i = 0; i < real.tab.nr; i++) {
			real_at.emplace(real.tab.syms[i].addr, real.tab.syms[i].name);
			text_real += symtab_is_text_type(real.tab.syms[i].type);
		}
		for (size_t i = 0; i < syms.tab.nr; i++) {
			const struct symbol *s = &syms.tab.syms[i];
			if (!symtab_is_text_type(s->type))
				continue;
			text_k++;
			auto range = real_at.equal_range(s->addr);
			bool same = false;
			for (auto it = range.first; it != range.second; ++it)
				same |= it->second == s->name;
			named += same;
			EXPECT_TRUE(same) << s->name << " at 0x" << std::hex << s->addr;
		}
		printf("[ debian ] text symbols: kallsyms %zu (all %zu named as in System.map), System.map %zu\n",
		       text_k, named, text_real);
		// The real map also lists symbols kallsyms leaves out (.cold parts,
		// local labels): within 2%.
		EXPECT_EQ(named, text_k);
		EXPECT_LE(text_k, text_real);
		EXPECT_GE(text_k * 100, text_real * 98);
		// And every site is named by the recovered symbols.
		for (size_t i = 0; i < tab.nr; i++) {
			if (tab.sites[i].reject == SITE_OK) {
				ASSERT_NE(tab.sites[i].name, nullptr);
			}
		}
		symbols_free(&real);
	}
	sites_free(&tab);
	symbols_free(&syms);
	kernel_image_close(&img);
}
