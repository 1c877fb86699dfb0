// SPDX-License-Identifier: MIT
// The run loop's exit dispatch, fed exits made up here: no KVM, no guest.
// The vCPU has no file descriptor, so anything that would need an ioctl
// fails the way a KVM refusing it would; registers come "synced" in the
// run structure, as KVM_CAP_SYNC_REGS delivers them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "arch/x86/cpu_mode.h"
#include "arch/x86/insn.h"
#include "tests/fixtures.h"
#include "tests/shim/earlytrace_shim.h"
#include "vmm/kvm/run_loop.h"
#include "vmm/trace/handoff.h"
#include "vmm/trace/recorder.h"

namespace {

constexpr uint64_t kRamSize = 4u << 20;
constexpr uint32_t kIoDataOffset = 4096; // where KVM puts port I/O data

struct Observed {
	std::vector<et_exit> exits;
};

void observe(void *ctx, struct vcpu *, const struct et_exit *x)
{
	static_cast<Observed *>(ctx)->exits.push_back(*x);
}

struct Device {
	std::vector<uint8_t> written;
	unsigned reads = 0;
	uint8_t read_value = 0x42;
};

void device_io(void *opaque, uint64_t, uint8_t *data, uint32_t len, bool is_write)
{
	Device *d = static_cast<Device *>(opaque);

	if (is_write)
		d->written.insert(d->written.end(), data, data + len);
	else {
		memset(data, d->read_value, len);
		d->reads++;
	}
}

class Dispatch : public ::testing::Test {
protected:
	void SetUp() override
	{
		memset(static_cast<void *>(&vm), 0, sizeof(vm));
		ASSERT_EQ(guest_mem_init(&vm.mem, kRamSize), 0) << et_last_error();
		iobus_init(&vm.bus);
		page = static_cast<uint8_t *>(calloc(1, 2 * 4096));
		memset(&vcpu, 0, sizeof(vcpu));
		vcpu.vm = &vm;
		vcpu.fd = -1;
		vcpu.run = reinterpret_cast<struct kvm_run *>(page);
		vcpu.observe_exit = observe;
		vcpu.observe_exit_ctx = &seen;
		vcpu.sync_regs = vcpu.regs_synced = true;
		// 32-bit protected mode, paging off, flat segments.
		struct kvm_sregs *s = &vcpu.run->s.regs.sregs;
		s->cr0 = X86_CR0_PE;
		s->cs.db = 1;
		s->cs.limit = s->ss.limit = 0xffffffff;
	}
	void TearDown() override
	{
		free(page);
		iobus_free(&vm.bus);
		guest_mem_free(&vm.mem);
	}

	void io_exit(uint16_t port, bool out, uint8_t size, uint32_t count, const void *data)
	{
		struct kvm_run *run = vcpu.run;

		run->exit_reason = KVM_EXIT_IO;
		run->io.direction = out ? KVM_EXIT_IO_OUT : KVM_EXIT_IO_IN;
		run->io.size = size;
		run->io.port = port;
		run->io.count = count;
		run->io.data_offset = kIoDataOffset;
		if (data)
			memcpy(page + kIoDataOffset, data, size * count);
	}

	// An instruction at guest-physical (= linear) address `rip`.
	void code_at(uint64_t rip, std::initializer_list<uint8_t> bytes)
	{
		std::vector<uint8_t> v(bytes);
		ASSERT_EQ(guest_mem_write(&vm.mem, rip, v.data(), v.size()), 0);
		vcpu.run->s.regs.regs.rip = rip;
	}

	enum run_end stop() { return vm_stop_reason(&vm); }

