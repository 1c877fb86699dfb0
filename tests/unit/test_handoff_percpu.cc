// SPDX-License-Identifier: MIT
// ET_HC_HANDOFF_PERCPU, the VMM's side: a guest with several vCPUs hands
// over one ring per CPU. What a hostile guest can put in the array (too
// many rings, none, rings outside RAM, rings that overlap, an array that
// is not in RAM) is refused in one line before anything changes; a good
// array gets each early event in its vCPU's ring and each ring's guest
// records recorded as that vCPU's. No KVM: the hypercall port is driven
// through the I/O bus, as a guest's `out` reaches it.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "tests/boot/trace_checks.h"
#include "tests/fixtures.h"
#include "tests/shim/earlytrace_shim.h"
#include "vmm/trace/handoff.h"
#include "vmm/trace/recorder.h"

namespace {

constexpr uint64_t kRamSize = 4u << 20;
constexpr uint64_t kBlock = 0x1000, kArray = 0x2000;
constexpr uint64_t kRing0 = 0x10000, kRingBytes = 64 + 16 * 32; // 16 records
constexpr uint64_t kFn = 0xffffffff81000000ull;

size_t count_stops(void *ctx, const char *)
{
	++*static_cast<int *>(ctx);
	return 0;
}

class HandoffPercpu : public ::testing::Test {
protected:
	void SetUp() override
	{
		memset(static_cast<void *>(&vm), 0, sizeof(vm));
		ASSERT_EQ(guest_mem_init(&vm.mem, kRamSize), 0) << et_last_error();
		iobus_init(&vm.bus);
		memset(&vcpu, 0, sizeof(vcpu));
		vcpu.vm = &vm;
		vcpu.fd = -1;
		path = dir.file("t.trace");
		ASSERT_EQ(recorder_init(&rec, &vcpu, 64, OVERFLOW_STOP, 0), 0);
		ASSERT_EQ(trace_writer_open(&rec.out, path.c_str(), nullptr), 0) << et_last_error();
		ops.stop_capture = count_stops;
		cfg.vm = &vm;
		cfg.vcpu = &vcpu;
		cfg.nr_vcpus = 2;
		cfg.rec = &rec;
		cfg.ops = &ops;
		cfg.ctx = &stops;
		ASSERT_EQ(handoff_attach(&h, &cfg), 0) << et_last_error();
	}
	void TearDown() override
	{
		recorder_free(&rec);
		iobus_free(&vm.bus);
		guest_mem_free(&vm.mem);
	}

	// A ring as guestlib's et_ring_init leaves it, at paddr.
	void put_ring(uint64_t paddr, uint32_t capacity = 16)
	{
		struct et_ring r = {};
		r.magic = ET_RING_MAGIC;
		r.abi_version = ET_ABI_VERSION;
		r.record_size = sizeof(struct et_ring_record);
		r.capacity = capacity;
		r.slot_mask = capacity - 1;
		ASSERT_EQ(guest_mem_write(&vm.mem, paddr, &r, sizeof(r)), 0);
		for (uint32_t i = 0; i < capacity; i++) {
			struct et_ring_record rec_ = {};
			rec_.cpu = ~0u;
			ASSERT_EQ(guest_mem_write(&vm.mem, paddr + 64 + 32 * i, &rec_, 32), 0);
		}
	}

	void put_refs(const std::vector<et_ring_ref> &refs)
	{
		ASSERT_EQ(guest_mem_write(&vm.mem, kArray, refs.data(), refs.size() * sizeof(refs[0])), 0);
	}

