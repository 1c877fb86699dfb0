// SPDX-License-Identifier: MIT
// The two recording paths a guest runs, run here on the host: the x86-64
// trampoline template (placed in memory the way the VMM places it, at an
// address a 32-bit displacement reaches) and guestlib's __fentry__ (linked
// into this test from guestlib/fentry_x86_64.S, with guestlib/ring.c).
//
// Each test single-steps one call through the path (TF): after every one
// of its instructions the SIGTRAP handler first reads the batch or ring the
// way a reader does while the recording is stopped half-way (the VMM at an
// exit, the guest in an interrupt), then makes a whole traced call itself,
// as an interrupt or NMI handler would. Every record a reader takes must be
// whole, and at the end every call is there exactly once: the outer one,
// and one per instruction it was interrupted after. The guest kernel test
// (tests/boot/test_nesting.cc) does the same at three chosen points inside
// a real guest; this one tries them all.
#include <gtest/gtest.h>

#include <capstone/capstone.h>
#include <signal.h>
#include <asm/prctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <ucontext.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "earlytrace/abi.h"
#include "tests/shim/earlytrace_shim.h"
#include "trampolines/templates.h"
#include "vmm/loader/kernel_image.h"
#include "vmm/symbols/symbols.h"

// guestlib (guestlib.h is C only: its et_hypercall() is also a struct).
// __fentry__ reads where to record from et_fentry_ring (guestlib/patch.c in
// a guest).
extern "C" {
int et_ring_init(struct et_ring *r, size_t bytes, uint64_t tsc_khz);
int et_ring_read(const struct et_ring *r, uint64_t i, struct et_ring_record *out);
void __fentry__(void);
void et_fentry_percpu(void);
extern struct et_ring *volatile et_fentry_ring;
struct et_ring *volatile et_fentry_ring;
}

namespace {

const uint64_t kOuterParent = 0x1111, kNestedParent = 0x2222;
const uint64_t kTF = 0x100;

// Calls a recording path as a site's call does: [rsp] the return address,
// [rsp + 8] the parent. Past the red zone, which a kernel does not have
// but this process does. Returns the return address the path sees (the
// same for every call: records tell calls apart by their parent); with
// entry 0, only that.
__attribute__((noinline)) uint64_t call_path(uint64_t entry, uint64_t parent, bool single_step)
{
	uint64_t ret;

	__asm__ volatile("sub $128, %%rsp\n\t"
			 "push %[parent]\n\t"
			 "lea 1f(%%rip), %[ret]\n\t"
			 "test %[entry], %[entry]\n\t"
			 "jz 1f\n\t"
			 "test %[step], %[step]\n\t"
			 "jz 2f\n\t"
			 "pushfq\n\t"
			 "orq %[tf], (%%rsp)\n\t"
			 "popfq\n\t" // traps after the next instruction, the call
			 "2: call *%[entry]\n\t"
			 "1: add $136, %%rsp"
			 : [ret] "=&r"(ret)
			 : [entry] "r"(entry), [parent] "r"(parent), [step] "r"((uint64_t)single_step),
			   [tf] "i"(kTF)
			 : "memory", "cc");
	return ret;
}

// What each test plugs into the SIGTRAP handler.
struct Stepper {
	uint64_t entry = 0, code_end = 0; // the path's code: trap inside it only
	uint64_t ret = call_path(0, 0, false); // what every call records
	long traps = 0, torn = 0, whole_seen = 0;
	void (*check)(Stepper *) = nullptr; // a reader, half-way through
};
Stepper *stepper;

void on_trap(int, siginfo_t *, void *ctx)
{
	ucontext_t *uc = static_cast<ucontext_t *>(ctx);
	uint64_t rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];

	// Back in call_path: the path returned. No more steps.
	if (rip < stepper->entry || rip >= stepper->code_end) {
		uc->uc_mcontext.gregs[REG_EFL] &= ~(greg_t)kTF;
		return;
	}
	stepper->traps++;
	stepper->check(stepper);
	call_path(stepper->entry, kNestedParent, false);
}

// Single-steps one call through the path at entry, nesting a call after
// each of its instructions.
void single_step(Stepper *s)
{
	struct sigaction sa = {}, old = {};

	stepper = s;
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	ASSERT_EQ(sigaction(SIGTRAP, &sa, &old), 0);
	call_path(s->entry, kOuterParent, true);
	sigaction(SIGTRAP, &old, nullptr);
	stepper = nullptr;
}

