// SPDX-License-Identifier: MIT
// VM exits in the timeline: the test kernel's scripted port I/O, MMIO and
// MSR accesses (exits=sequence) show up in the trace in order, between
// the calls of the functions that made them, in both ways of seeing
// calls; --trace-msr completes the accesses as KVM would; hypercalls and
// the exits after a handoff are there too.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/boot/vmm_process.h"
#include "tests/fixtures.h"
#include "tests/shim/earlytrace_shim.h"

namespace {

struct Event {
	et_ring_record rec;
	std::string fn; // the function of ip (calls: the callee; exits: where it happened)
};

struct Timeline {
	std::vector<Event> events;
	std::string exit_reason, error;
};

Timeline read_timeline(const std::string &path)
{
	Timeline t;
	trace_reader *r = nullptr;
	if (trace_reader_open(&r, path.c_str())) {
		t.error = et_last_error();
		return t;
	}
	const symtab *tab = trace_reader_symtab(r);
	t.exit_reason = trace_reader_info(r)->exit_reason;
	trace_merge *m = nullptr;
	if (trace_merge_open(r, &m) == 0) {
		et_ring_record ev;
		while (trace_merge_next(m, &ev) == 1) {
			const symbol *s = symtab_lookup(tab, ev.ip, nullptr);
			t.events.push_back({ ev, s ? s->name : "?" });
		}
		trace_merge_close(m);
	}
	trace_reader_close(r);
	return t;
}

VmmResult trace_sequence(const std::string &out, std::vector<std::string> extra)
{
	std::vector<std::string> args = { "trace", "--kernel", image("x86_64"), "--mem", "32M",
					  "--filter", "es_*", "--append", "exits=sequence",
					  "--output", out, "--timeout", "60" };
	args.insert(args.end(), extra.begin(), extra.end());
	return run_vmm(args);
}

class ExitTimeline : public ::testing::TestWithParam<const char *> {
protected:
	// Breakpoint mode needs a KVM that reports int3s (fixtures.h).
	void SetUp() override { REQUIRE_MODE(GetParam()); }
};
INSTANTIATE_TEST_SUITE_P(Modes, ExitTimeline, ::testing::Values("int3", "trampoline"));

void expect_exit(const Event &e, uint16_t kind, uint64_t addr, uint64_t value, unsigned size,
		 bool write, bool unclaimed, const char *fn)
{
	ASSERT_TRUE(et_rec_is_exit(&e.rec)) << "a call of " << e.fn << " where an exit belongs";
	et_exit x = et_exit_unpack(&e.rec);
	EXPECT_EQ(x.kind, kind);
	EXPECT_EQ(x.addr, addr);
	EXPECT_EQ(x.value, value);
	EXPECT_EQ(x.size, size);
	EXPECT_EQ((bool)x.write, write);
	EXPECT_EQ((bool)x.unclaimed, unclaimed);
	EXPECT_EQ(e.fn, fn) << "the exit's ip is in the function that made it";
}

void expect_call(const Event &e, const char *fn)
{
	EXPECT_EQ(et_rec_kind(&e.rec), (unsigned)ET_REC_CALL) << e.fn;
	EXPECT_EQ(e.fn, fn);
}

} // namespace

TEST_P(ExitTimeline, ScriptedAccessesSitBetweenTheRightCalls)
{
	REQUIRE_KVM();
	TempDir d;
	std::string out = d.file("seq.trace");
	VmmResult r = trace_sequence(out, { "--mode", GetParam(), "--trace-msr", "sysenter_cs" });
	if (r.status == 1 && (r.err.find("no KVM_CAP_X86_USER_SPACE_MSR") != std::string::npos ||
			      r.err.find("no KVM_CAP_X86_MSR_FILTER") != std::string::npos))
		GTEST_SKIP() << "this KVM cannot hand MSR accesses to the VMM: " << r.err;
	ASSERT_EQ(r.status, 0) << r.err;
	// The VMM completed the traced MSR accesses as KVM would have.
	EXPECT_NE(r.out.find("exits: sequence done msr=0x10"), std::string::npos) << r.out;
	Timeline t = read_timeline(out);
	ASSERT_EQ(t.error, "");
	size_t i = 0;
	while (i < t.events.size() && t.events[i].fn != "es_port")
		i++;
	ASSERT_LE(i + 9, t.events.size()) << "no call of es_port";
	const Event *e = &t.events[i];
	// Exactly this, nothing between: the functions make no other exits.
	expect_call(e[0], "es_port");
	expect_exit(e[1], ET_REC_PIO, PC_PORT_POST, 0x11, 1, true, true, "es_port");
	expect_exit(e[2], ET_REC_PIO, PC_PORT_COM1 + 5 /* LSR */, 0x60, 1, false, false, "es_port");
	expect_call(e[3], "es_mmio");
	expect_exit(e[4], ET_REC_MMIO, LAYOUT_UNCLAIMED_MMIO, 0x12345678, 4, true, true, "es_mmio");
	expect_exit(e[5], ET_REC_MMIO, LAYOUT_UNCLAIMED_MMIO + 4, 0xffffffff, 4, false, true,
		    "es_mmio");
	expect_call(e[6], "es_msr");
	expect_exit(e[7], ET_REC_MSR, 0x174, 0x10, 8, true, false, "es_msr");
	expect_exit(e[8], ET_REC_MSR, 0x174, 0x10, 8, false, false, "es_msr");
	// One clock for calls and exits.
	for (size_t k = 1; k < t.events.size(); k++)
		ASSERT_LE(t.events[k - 1].rec.tsc, t.events[k].rec.tsc) << k;

	// The reports show them as their own lines.
	VmmResult rep = run_vmm({ "report", out });
	ASSERT_EQ(rep.status, 0) << rep.err;
	EXPECT_NE(rep.out.find(": es_port <-exitseq_run\n"), std::string::npos) << rep.out;
	EXPECT_NE(rep.out.find(": vm_exit: mmio write addr 0xd0000000 size 4 value 0x12345678 "
			       "(unclaimed) in es_mmio+0x"),
		  std::string::npos)
		<< rep.out;
	EXPECT_NE(rep.out.find(": vm_exit: msr read 0x174 (sysenter_cs) value 0x10 in es_msr+0x"),
		  std::string::npos)
		<< rep.out;
}