	// The guest's `out` of its block's address; returns the result.
	int64_t hypercall(uint32_t nr, uint64_t arg0, uint64_t arg1, uint32_t version = ET_ABI_VERSION)
	{
		struct et_hypercall hc = {};
		uint8_t data[4];
		uint32_t addr = (uint32_t)kBlock;

		hc.abi_version = version;
		hc.nr = nr;
		hc.arg0 = arg0;
		hc.arg1 = arg1;
		hc.result = 12345;
		EXPECT_EQ(guest_mem_write(&vm.mem, kBlock, &hc, sizeof(hc)), 0);
		memcpy(data, &addr, 4);
		iobus_access(&vm.bus, IOBUS_PIO, ET_PORT_HYPERCALL, data, 4, true);
		EXPECT_EQ(guest_mem_read(&vm.mem, kBlock, &hc, sizeof(hc)), 0);
		return hc.result;
	}

	struct et_ring ring_header(uint64_t paddr)
	{
		struct et_ring r;
		EXPECT_EQ(guest_mem_read(&vm.mem, paddr, &r, sizeof(r)), 0);
		return r;
	}

	struct et_ring_record record(uint64_t ring, uint64_t i)
	{
		struct et_ring_record r;
		EXPECT_EQ(guest_mem_read(&vm.mem, ring + 64 + 32 * i, &r, sizeof(r)), 0);
		return r;
	}

	// A refused handoff: the result, one line, and nothing handed over.
	void expect_refused(uint64_t count, const std::string &why)
	{
		EXPECT_EQ(hypercall(ET_HC_HANDOFF_PERCPU, kArray, count), ET_E_INVAL);
		EXPECT_EQ(std::string(h.first_refusal), why);
		EXPECT_EQ(h.bad_hypercalls, 1u);
		EXPECT_FALSE(h.done);
		EXPECT_EQ(h.nr_rings, 0u);
		EXPECT_EQ(stops, 0) << "a refused handoff stops nothing";
		EXPECT_EQ(strchr(h.first_refusal, '\n'), nullptr);
	}