	struct vm vm;
	struct vcpu vcpu;
	uint8_t *page = nullptr;
	Observed seen;
};

struct Hit {
	unsigned calls = 0;
	unsigned slot = 99;
	uint64_t rip = 0;
	bool claim = true;
};

void on_hw(void *ctx, struct vcpu *, unsigned slot)
{
	Hit *h = static_cast<Hit *>(ctx);
	h->calls++;
	h->slot = slot;
}

// As the tracer's handler: a claimed int3 sets the registers to go on.
bool on_int3(void *ctx, struct vcpu *vcpu, struct kvm_regs *regs, const struct kvm_sregs *)
{
	Hit *h = static_cast<Hit *>(ctx);
	h->calls++;
	h->rip = regs->rip;
	if (!h->claim)
		return false;
	regs->rip += 1;
	return vcpu_set_regs(vcpu, regs) == 0;
}

} // namespace

TEST_F(Dispatch, PortWriteGoesToItsDeviceAndIsObserved)
{
	Device dev;
	const uint8_t byte = 0x7e;

	ASSERT_EQ(iobus_register(&vm.bus, IOBUS_PIO, 0x3f8, 8, device_io, &dev, "com1"), 0);
	io_exit(0x3f8, true, 1, 1, &byte);
	EXPECT_EQ(vcpu_dispatch_exit(&vcpu), EXIT_RESUME);
	ASSERT_EQ(dev.written.size(), 1u);
	EXPECT_EQ(dev.written[0], 0x7e);
	ASSERT_EQ(seen.exits.size(), 1u);
	EXPECT_EQ(seen.exits[0].kind, ET_REC_PIO);
	EXPECT_EQ(seen.exits[0].addr, 0x3f8u);
	EXPECT_EQ(seen.exits[0].value, 0x7eu);
	EXPECT_EQ(seen.exits[0].write, 1);
	EXPECT_EQ(seen.exits[0].unclaimed, 0);
	EXPECT_EQ(stop(), RUN_END_NONE);
}

TEST_F(Dispatch, StringPortIoIsOneAccessPerElement)
{
	Device dev;
	const uint8_t bytes[3] = { 'a', 'b', 'c' };

	ASSERT_EQ(iobus_register(&vm.bus, IOBUS_PIO, 0x3f8, 8, device_io, &dev, "com1"), 0);
	io_exit(0x3f8, true, 1, 3, bytes);
	EXPECT_EQ(vcpu_dispatch_exit(&vcpu), EXIT_RESUME);
	EXPECT_EQ(std::string(dev.written.begin(), dev.written.end()), "abc");
	EXPECT_EQ(seen.exits.size(), 3u);
}

TEST_F(Dispatch, UnclaimedPortReadsAllOnesAndIsMarkedUnclaimed)
{
	io_exit(0x80, false, 2, 1, nullptr);
	EXPECT_EQ(vcpu_dispatch_exit(&vcpu), EXIT_RESUME);
	uint16_t value;
	memcpy(&value, page + kIoDataOffset, 2);
	EXPECT_EQ(value, 0xffff);
	ASSERT_EQ(seen.exits.size(), 1u);
	EXPECT_EQ(seen.exits[0].unclaimed, 1);
	EXPECT_EQ(seen.exits[0].write, 0);
}

TEST_F(Dispatch, MmioReadIsAnsweredByItsDevice)
{
	Device dev;

	ASSERT_EQ(iobus_register(&vm.bus, IOBUS_MMIO, 0xfee00000, 0x1000, device_io, &dev, "dev"),
		  0);
	vcpu.run->exit_reason = KVM_EXIT_MMIO;
	vcpu.run->mmio.phys_addr = 0xfee00020;
	vcpu.run->mmio.len = 4;
	vcpu.run->mmio.is_write = 0;
	EXPECT_EQ(vcpu_dispatch_exit(&vcpu), EXIT_RESUME);
	EXPECT_EQ(dev.reads, 1u);
	EXPECT_EQ(vcpu.run->mmio.data[0], 0x42);
	ASSERT_EQ(seen.exits.size(), 1u);
	EXPECT_EQ(seen.exits[0].kind, ET_REC_MMIO);
	EXPECT_EQ(seen.exits[0].addr, 0xfee00020u);
	EXPECT_EQ(seen.exits[0].value, 0x42424242u);
}