// Low memory, executable: the template addresses its records with a
// sign-extended 32-bit displacement.
struct LowMemory {
	uint8_t *p = nullptr;
	size_t len;
	explicit LowMemory(size_t n) : len(n)
	{
		void *m = mmap(nullptr, n, PROT_READ | PROT_WRITE | PROT_EXEC,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
		p = m == MAP_FAILED ? nullptr : static_cast<uint8_t *>(m);
	}
	~LowMemory()
	{
		if (p)
			munmap(p, len);
	}
};

// The trampoline batch in low memory, laid out and relocated as
// trampolines/placement.c does it.
struct Batch {
	const struct tramp_template *tpl = tramp_template_for(64);
	uint64_t capacity = 256;
	LowMemory mem{ 64 * 1024 };
	struct et_tramp_batch *header() { return (struct et_tramp_batch *)(mem.p + tpl->header); }
	uint8_t *end() { return mem.p + tpl->size + capacity * 32; }
	struct et_ring_record *slot(int64_t off) { return (struct et_ring_record *)(end() + off); }
	bool place()
	{
		if (!mem.p)
			return false;
		memcpy(mem.p, tpl->bytes, tpl->size);
		for (size_t i = 0; i < tpl->nr_end_relocs; i++) {
			uint32_t disp;
			memcpy(&disp, mem.p + tpl->end_relocs[i], 4);
			disp += (uint32_t)(uintptr_t)end();
			memcpy(mem.p + tpl->end_relocs[i], &disp, 4);
		}
		memset(end() - capacity * 32, 0, capacity * 32);
		header()->magic = ET_TB_MAGIC;
		header()->cursor = header()->start = -(int64_t)capacity * 32;
		return true;
	}
};
Batch *batch;

// A record the trampolines completed (ip != 0) must be whole: the return
// address and the parent of one call, and a TSC.
bool whole_tramp_record(const Stepper *s, const struct et_ring_record *r)
{
	return r->tsc != 0 && r->ip == s->ret &&
	       (r->parent_ip == kOuterParent || r->parent_ip == kNestedParent);
}

// The VMM's view at an exit: every reserved record is complete (and then
// whole) or not yet written (ip 0).
void check_batch(Stepper *s)
{
	int64_t cursor = batch->header()->cursor;
	for (int64_t off = batch->header()->start; off < std::min<int64_t>(cursor, 0); off += 32) {
		const struct et_ring_record *r = batch->slot(off);
		if (!r->ip)
			continue;
		s->whole_seen++;
		s->torn += !whole_tramp_record(s, r);
	}
}

struct Ring {
	static const uint32_t kRecords = 64;
	alignas(64) uint8_t buf[sizeof(struct et_ring) + kRecords * sizeof(struct et_ring_record)];
	struct et_ring *r() { return reinterpret_cast<struct et_ring *>(buf); }
};
Ring *ring;

// guestlib's readers' view (et_ring_read) half-way through a recording:
// whatever it takes is whole.
void check_ring(Stepper *s)
{
	struct et_ring *r = ring->r();
	uint64_t head = r->head, first = head > r->capacity ? head - r->capacity : 0;

	for (uint64_t j = first; j < head; j++) {
		struct et_ring_record rec;
		if (!et_ring_read(r, j, &rec))
			continue;
		s->whole_seen++;
		bool ok = rec.tsc != 0 && rec.kind == ET_REC_CALL && rec.flags == ET_REC_SRC_GUEST &&
			  rec.ip == s->ret - 5 &&
			  (rec.parent_ip == kOuterParent || rec.parent_ip == kNestedParent ||
			   rec.parent_ip == 0);
		s->torn += !ok;
	}
}

// The instructions of the path from entry to its first ret.
size_t path_length(const uint8_t *code, uint64_t entry)
{
	csh cs;
	cs_insn *insn = nullptr;
	size_t len = 0;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return 0;
	size_t n = cs_disasm(cs, code, 256, entry, 0, &insn);
	for (size_t i = 0; i < n; i++) {
		len++;
		if (!strcmp(insn[i].mnemonic, "ret"))
			break;
	}
	cs_free(insn, n);
	cs_close(&cs);
	return len;
}

} // namespace

