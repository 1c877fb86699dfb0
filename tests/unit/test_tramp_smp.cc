// SPDX-License-Identifier: MIT
// The x86-64 trampoline's several-vCPU entry, run on the host: Linux sets
// each host CPU's TSC_AUX to its number, as the VMM sets each vCPU's to
// its index, so a call made on CPU c must land in batch c, found by the
// rdtscp alone. (Nested kvm-pvm guests have no RDTSCP: the boot tests
// cannot run this path here.) The template runs in place, in memory below
// 2 GiB where its 32-bit displacements reach, with guest-physical =
// virtual = host addresses.
#include <gtest/gtest.h>

#include <sched.h>
#include <sys/mman.h>
#include <x86intrin.h>

#include <cpuid.h>
#include <cstring>
#include <vector>

#include "tests/shim/earlytrace_shim.h"
#include "trampolines/placement.h"
#include "trampolines/templates.h"

namespace {

constexpr uint64_t kRegionBytes = 256 << 10;

bool host_has_rdtscp()
{
	unsigned a, b, c, d;
	return __get_cpuid(0x80000001, &a, &b, &c, &d) && (d >> 27 & 1);
}

// A call from a fake site: the trampoline gets [rsp] = the return address
// and [rsp + 8] = a parent, below our red zone (it pushes on our stack).
uint64_t call_trampoline(uint64_t entry)
{
	uint64_t ret;

	asm volatile("sub $128, %%rsp\n\t"
		     "push $0x1234\n\t"
		     "call *%1\n\t"
		     "1: lea 1b(%%rip), %0\n\t"
		     "add $136, %%rsp"
		     : "=r"(ret)
		     : "r"(entry)
		     : "memory", "cc");
	return ret;
}

bool pin_to(unsigned cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) == 0;
}

} // namespace

TEST(TrampolineSmp, EachCpusCallLandsInItsOwnBatch)
{
	cpu_set_t allowed;
	ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
	if (!host_has_rdtscp())
		GTEST_SKIP() << "this host has no RDTSCP";
	auto *mem = static_cast<uint8_t *>(mmap(nullptr, kRegionBytes, PROT_READ | PROT_WRITE | PROT_EXEC,
					       MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0));
	ASSERT_NE(mem, MAP_FAILED);
	struct guest_mem gm = {};
	gm.host = mem;
	gm.size = kRegionBytes;
	gm.nr_regions = 1;
	gm.regions[0] = { (uint64_t)(uintptr_t)mem, kRegionBytes, mem };
	struct tramp_region region = {};
	region.vaddr = region.paddr = (uint64_t)(uintptr_t)mem;
	region.size = kRegionBytes;
	strcpy(region.desc, "the test's region");

	// As many batches as CPU numbers up to the highest we may run on.
	unsigned nr = 0;
	for (unsigned c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &allowed))
			nr = c + 1;
	ASSERT_GE(nr, 1u);
	struct trampolines tr;
	ASSERT_EQ(trampolines_plan_batches(&tr, &region, 64, 0, 100, nr), 0) << et_last_error();
	ASSERT_EQ(trampolines_install(&tr, &gm), 0) << et_last_error();
	std::vector<struct trampolines> views(nr);
	views[0] = tr;
	for (unsigned i = 1; i < nr; i++)
		ASSERT_EQ(trampolines_batch_view(&tr, i, &views[i], &gm), 0) << et_last_error();
	uint64_t entry = trampolines_record_entry(&tr);
	EXPECT_EQ(entry, region.vaddr + tr.tpl->smp_record_entry);

	// CPU c makes c + 1 calls; rdtscp says which batch they must be in.
	std::vector<long> want(nr);
	std::vector<uint64_t> ret_of(nr);
	bool ran = false;
	for (unsigned c = 0; c < nr; c++) {
		if (!CPU_ISSET(c, &allowed) || !pin_to(c))
			continue;
		unsigned aux;
		__rdtscp(&aux);
		if (aux >= nr || aux != (unsigned)sched_getcpu())
			continue; // TSC_AUX is not the CPU number here (NUMA node bits)
		for (unsigned k = 0; k <= c; k++)
			ret_of[aux] = call_trampoline(entry);
		want[aux] += c + 1;
		ran = true;
	}
	sched_setaffinity(0, sizeof(allowed), &allowed);
	if (!ran)
		GTEST_SKIP() << "no CPU here has its number in TSC_AUX";
	// Batch i holds exactly the calls made on CPU i, each one complete.
	for (unsigned i = 0; i < nr; i++) {
		std::vector<struct et_ring_record> recs;
		EXPECT_EQ(trampolines_batch_take(
				  &views[i], &gm,
				  [](void *ctx, const struct et_ring_record *r) {
					  static_cast<std::vector<struct et_ring_record> *>(ctx)->push_back(*r);
				  },
				  &recs),
			  want[i])
			<< "batch " << i;
		for (const auto &r : recs) {
			EXPECT_EQ(r.ip, ret_of[i]) << "batch " << i;
			EXPECT_EQ(r.parent_ip, 0x1234u);
			EXPECT_NE(r.tsc, 0u);
		}
	}
	munmap(mem, kRegionBytes);
	trampolines_free(&tr);
}