TEST_F(Dispatch, DeviceThatEndsTheRunStopsTheLoop)
{
	struct debug_exit dx = { vm_request_stop_detail, &vm };
	const uint8_t status = 7;

	ASSERT_EQ(iobus_register(&vm.bus, IOBUS_PIO, ET_PORT_DEBUG_EXIT, 4, debug_exit_io, &dx,
				 "debug-exit"),
		  0);
	io_exit(ET_PORT_DEBUG_EXIT, true, 1, 1, &status);
	EXPECT_EQ(vcpu_dispatch_exit(&vcpu), EXIT_STOP);
	EXPECT_EQ(stop(), RUN_END_DEBUG_EXIT);
	EXPECT_EQ(vm_stop_status(&vm), 7);
}

TEST_F(Dispatch, MsrReadKvmRefusesIsObservedAsRefused)
{
	// No vCPU file descriptor: KVM_GET_MSRS fails as for an MSR KVM does
	// not have, so the guest gets #GP (msr.error) and the exit says so.
	vcpu.run->exit_reason = KVM_EXIT_X86_RDMSR;
	vcpu.run->msr.index = 0x1a0;
	vcpu.run->msr.data = 0x1234;
	EXPECT_EQ(vcpu_dispatch_exit(&vcpu), EXIT_RESUME);
	EXPECT_EQ(vcpu.run->msr.error, 1);
	EXPECT_EQ(vcpu.run->msr.data, 0u);
	ASSERT_EQ(seen.exits.size(), 1u);
	EXPECT_EQ(seen.exits[0].kind, ET_REC_MSR);
	EXPECT_EQ(seen.exits[0].addr, 0x1a0u);
	EXPECT_EQ(seen.exits[0].write, 0);
	EXPECT_EQ(seen.exits[0].unclaimed, 1);
}

TEST_F(Dispatch, HardwareBreakpointRunsItsHandler)
{
	Hit hit;

	vcpu.debug.hw_addr[2] = 0x1000;
	vcpu.debug.hw_fn[2] = on_hw;
	vcpu.debug.hw_ctx[2] = &hit;
	vcpu.run->exit_reason = KVM_EXIT_DEBUG;
	vcpu.run->debug.arch.exception = 1; // #DB
	vcpu.run->debug.arch.pc = 0x1000;
	vcpu.run->debug.arch.dr6 = X86_DR6_HIT(2);
	EXPECT_EQ(vcpu_dispatch_exit(&vcpu), EXIT_RESUME);
	EXPECT_EQ(hit.calls, 1u);
	EXPECT_EQ(hit.slot, 2u);
}

TEST_F(Dispatch, BreakpointExitAtAnInt3GoesToTheInt3Handler)
{
	Hit hit;

	vcpu.debug.int3_fn = on_int3;
	vcpu.debug.int3_ctx = &hit;
	code_at(0x2000, { X86_OPCODE_INT3 });
	vcpu.run->exit_reason = KVM_EXIT_DEBUG;
	vcpu.run->debug.arch.exception = X86_VECTOR_BP;
	EXPECT_EQ(vcpu_dispatch_exit(&vcpu), EXIT_RESUME);
	EXPECT_EQ(hit.calls, 1u);
	EXPECT_EQ(hit.rip, 0x2000u);
	EXPECT_EQ(vcpu.run->s.regs.regs.rip, 0x2001u); // the handler moved on
	EXPECT_TRUE(vcpu.run->kvm_dirty_regs & KVM_SYNC_X86_REGS);
}

// With several vCPUs, two hit one site's int3 together; the first one's
// exit (under the exit lock) records the call and, as --oneshot does,
// puts the site's bytes back. The second's exit, handled next, finds no
// int3 at its rip: it must go on there, running the instruction now in
// place, without the handler (which would record the call again, or time
// the exit by running the guest on) and without a #BP for the guest.
static bool record_and_restore(void *ctx, struct vcpu *vcpu, struct kvm_regs *regs,
			       const struct kvm_sregs *)
{
	static const uint8_t nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	Hit *h = static_cast<Hit *>(ctx);

	h->calls++;
	h->rip = regs->rip;
	if (guest_mem_write(&vcpu->vm->mem, regs->rip, nop5, sizeof(nop5)))
		return false;
	regs->rip += sizeof(nop5);
	return vcpu_set_regs(vcpu, regs) == 0;
}