TEST(ExitTimelineOptions, WithoutTraceMsrMsrsStayInKvmAndNoExitsRecordsCallsOnly)
{
	REQUIRE_KVM();
	TempDir d;
	std::string out = d.file("seq.trace");
	VmmResult r = trace_sequence(out, {});
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_NE(r.out.find("exits: sequence done msr=0x10"), std::string::npos) << r.out;
	Timeline t = read_timeline(out);
	size_t pio = 0, msr = 0;
	for (const Event &e : t.events) {
		pio += et_rec_kind(&e.rec) == ET_REC_PIO;
		msr += et_rec_kind(&e.rec) == ET_REC_MSR;
	}
	EXPECT_GT(pio, 100u); // the console
	EXPECT_EQ(msr, 0u);
	// The last exit is the debug-exit port, from machine_exit.
	ASSERT_FALSE(t.events.empty());
	expect_exit(t.events.back(), ET_REC_PIO, ET_PORT_DEBUG_EXIT, 0, 4, true, false, "machine_exit");

	r = trace_sequence(out, { "--no-exits" });
	ASSERT_EQ(r.status, 0) << r.err;
	t = read_timeline(out);
	EXPECT_EQ(t.events.size(), 3u); // es_port, es_mmio, es_msr
	for (const Event &e : t.events)
		EXPECT_FALSE(et_rec_is_exit(&e.rec)) << e.fn;
	EXPECT_NE(r.err.find("trace: 3 events: 3 calls, 0 returns, 0 exits, 0 kernel events;"),
		  std::string::npos)
		<< r.err;
	// stderr is a pipe here: no progress line, not even an erased one.
	EXPECT_EQ(r.err.find('\033'), std::string::npos) << r.err;
	EXPECT_EQ(r.err.find('\r'), std::string::npos) << r.err;
}

TEST(ExitTimelineOptions, BadMsrLists)
{
	VmmResult r = run_vmm({ "trace", "--kernel", image("x86_64"), "--trace-msr", "efer,bogus" });
	EXPECT_EQ(r.status, 1);
	EXPECT_NE(r.err.find("--trace-msr: 'bogus' is not an MSR number or one of: tsc, apic_base"),
		  std::string::npos)
		<< r.err;
	r = run_vmm({ "trace", "--kernel", image("x86_64"), "--trace-msr",
		      "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17" });
	EXPECT_EQ(r.status, 1);
	EXPECT_NE(r.err.find("--trace-msr: at most 16 MSRs"), std::string::npos) << r.err;
	REQUIRE_KVM();
	TempDir d;
	r = run_vmm({ "trace", "--kernel", image("x86_64"), "--mem", "32M", "--trace-msr", "0x802",
		      "--output", d.file("x.trace") });
	EXPECT_EQ(r.status, 1);
	EXPECT_NE(r.err.find("--trace-msr: MSR 0x802 is an x2APIC register"), std::string::npos)
		<< r.err;
}

// After a guestlib handoff the guest records its calls in its ring, and
// the VMM still records the exits: reports merge both by time.
TEST(ExitTimelineOptions, HypercallsAndExitsAfterTheHandoff)
{
	REQUIRE_KVM();
	TempDir d;
	std::string out = d.file("ring.trace");
	VmmResult r = run_vmm({ "trace", "--kernel", image("x86_64"), "--mem", "32M", "--append",
				"trace=ring exit=0", "--output", out, "--timeout", "60" });
	ASSERT_EQ(r.status, 0) << r.err;
	Timeline t = read_timeline(out);
	ASSERT_EQ(t.error, "");
	size_t handoff = t.events.size(), guest_calls_after = 0, exits_after = 0;
	for (size_t i = 0; i < t.events.size(); i++) {
		const et_ring_record &e = t.events[i].rec;
		if (et_rec_kind(&e) == ET_REC_HYPERCALL && handoff == t.events.size()) {
			et_exit x = et_exit_unpack(&e);
			EXPECT_EQ(x.addr, (uint64_t)ET_HC_HANDOFF);
			EXPECT_EQ((int64_t)x.value, 0); // its result
			EXPECT_EQ(t.events[i].fn, "et_hypercall");
			handoff = i;
		} else if (handoff < i) {
			guest_calls_after += (e.flags & ET_REC_SRC_MASK) == ET_REC_SRC_GUEST && !et_rec_is_exit(&e);
			exits_after += et_rec_kind(&e) == ET_REC_PIO;
		}
	}
	ASSERT_LT(handoff, t.events.size()) << "no handoff hypercall in the timeline";
	EXPECT_GT(guest_calls_after, 816u);
	EXPECT_GT(exits_after, 100u); // the console lines of the ring phase
	// Merged by time, the guest's uart_putc calls and the VMM's serial
	// exits alternate: each call is followed by its port accesses.
	size_t alternations = 0;
	for (size_t i = handoff + 1; i + 1 < t.events.size(); i++)
		alternations += t.events[i].fn == "uart_putc" && !et_rec_is_exit(&t.events[i].rec) &&
				et_rec_kind(&t.events[i + 1].rec) == ET_REC_PIO;
	EXPECT_GT(alternations, 100u);
}