	struct vm vm;
	struct vcpu vcpu;
	TempDir dir;
	std::string path;
	struct recorder rec;
	struct handoff h;
	struct handoff_ops ops = {};
	struct handoff_config cfg = {};
	int stops = 0;
};

TEST_F(HandoffPercpu, MoreRingsThanVcpusIsRefused)
{
	put_ring(kRing0);
	put_ring(kRing0 + kRingBytes);
	put_ring(kRing0 + 2 * kRingBytes);
	put_refs({ { kRing0, kRingBytes }, { kRing0 + kRingBytes, kRingBytes },
		   { kRing0 + 2 * kRingBytes, kRingBytes } });
	expect_refused(3, "handoff: 3 per-CPU rings for 2 vCPUs (1 to 2 allowed)");
}

TEST_F(HandoffPercpu, NoRingsIsRefused)
{
	expect_refused(0, "handoff: 0 per-CPU rings for 2 vCPUs (1 to 2 allowed)");
}

TEST_F(HandoffPercpu, HugeCountIsRefusedBeforeTheArrayIsRead)
{
	expect_refused(UINT64_MAX, "handoff: 18446744073709551615 per-CPU rings for 2 vCPUs "
				   "(1 to 2 allowed)");
}

TEST_F(HandoffPercpu, ArrayOutsideRamIsRefused)
{
	EXPECT_EQ(hypercall(ET_HC_HANDOFF_PERCPU, kRamSize - 16, 2), ET_E_INVAL);
	EXPECT_EQ(std::string(h.first_refusal),
		  "handoff: the array of 2 rings at 0x3ffff0 is not in guest RAM or not aligned");
	EXPECT_FALSE(h.done);
}

TEST_F(HandoffPercpu, RingOutsideRamIsRefused)
{
	put_ring(kRing0);
	put_refs({ { kRing0, kRingBytes }, { kRamSize - 64, kRingBytes } });
	expect_refused(2, "handoff: no valid ring at 0x3fffc0 (576 bytes) for CPU 1");
}

TEST_F(HandoffPercpu, RingWithAnAddressThatWrapsIsRefused)
{
	put_ring(kRing0);
	put_refs({ { kRing0, kRingBytes }, { UINT64_MAX - 63, kRingBytes } });
	expect_refused(2, "handoff: no valid ring at 0xffffffffffffffc0 (576 bytes) for CPU 1");
}

TEST_F(HandoffPercpu, OverlappingRingsAreRefused)
{
	put_ring(kRing0);
	put_ring(kRing0 + 64);
	// Ring 1's header sits in ring 0's records: both valid, but one
	// CPU's records would be written over the other's.
	put_refs({ { kRing0, kRingBytes }, { kRing0 + 64, kRingBytes } });
	expect_refused(2, "handoff: the rings of CPUs 0 and 1 overlap");
}

TEST_F(HandoffPercpu, SameRingTwiceIsRefused)
{
	put_ring(kRing0);
	put_refs({ { kRing0, kRingBytes }, { kRing0, kRingBytes } });
	expect_refused(2, "handoff: the rings of CPUs 0 and 1 overlap");
}

TEST_F(HandoffPercpu, AVersion2GuestCannotAskForIt)
{
	put_ring(kRing0);
	put_refs({ { kRing0, kRingBytes } });
	EXPECT_EQ(hypercall(ET_HC_HANDOFF_PERCPU, kArray, 1, 2), ET_E_INVAL);
	EXPECT_EQ(std::string(h.first_refusal), "unknown hypercall 3");
}

TEST_F(HandoffPercpu, Version2SingleRingIsStillAccepted)
{
	put_ring(kRing0);
	EXPECT_EQ(hypercall(ET_HC_HANDOFF, kRing0, kRingBytes, 2), 0) << h.first_refusal;
	EXPECT_EQ(h.nr_rings, 1u);
	EXPECT_EQ(hypercall(ET_HC_MARK, 0, 0, 1), ET_E_VERSION);
	EXPECT_EQ(std::string(h.first_refusal), "ABI version 1 (this VMM speaks 2 to 3)");
}

// Early events go to their vCPU's ring; each ring's guest records come out
// of the trace as that vCPU's, whatever cpu field the guest wrote.
TEST_F(HandoffPercpu, EachCpusEventsGoToItsRingAndBackAsThatCpu)
{
	const uint64_t ring1 = kRing0 + kRingBytes;
	for (uint32_t i = 0; i < 5; i++) {
		struct et_ring_record ev = {};
		ev.tsc = 100 + i;
		ev.ip = kFn + 16 * i;
		ev.cpu = i % 2; // 0, 1, 0, 1, 0
		ev.kind = ET_REC_CALL;
		ev.flags = ET_REC_SRC_BREAKPOINT;
		recorder_record(&rec, &ev);
	}
	put_ring(kRing0);
	put_ring(ring1);
	put_refs({ { kRing0, kRingBytes }, { ring1, kRingBytes } });
	ASSERT_EQ(hypercall(ET_HC_HANDOFF_PERCPU, kArray, 2), 0) << h.first_refusal;
	EXPECT_EQ(stops, 1);
	EXPECT_EQ(h.nr_rings, 2u);
	EXPECT_EQ(ring_header(kRing0).head, 3u);
	EXPECT_EQ(ring_header(kRing0).vmm_events, 3u);
	EXPECT_EQ(ring_header(ring1).head, 2u);
	EXPECT_EQ(ring_header(ring1).vmm_events, 2u);
	EXPECT_EQ(record(kRing0, 1).ip, kFn + 32);
	EXPECT_EQ(record(ring1, 0).ip, kFn + 16);
	EXPECT_EQ(record(ring1, 1).ip, kFn + 48);
	EXPECT_EQ(record(ring1, 1).cpu, 1u);
	// A second handoff is refused.
	EXPECT_EQ(hypercall(ET_HC_HANDOFF_PERCPU, kArray, 2), ET_E_STATE);

	// The guest records: CPU 1 three calls, CPU 0 one, each in its
	// ring as __fentry__ does (cpu = the record's index, last).
	auto guest_record = [&](uint64_t ring, uint64_t i, uint64_t ip) {
		struct et_ring_record g = {};
		g.tsc = 1000 + i;
		g.ip = ip;
		g.cpu = (uint32_t)i;
		g.kind = ET_REC_CALL;
		g.flags = ET_REC_SRC_GUEST;
		ASSERT_EQ(guest_mem_write(&vm.mem, ring + 64 + 32 * (i % 16), &g, 32), 0);
		uint64_t head = i + 1;
		ASSERT_EQ(guest_mem_write(&vm.mem, ring + ET_RING_OFF_HEAD, &head, 8), 0);
	};
	guest_record(ring1, 2, kFn + 0x100);
	guest_record(ring1, 3, kFn + 0x100);
	guest_record(ring1, 4, kFn + 0x100);
	guest_record(kRing0, 3, kFn + 0x200);
	// What a host wait is placed between (handoff_guest_tscs): the
	// unread records of the vCPU's own ring in the window, complete only.
	uint64_t tscs[4];
	EXPECT_EQ(handoff_guest_tscs(&h, 1, 1003, 1004, tscs, 4), 2u);
	EXPECT_EQ(tscs[0], 1003u);
	EXPECT_EQ(tscs[1], 1004u);
	EXPECT_EQ(handoff_guest_tscs(&h, 0, 0, UINT64_MAX, tscs, 4), 1u);
	EXPECT_EQ(tscs[0], 1003u);
	EXPECT_EQ(handoff_guest_tscs(&h, 1, 0, UINT64_MAX, tscs, 1), 3u) << "all counted, 1 written";
	handoff_read_guest_ring(&h, true);
	EXPECT_EQ(handoff_guest_tscs(&h, 1, 0, UINT64_MAX, tscs, 4), 0u) << "read: not the run's";
	EXPECT_EQ(h.guest_events, 4u);
	EXPECT_EQ(h.guest_lost, 0u);
	ASSERT_EQ(trace_writer_close(rec.out, 0, 0, "test"), 0);
	rec.out = nullptr;

	TraceFile t = load_trace(path);
	ASSERT_EQ(t.error, "");
	std::map<std::pair<unsigned, uint64_t>, int> guest;
	for (const auto &c : t.calls)
		if ((c.flags & ET_REC_SRC_MASK) == ET_REC_SRC_GUEST)
			guest[{ c.cpu, c.ip }]++;
	std::map<std::pair<unsigned, uint64_t>, int> want = { { { 1, kFn + 0x100 }, 3 },
							      { { 0, kFn + 0x200 }, 1 } };
	EXPECT_EQ(guest, want);
	bool marked = false;
	for (const auto &m : t.marks)
		marked |= m.second.rfind("handoff: guest rings of 2 CPUs (CPU 0's at 0x10000, 16 "
					  "records), 5 early events copied, 0 did not fit", 0) == 0;
	EXPECT_TRUE(marked);
}

// A ring one vCPU's guest breaks later stops only that ring's reading.
TEST_F(HandoffPercpu, ABrokenRingStopsOnlyItself)
{
	const uint64_t ring1 = kRing0 + kRingBytes;
	put_ring(kRing0);
	put_ring(ring1);
	put_refs({ { kRing0, kRingBytes }, { ring1, kRingBytes } });
	ASSERT_EQ(hypercall(ET_HC_HANDOFF_PERCPU, kArray, 2), 0) << h.first_refusal;
	uint32_t huge = 1u << 30;
	ASSERT_EQ(guest_mem_write(&vm.mem, ring1 + 12, &huge, 4), 0); // capacity
	handoff_read_guest_ring(&h, false);
	EXPECT_FALSE(h.rings[0].broken);
	EXPECT_TRUE(h.rings[1].broken);
}

} // namespace