TEST_F(Dispatch, Int3RemovedWhileAnotherVcpuWaitedResumesThatVcpuAtTheInstruction)
{
	Hit hit;
	std::vector<uint8_t> page2(2 * 4096);
	struct vcpu other;

	vm.nr_vcpus = 2;
	memcpy(&other, &vcpu, sizeof(other));
	other.id = 1;
	other.run = reinterpret_cast<struct kvm_run *>(page2.data());
	memcpy(other.run, vcpu.run, sizeof(*other.run));
	vcpu.debug.int3_fn = other.debug.int3_fn = record_and_restore;
	vcpu.debug.int3_ctx = other.debug.int3_ctx = &hit;
	code_at(0x6000, { X86_OPCODE_INT3, 0x1f, 0x44, 0x00, 0x00 });
	other.run->s.regs.regs.rip = 0x6000;
	for (struct vcpu *v : { &vcpu, &other }) {
		v->run->exit_reason = KVM_EXIT_DEBUG;
		v->run->debug.arch.exception = X86_VECTOR_BP;
	}
	// vCPU 0's exit first: recorded, the site restored, rip past it.
	EXPECT_EQ(vcpu_dispatch_exit(&vcpu), EXIT_RESUME);
	EXPECT_EQ(hit.calls, 1u);
	EXPECT_EQ(vcpu.run->s.regs.regs.rip, 0x6005u);
	EXPECT_EQ(vcpu.stale_int3, 0u);
	// vCPU 1's, which waited: no handler, rip unchanged (the nop runs).
	EXPECT_EQ(vcpu_dispatch_exit(&other), EXIT_RESUME);
	EXPECT_EQ(hit.calls, 1u);
	EXPECT_EQ(other.run->s.regs.regs.rip, 0x6000u);
	EXPECT_FALSE(other.run->kvm_dirty_regs & KVM_SYNC_X86_REGS);
	EXPECT_EQ(other.stale_int3, 1u);
	EXPECT_EQ(stop(), RUN_END_NONE);
}

// The same check never hides a breakpoint still in place: on several
// vCPUs an int3 at rip goes to the handler as on one.
TEST_F(Dispatch, Int3StillInPlaceOnSeveralVcpusGoesToTheHandler)
{
	Hit hit;

	vm.nr_vcpus = 2;
	vcpu.debug.int3_fn = on_int3;
	vcpu.debug.int3_ctx = &hit;
	code_at(0x7000, { X86_OPCODE_INT3 });
	vcpu.run->exit_reason = KVM_EXIT_DEBUG;
	vcpu.run->debug.arch.exception = X86_VECTOR_BP;
	EXPECT_EQ(vcpu_dispatch_exit(&vcpu), EXIT_RESUME);
	EXPECT_EQ(hit.calls, 1u);
	EXPECT_EQ(vcpu.run->s.regs.regs.rip, 0x7001u);
	EXPECT_EQ(vcpu.stale_int3, 0u);
}

TEST_F(Dispatch, DebugExitNobodyPlacedIsACrash)
{
	vcpu.run->exit_reason = KVM_EXIT_DEBUG;
	vcpu.run->debug.arch.exception = 1;
	vcpu.run->debug.arch.pc = 0x3000;
	EXPECT_EQ(vcpu_dispatch_exit(&vcpu), EXIT_STOP);
	EXPECT_EQ(stop(), RUN_END_GUEST_CRASH);
	EXPECT_EQ(vm_stop_status(&vm), EXIT_STATUS_GUEST_CRASH);
	ASSERT_NE(vcpu.crash_reason, nullptr);
	EXPECT_NE(std::string(vcpu.crash_reason).find("debug exit"), std::string::npos);
}