TEST(RecordingPaths, TrampolineLosesNothingWhateverInstructionANestedCallInterrupts)
{
	Batch b;
	ASSERT_TRUE(b.place()) << "no executable memory below 2 GiB";
	batch = &b;
	Stepper s;
	s.entry = (uint64_t)(uintptr_t)(b.mem.p + b.tpl->record_entry);
	s.code_end = (uint64_t)(uintptr_t)(b.mem.p + b.tpl->oneshot_entry);
	s.check = check_batch;
	single_step(&s);
	batch = nullptr;

	// A trap after every instruction of the path but its ret (which
	// leaves it): 19 of the 20, the site's call included.
	EXPECT_EQ(s.traps, (long)path_length(b.mem.p + b.tpl->record_entry, s.entry));
	EXPECT_EQ(s.torn, 0) << "a reader took a record that was not whole";
	EXPECT_GT(s.whole_seen, 0);
	// Every call once: the outer one and one per trap, all complete.
	int64_t used = b.header()->cursor - b.header()->start;
	ASSERT_EQ(used, (s.traps + 1) * 32);
	long outer = 0, nested = 0;
	for (int64_t off = b.header()->start; off < b.header()->cursor; off += 32) {
		const struct et_ring_record *r = b.slot(off);
		ASSERT_TRUE(whole_tramp_record(&s, r)) << "record at " << off;
		outer += r->parent_ip == kOuterParent;
		nested += r->parent_ip == kNestedParent;
	}
	EXPECT_EQ(outer, 1);
	EXPECT_EQ(nested, s.traps);
}

TEST(RecordingPaths, GuestRingLosesNothingWhateverInstructionANestedCallInterrupts)
{
	Ring rg;
	ASSERT_EQ(et_ring_init(rg.r(), sizeof(rg.buf), 0), 0);
	ring = &rg;
	et_fentry_ring = rg.r();
	// Wrap the ring first: every slot then holds a complete record of the
	// lap before, which a reader must not take for the one being written.
	for (int i = 0; i < 50; i++)
		call_path((uint64_t)(uintptr_t)__fentry__, 0, false);
	Stepper s;
	s.entry = (uint64_t)(uintptr_t)__fentry__;
	s.code_end = s.entry + 256;
	s.check = check_ring;
	uint64_t first = rg.r()->head;
	single_step(&s);
	et_fentry_ring = nullptr;
	ring = nullptr;

	EXPECT_EQ(s.traps, (long)path_length((const uint8_t *)(uintptr_t)__fentry__, s.entry));
	EXPECT_EQ(s.torn, 0) << "a reader took a record that was not whole";
	EXPECT_GT(s.whole_seen, 0);
	ASSERT_EQ(rg.r()->head - first, (uint64_t)s.traps + 1);
	ASSERT_GT(rg.r()->head, rg.r()->capacity) << "the ring wrapped";
	long outer = 0, nested = 0;
	for (uint64_t j = first; j < rg.r()->head; j++) {
		struct et_ring_record rec;
		ASSERT_EQ(et_ring_read(rg.r(), j, &rec), 1) << "record " << j;
		EXPECT_EQ(rec.cpu, 0u);
		EXPECT_EQ(rec.ip, s.ret - 5);
		outer += rec.parent_ip == kOuterParent;
		nested += rec.parent_ip == kNestedParent;
	}
	EXPECT_EQ(outer, 1);
	EXPECT_EQ(nested, s.traps);
}

