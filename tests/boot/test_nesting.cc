// SPDX-License-Identifier: MIT
// A traced call nested inside the recording of another, at a chosen
// instruction: the x86_64 test kernel's nest=<case> (images/common/nest.c)
// takes away the page a trampoline or guestlib's __fentry__ is about to
// touch, and its page-fault handler makes traced calls while the
// interrupted recording waits (a page fault is not masked by cli: it
// nests where an NMI would). Every record must come out, whole: the
// interrupted call once, with its own parent, and the nested ones. A
// recorder that reserves and fills a record in more than one step without
// protection loses the nested records or writes over them, and the counts
// and parents below catch it; where the run ends inside the fault, the
// interrupted call must be missing, never torn.
#include <gtest/gtest.h>

#include <capstone/capstone.h>

#include <cstring>
#include <map>
#include <regex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tests/boot/trace_checks.h"
#include "tests/boot/vmm_process.h"
#include "tests/fixtures.h"
#include "trampolines/templates.h"
#include "vmm/loader/kernel_image.h"
#include "vmm/symbols/symbols.h"

namespace {

const int kInner = 3; // NEST_INNER_CALLS: traced calls in each fault

// Offsets of the instructions from code to its first ret, by mnemonic
// (the first of each).
std::map<std::string, uint64_t> first_offsets(const uint8_t *code, size_t len, bool is64)
{
	std::map<std::string, uint64_t> at;
	csh cs;
	cs_insn *insn = nullptr;

	if (cs_open(CS_ARCH_X86, is64 ? CS_MODE_64 : CS_MODE_32, &cs) != CS_ERR_OK)
		return at;
	size_t n = cs_disasm(cs, code, len, 0, 0, &insn);
	std::string prev;
	for (size_t i = 0; i < n && strcmp(insn[i].mnemonic, "ret"); i++) {
		at.emplace(insn[i].mnemonic, insn[i].address);
		// The first instruction after the reservation's branch.
		if (prev == "jg")
			at.emplace("after jg", insn[i].address);
		prev = insn[i].mnemonic;
	}
	cs_free(insn, n);
	cs_close(&cs);
	return at;
}

// guestlib's __fentry__ in the x86_64 image: where it reserves (the xadd)
// and where it first stores into the record (the instruction after the
// shl that makes the slot's offset).
std::map<std::string, uint64_t> fentry_offsets()
{
	struct kernel_image img;
	struct symbols syms = {};
	std::map<std::string, uint64_t> at;
	uint64_t addr;

	if (kernel_image_open(&img, image("x86_64").c_str()))
		return at;
	if (symbols_load(&syms, &img, nullptr) == 0 && symbols_addr(&syms, "__fentry__", &addr) == 0) {
		uint64_t paddr;
		uint32_t flags;
		const uint8_t *code = kernel_image_vaddr_bytes(&img, addr, 128, &paddr, &flags);
		csh cs;
		cs_insn *insn = nullptr;
		if (code && cs_open(CS_ARCH_X86, CS_MODE_64, &cs) == CS_ERR_OK) {
			size_t n = cs_disasm(cs, code, 128, 0, 0, &insn);
			std::string prev;
			for (size_t i = 0; i < n && strcmp(insn[i].mnemonic, "ret"); i++) {
				at.emplace(insn[i].mnemonic, insn[i].address);
				// The slot's shl comes after the xadd (another
				// shl joins the TSC's halves before it).
				if (prev == "shl" && at.count("xadd"))
					at.emplace("after shl", insn[i].address);
				prev = insn[i].mnemonic;
			}
			cs_free(insn, n);
			cs_close(&cs);
		}
	}
	symbols_free(&syms);
	kernel_image_close(&img);
	return at;
}

std::string hex(uint64_t v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)v);
	return buf;
}