TEST_F(Dispatch, EmulationFailureAtAnInt3IsTheTracersBreakpoint)
{
	// kvm-pvm reports an int3 in guest kernel mode this way.
	Hit hit;

	vcpu.debug.int3_fn = on_int3;
	vcpu.debug.int3_ctx = &hit;
	code_at(0x4000, { X86_OPCODE_INT3 });
	vcpu.run->exit_reason = KVM_EXIT_INTERNAL_ERROR;
	vcpu.run->internal.suberror = KVM_INTERNAL_ERROR_EMULATION;
	EXPECT_EQ(vcpu_dispatch_exit(&vcpu), EXIT_RESUME);
	EXPECT_EQ(hit.calls, 1u);
	EXPECT_EQ(vcpu.nr_emulation_fallbacks, 1u);
	EXPECT_EQ(stop(), RUN_END_NONE);
}

// kvm-pvm's way of the same race (an emulation failure at the int3,
// found by Smp.OneshotSiteRemovedWhileAnotherVcpuWaitsResumesThatVcpu):
// KVM fetched the int3, but by the time this vCPU's exit is handled the
// site holds its nop again. The vCPU goes on at rip (KVM fetches the nop
// now there); the nop is no instruction the fallback finishes, so
// without this the run ended as a crash.
TEST_F(Dispatch, EmulationFailureAtAnInt3AnotherVcpuRemovedResumesAtTheInstruction)
{
	Hit hit;

	vm.nr_vcpus = 2;
	vcpu.debug.int3_fn = on_int3;
	vcpu.debug.int3_ctx = &hit;
	code_at(0x4000, { 0x0f, 0x1f, 0x44, 0x00, 0x00 });
	vcpu.run->exit_reason = KVM_EXIT_INTERNAL_ERROR;
	vcpu.run->emulation_failure.suberror = KVM_INTERNAL_ERROR_EMULATION;
	vcpu.run->emulation_failure.ndata = 3;
	vcpu.run->emulation_failure.flags = KVM_INTERNAL_ERROR_EMULATION_FLAG_INSTRUCTION_BYTES;
	vcpu.run->emulation_failure.insn_size = 15;
	const uint8_t fetched[] = { 0xcc, 0x1f, 0x44, 0x00, 0x00 };
	memcpy(vcpu.run->emulation_failure.insn_bytes, fetched, sizeof(fetched));
	EXPECT_EQ(vcpu_dispatch_exit(&vcpu), EXIT_RESUME);
	EXPECT_EQ(hit.calls, 0u);
	EXPECT_EQ(vcpu.run->s.regs.regs.rip, 0x4000u);
	EXPECT_FALSE(vcpu.run->kvm_dirty_regs & KVM_SYNC_X86_REGS);
	EXPECT_EQ(vcpu.stale_int3, 1u);
	EXPECT_EQ(stop(), RUN_END_NONE);

	// With one vCPU nothing rewrites code under an exit: the same
	// report is the instruction the fallback cannot finish, a crash.
	vm.nr_vcpus = 1;
	EXPECT_EQ(vcpu_dispatch_exit(&vcpu), EXIT_STOP);
	EXPECT_EQ(stop(), RUN_END_GUEST_CRASH);
}

TEST_F(Dispatch, EmulationFailureAtAnUnknownInstructionIsACrash)
{
	code_at(0x5000, { 0x0f, 0x0b }); // ud2: the fallback does not finish it
	vcpu.run->exit_reason = KVM_EXIT_INTERNAL_ERROR;
	vcpu.run->internal.suberror = KVM_INTERNAL_ERROR_EMULATION;
	EXPECT_EQ(vcpu_dispatch_exit(&vcpu), EXIT_STOP);
	EXPECT_EQ(stop(), RUN_END_GUEST_CRASH);
	EXPECT_EQ(vcpu.nr_emulation_fallbacks, 0u);
}