// guestlib's __fentry__ as the test images link it: the guest ring's
// recording path, from the site's call to the return (issue 19's goal: at
// most 30; the previous design, a C recorder behind pushf/cli, took 68).
// et_fentry_percpu, the per-CPU tracing's handler, is as short: its ring
// comes from the calling CPU's per-CPU slot (%gs: on x86_64, %fs: on
// i386) in the one load __fentry__ uses for its global pointer.
TEST(GuestlibFentry, RecordingPathIsShortAndInterruptible)
{
	const struct { const char *arch; size_t insns; const char *percpu_seg; } want[] = {
		{ "x86_64", 29, "gs:" }, { "i386", 30, "fs:" }
	};

	for (const auto &w : want) {
		struct kernel_image img;
		struct symbols syms = {};

		ASSERT_EQ(kernel_image_open(&img, (std::string(ET_TEST_IMAGES) + "/" + w.arch + ".elf").c_str()), 0)
			<< et_last_error();
		ASSERT_EQ(symbols_load(&syms, &img, nullptr), 0) << et_last_error();
		for (const char *handler : { "__fentry__", "et_fentry_percpu" }) {
			uint64_t addr, paddr;
			uint32_t flags;
			ASSERT_EQ(symbols_addr(&syms, handler, &addr), 0) << handler;
			const uint8_t *code = kernel_image_vaddr_bytes(&img, addr, 128, &paddr, &flags);
			ASSERT_NE(code, nullptr);
			csh cs;
			cs_insn *insn = nullptr;
			ASSERT_EQ(cs_open(CS_ARCH_X86, img.elf_class == 64 ? CS_MODE_64 : CS_MODE_32, &cs), CS_ERR_OK);
			size_t n = cs_disasm(cs, code, 128, addr, 0, &insn);
			std::vector<std::string> path;
			long segment_loads = 0;
			for (size_t i = 0; i < n; i++) {
				path.push_back(insn[i].mnemonic);
				segment_loads += strstr(insn[i].op_str, w.percpu_seg) != nullptr;
				if (!strcmp(insn[i].mnemonic, "ret"))
					break;
			}
			cs_free(insn, n);
			cs_close(&cs);
			std::string what = std::string(w.arch) + " " + handler;
			ASSERT_FALSE(path.empty());
			EXPECT_EQ(path.back(), "ret") << what;
			EXPECT_EQ(path.size() + 1, w.insns) << what;
			EXPECT_LE(path.size() + 1, 30u) << what;
			EXPECT_EQ(std::count(path.begin(), path.end(), "xadd"), 1) << what;
			EXPECT_EQ(std::count(path.begin(), path.end(), "cli"), 0) << what;
			EXPECT_EQ(segment_loads, strcmp(handler, "__fentry__") ? 1 : 0) << what;
			for (const auto &m : path)
				EXPECT_TRUE(m.rfind("j", 0) != 0 && m != "call") << what << ": " << m;
		}
		symbols_free(&syms);
		kernel_image_close(&img);
	}
}

// et_fentry_percpu on the host: this thread's GS base is its per-CPU base
// (arch_prctl, as a guest kernel sets it with wrmsr), so a call records
// into the ring the slot at GS base + &et_fentry_ring points to; moving
// the base to another "CPU's" slot moves the next call to that CPU's ring,
// and et_fentry_ring itself (CPU 0's copy when the base is 0) is never
// touched.
TEST(GuestlibFentry, PerCpuHandlerRecordsIntoTheCallingCpusRing)
{
	Ring rings[2];
	struct et_ring *slots[2];
	unsigned long old_gs = 0;

	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(et_ring_init(rings[i].r(), sizeof(rings[i].buf), 0), 0);
		slots[i] = rings[i].r();
	}
	ASSERT_EQ(syscall(SYS_arch_prctl, ARCH_GET_GS, &old_gs), 0);
	et_fentry_ring = nullptr;
	const int calls[2] = { 3, 5 };
	for (int cpu = 0; cpu < 2; cpu++) {
		uintptr_t base = (uintptr_t)&slots[cpu] - (uintptr_t)&et_fentry_ring;
		ASSERT_EQ(syscall(SYS_arch_prctl, ARCH_SET_GS, base), 0);
		for (int i = 0; i < calls[cpu]; i++)
			call_path((uint64_t)(uintptr_t)et_fentry_percpu, kOuterParent + cpu, false);
	}
	ASSERT_EQ(syscall(SYS_arch_prctl, ARCH_SET_GS, old_gs), 0);
	uint64_t ret = call_path(0, 0, false);
	for (int cpu = 0; cpu < 2; cpu++) {
		struct et_ring *r = rings[cpu].r();
		ASSERT_EQ(r->head, (uint64_t)calls[cpu]) << "CPU " << cpu;
		for (uint64_t j = 0; j < r->head; j++) {
			struct et_ring_record rec;
			ASSERT_EQ(et_ring_read(r, j, &rec), 1);
			EXPECT_EQ(rec.parent_ip, kOuterParent + cpu);
			EXPECT_EQ(rec.ip, ret - 5);
			EXPECT_EQ(rec.flags, ET_REC_SRC_GUEST);
		}
	}
	EXPECT_EQ(et_fentry_ring, nullptr);
}