VmmResult run_nest(const std::string &name, const std::string &mode, const std::string &out)
{
	return run_vmm({ "trace", "--kernel", image("x86_64"), "--mem", "32M", "--output", out,
			 "--timeout", "60", "--mode", mode, "--append", "nest=" + name });
}

// The nested calls' records, checked one by one: each names its function
// and the caller it really has (a torn record would mix two calls).
// The nest_outer and nest_inner calls of one source, each checked for
// its parent.
std::pair<long, long> nest_counts(const TraceFile &t, unsigned source)
{
	long got_outer = 0, got_inner = 0;
	for (size_t i = 0; i < t.calls.size(); i++) {
		if ((t.calls[i].flags & ET_REC_SRC_MASK) != source)
			continue;
		if (t.fn[i] == "nest_outer") {
			got_outer++;
			EXPECT_TRUE(t.parent[i] == "nest_run" || t.parent[i] == "ring_once")
				<< "call " << i << " parent " << t.parent[i];
		} else if (t.fn[i] == "nest_inner") {
			got_inner++;
			EXPECT_EQ(t.parent[i], "on_fault") << "call " << i;
		}
	}
	return { got_outer, got_inner };
}

void expect_nest_records(const TraceFile &t, unsigned source, long outer, long inner)
{
	auto [got_outer, got_inner] = nest_counts(t, source);
	EXPECT_EQ(got_outer, outer);
	EXPECT_EQ(got_inner, inner);
}

class NestedRecording : public ::testing::TestWithParam<const char *> {
protected:
	// Breakpoint mode needs a KVM that reports int3s (fixtures.h).
	void SetUp() override { REQUIRE_MODE(GetParam()); }
	std::string mode() const { return GetParam(); }
};

INSTANTIATE_TEST_SUITE_P(Modes, NestedRecording, ::testing::Values("int3", "trampoline"));

} // namespace

// The trampoline interrupted after it reserved its record, on the
// reservation (absent and read-only), and holding the batch's last record
// while the nested calls find the batch full: 4 outer calls, 12 nested,
// all recorded, nothing dropped, no record naming no site.
TEST_P(NestedRecording, TrampolineRecordsSurviveANestedCall)
{
	REQUIRE_KVM();
	std::string out = temp_path("nest-tramp.trace");
	VmmResult r = run_nest("tramp", mode(), out);
	expect_no_crash(r);
	ASSERT_EQ(r.status, 0) << r.err << r.out;
	if (mode() == "int3") {
		EXPECT_NE(r.out.find("nest: tramp no batch (breakpoint mode)"), std::string::npos) << r.out;
		remove(out.c_str());
		return;
	}
	const struct tramp_template *tpl = tramp_template_for(64);
	auto at = first_offsets(tpl->bytes + tpl->record_entry, tpl->header - tpl->record_entry, true);
	ASSERT_TRUE(at.count("xadd") && at.count("after jg"));
	const std::string reserve = hex(at["xadd"]), first_store = hex(at["after jg"]);
	for (const auto &[nesting, where] : std::vector<std::pair<std::string, std::string>>{
		     { "reserved", first_store },
		     { "cursor", reserve },
		     { "cursor-ro", reserve },
		     { "full", first_store } })
		EXPECT_NE(r.out.find("nest: tramp " + nesting + " faults=1 at=+" + where + "\n"),
			  std::string::npos)
			<< nesting << " at " << where << "\n"
			<< r.out;

	TraceFile t = load_trace(out);
	ASSERT_EQ(t.error, "");
	expect_nest_records(t, ET_REC_SRC_TRAMPOLINE, 4, 4 * kInner);
	EXPECT_EQ(t.dropped, 0u);
	EXPECT_EQ(r.err.find("named no site"), std::string::npos) << r.err;
	EXPECT_EQ(r.err.find("still being recorded"), std::string::npos) << r.err;
	// One full-batch exit: the nested calls of "full".
	EXPECT_NE(r.err.find("asked for by the guest"), std::string::npos) << r.err;
	remove(out.c_str());
}