TEST_F(Dispatch, TripleFaultIsObservedAndACrash)
{
	vcpu.run->exit_reason = KVM_EXIT_SHUTDOWN;
	EXPECT_EQ(vcpu_dispatch_exit(&vcpu), EXIT_STOP);
	EXPECT_EQ(stop(), RUN_END_GUEST_CRASH);
	ASSERT_EQ(seen.exits.size(), 1u);
	EXPECT_EQ(seen.exits[0].kind, ET_REC_SHUTDOWN);
	EXPECT_NE(std::string(vcpu.crash_reason).find("triple fault"), std::string::npos);
}

// Linux's reboot=t: idt_invalidate() (limit 0), then int3. Where rip is
// after the triple fault depends on who delivered the #BP: on the int3
// (the CPU, some KVMs) or after it (an injected trap).
TEST_F(Dispatch, TripleFaultOnAnEmptyIdtAtAnInt3IsAReset)
{
	for (uint64_t rip : { 0x5000u, 0x5001u }) {
		vm.stop = 0;
		seen.exits.clear();
		code_at(0x5000, { 0xcc, 0x90 });
		vcpu.run->s.regs.regs.rip = rip;
		vcpu.run->s.regs.sregs.idt.limit = 0;
		vcpu.run->exit_reason = KVM_EXIT_SHUTDOWN;
		EXPECT_EQ(vcpu_dispatch_exit(&vcpu), EXIT_STOP);
		EXPECT_EQ(stop(), RUN_END_RESET) << rip;
		EXPECT_EQ(vm_stop_status(&vm), 0);
		EXPECT_STREQ(vm_stop_detail(&vm), "triple fault on an empty IDT");
		ASSERT_EQ(seen.exits.size(), 1u);
		EXPECT_EQ(seen.exits[0].kind, ET_REC_SHUTDOWN);
		EXPECT_EQ(vcpu.crash_reason, nullptr);
	}
}

// Any other triple fault is a crash: an int3 the guest's (non-empty) IDT
// could not deliver, or another fault on an empty IDT.
TEST_F(Dispatch, OtherTripleFaultsAreCrashes)
{
	struct {
		uint16_t idt_limit;
		std::initializer_list<uint8_t> code;
	} cases[] = {
		{ 7, { 0xcc, 0x90 } },	      // int3, the boot IDT's limit
		{ 0, { 0x90, 0x0f, 0x0b } }, // nop; ud2 (the test kernel's crash=triple)
	};
	for (const auto &c : cases) {
		vm.stop = 0;
		code_at(0x5000, c.code);
		vcpu.run->s.regs.regs.rip = 0x5001;
		vcpu.run->s.regs.sregs.idt.limit = c.idt_limit;
		vcpu.run->exit_reason = KVM_EXIT_SHUTDOWN;
		EXPECT_EQ(vcpu_dispatch_exit(&vcpu), EXIT_STOP);
		EXPECT_EQ(stop(), RUN_END_GUEST_CRASH) << c.idt_limit;
	}
}

TEST_F(Dispatch, ResetAndPowerOffEndTheRunCleanly)
{
	vcpu.run->exit_reason = KVM_EXIT_SYSTEM_EVENT;
	vcpu.run->system_event.type = KVM_SYSTEM_EVENT_RESET;
	EXPECT_EQ(vcpu_dispatch_exit(&vcpu), EXIT_STOP);
	EXPECT_EQ(stop(), RUN_END_RESET);
	EXPECT_EQ(vm_stop_status(&vm), 0);
}

TEST_F(Dispatch, HaltWithNothingToWakeItStops)
{
	vcpu.run->exit_reason = KVM_EXIT_HLT;
	EXPECT_EQ(vcpu_dispatch_exit(&vcpu), EXIT_STOP);
	EXPECT_EQ(stop(), RUN_END_HALTED);
	ASSERT_EQ(seen.exits.size(), 1u);
	EXPECT_EQ(seen.exits[0].kind, ET_REC_HLT);
}

TEST_F(Dispatch, SignalExitResumesUnlessAStopWasRequested)
{
	vcpu.run->exit_reason = KVM_EXIT_INTR;
	EXPECT_EQ(vcpu_dispatch_exit(&vcpu), EXIT_RESUME);
	vm_request_stop(&vm, RUN_END_SIGNAL);
	EXPECT_EQ(vcpu_dispatch_exit(&vcpu), EXIT_STOP);
	EXPECT_EQ(stop(), RUN_END_SIGNAL);
}

TEST_F(Dispatch, ExitReasonNobodyKnowsIsACrash)
{
	vcpu.run->exit_reason = 9999;
	EXPECT_EQ(vcpu_dispatch_exit(&vcpu), EXIT_STOP);
	EXPECT_EQ(stop(), RUN_END_GUEST_CRASH);
	EXPECT_STREQ(vcpu.crash_reason, "unexpected exit");
}

namespace {

size_t no_capture(void *, const char *)
{
	return 0;
}

} // namespace

TEST_F(Dispatch, HypercallReachesTheHandoffAndMarksTheTrace)
{
	TempDir dir;
	const std::string path = dir.file("t.trace");
	struct recorder rec;
	struct handoff h;
	const char text[] = "hello from the guest";
	const uint64_t text_gpa = 0x3000, block_gpa = 0x2000;
	struct et_hypercall hc = {};
	uint32_t addr = (uint32_t)block_gpa;

	ASSERT_EQ(recorder_init(&rec, &vcpu, 64, OVERFLOW_STOP, 0), 0);
	ASSERT_EQ(trace_writer_open(&rec.out, path.c_str(), nullptr), 0) << et_last_error();
	struct handoff_ops ops = {};
	ops.stop_capture = no_capture;
	struct handoff_config cfg = {};
	cfg.vm = &vm;
	cfg.vcpu = &vcpu;
	cfg.rec = &rec;
	cfg.ops = &ops;
	ASSERT_EQ(handoff_attach(&h, &cfg), 0) << et_last_error();
	hc.abi_version = ET_ABI_VERSION;
	hc.nr = ET_HC_MARK;
	hc.arg0 = text_gpa;
	hc.result = 12345;
	ASSERT_EQ(guest_mem_write(&vm.mem, text_gpa, text, sizeof(text)), 0);
	ASSERT_EQ(guest_mem_write(&vm.mem, block_gpa, &hc, sizeof(hc)), 0);

	io_exit(ET_PORT_HYPERCALL, true, 4, 1, &addr);
	EXPECT_EQ(vcpu_dispatch_exit(&vcpu), EXIT_RESUME);
	ASSERT_EQ(guest_mem_read(&vm.mem, block_gpa, &hc, sizeof(hc)), 0);
	EXPECT_EQ(hc.result, 0) << "the VMM answers in the block";
	EXPECT_EQ(h.hypercalls, 1u);
	EXPECT_EQ(h.bad_hypercalls, 0u);
	ASSERT_EQ(seen.exits.size(), 1u);
	EXPECT_EQ(seen.exits[0].addr, (uint64_t)ET_PORT_HYPERCALL);

	// A block outside guest RAM is refused and counted, never followed.
	addr = 0xfff00000u;
	io_exit(ET_PORT_HYPERCALL, true, 4, 1, &addr);
	EXPECT_EQ(vcpu_dispatch_exit(&vcpu), EXIT_RESUME);
	EXPECT_EQ(h.bad_hypercalls, 1u);

	ASSERT_EQ(trace_writer_close(rec.out, 0, 0, "test"), 0);
	rec.out = nullptr;
	struct trace_reader *r;
	ASSERT_EQ(trace_reader_open(&r, path.c_str()), 0) << et_last_error();
	size_t nr;
	const struct trace_note *notes = trace_reader_notes(r, &nr);
	std::vector<std::string> marks;
	for (size_t i = 0; i < nr; i++)
		if (notes[i].type == TRACE_REC_MARK)
			marks.push_back(notes[i].text);
	trace_reader_close(r);
	ASSERT_EQ(marks.size(), 2u);
	EXPECT_EQ(marks[0], text);
	EXPECT_NE(marks[1].find("hypercall refused"), std::string::npos) << marks[1];
	recorder_free(&rec);
}