// guestlib's ring after the handoff, whatever recorded before it: nested
// after the reservation (on the first lap and once the ring has wrapped,
// where the slot still holds a complete record of the lap before), and on
// the reservation itself. The guest checks what its ring holds; the
// fault handler checks that a reader does not take the interrupted record
// for complete; the VMM's copy at the end has every call the ring kept.
TEST_P(NestedRecording, GuestRingRecordsSurviveANestedCall)
{
	REQUIRE_KVM();
	std::string out = temp_path("nest-ring.trace");
	VmmResult r = run_nest("ring", mode(), out);
	expect_no_crash(r);
	ASSERT_EQ(r.status, 0) << r.err << r.out;
	auto at = fentry_offsets();
	ASSERT_TRUE(at.count("xadd") && at.count("after shl"));
	const std::string reserve = hex(at["xadd"]), first_store = hex(at["after shl"]);
	for (const auto &[nesting, where, in_fault] :
	     std::vector<std::tuple<std::string, std::string, std::string>>{
		     { "fresh", first_store, "unreadable" },
		     { "head", reserve, "not-reserved" },
		     { "head-ro", reserve, "not-reserved" },
		     { "wrap", first_store, "unreadable" } })
		EXPECT_NE(r.out.find("nest: ring " + nesting + " faults=1 at=+" + where + " outer=1 inner=" +
				     std::to_string(kInner) + " in-fault=" + in_fault + "\n"),
			  std::string::npos)
			<< nesting << "\n"
			<< r.out;

	TraceFile t = load_trace(out);
	ASSERT_EQ(t.error, "");
	// The ring (1024 records) wraps: the VMM's periodic reads took what
	// they found; what the guest overwrote before a read is counted as
	// drops, nothing else. So every call of the four nestings is there,
	// or the drops count at least what is missing (a loaded host reads
	// later, and loses inner calls of a nesting whose outer one it kept).
	auto [outer, inner] = nest_counts(t, ET_REC_SRC_GUEST);
	EXPECT_GE(outer, 1);
	EXPECT_LE(outer, 4);
	EXPECT_LE(inner, 4 * kInner);
	EXPECT_LE((4 - outer) + (4 * kInner - inner), (long)t.dropped)
		<< outer << " outer and " << inner << " inner calls";
	EXPECT_EQ(r.err.find("incomplete"), std::string::npos) << r.err;
	remove(out.c_str());
}

// The run ends inside the fault, while the interrupted call's record is
// reserved and not written: the nested calls are all there, the
// interrupted one is missing (and said to be), and no record is torn.
TEST(NestedRecordingEnd, ARunEndingInsideARecordingLosesOnlyThatCall)
{
	REQUIRE_KVM();
	std::string out = temp_path("nest-exit.trace");
	VmmResult r = run_nest("tramp-exit", "trampoline", out);
	expect_no_crash(r);
	ASSERT_EQ(r.status, 0) << r.err << r.out;
	EXPECT_NE(r.out.find("nest: tramp-exit exit inside the recording"), std::string::npos) << r.out;
	TraceFile t = load_trace(out);
	ASSERT_EQ(t.error, "");
	expect_nest_records(t, ET_REC_SRC_TRAMPOLINE, 0, kInner);
	EXPECT_NE(r.err.find("trampolines: 1 calls were still being recorded"), std::string::npos)
		<< r.err;

	r = run_nest("ring-exit", "trampoline", out);
	expect_no_crash(r);
	ASSERT_EQ(r.status, 0) << r.err << r.out;
	EXPECT_NE(r.out.find("nest: ring-exit exit inside the recording"), std::string::npos) << r.out;
	t = load_trace(out);
	ASSERT_EQ(t.error, "");
	expect_nest_records(t, ET_REC_SRC_GUEST, 0, kInner);
	EXPECT_EQ(t.dropped, 1u) << "the interrupted record, incomplete";
	remove(out.c_str());
}
