/* SPDX-License-Identifier: MIT */
/*
 * smp=ring: every CPU records its own calls into its own guestlib ring
 * (et_trace_start_percpu). Each CPU's per-CPU base is its GS base, set so
 * that GS base + &et_fentry_ring is its slot in cpu_ring_slot[] (the
 * Linux per-CPU scheme, and what et_fentry_percpu reads): the BSP sets
 * its own here, each AP in smp_boot.S before its first (traced) call.
 */
#include "smp_ring.h"

#include <earlytrace/guestlib.h>

#include "arch/x86/msr.h"
#include "layout.h"
#include "print.h"
#include "smp_layout.h"

/* Per CPU: the header and 4096 records (a power of two), room for CPU 0's
 * report lines after its tree as well. */
#define RING_RECORDS 4096
#define RING_BYTES (sizeof(struct et_ring) + RING_RECORDS * sizeof(struct et_ring_record))

static uint8_t rings[SMP_MAX_CPUS][RING_BYTES] __attribute__((aligned(64)));
/* CPU i's copy of et_fentry_ring. */
static struct et_ring *volatile cpu_ring_slot[SMP_MAX_CPUS];
static uint64_t gs_base[SMP_MAX_CPUS];
static unsigned nr_rings;

static void print_kv(const char *key, uint64_t v)
{
	print_str(key);
	print_dec((uint32_t)v);
}

int smp_ring_start(unsigned nr_cpus, unsigned self)
{
	void *bufs[SMP_MAX_CPUS];
	struct et_trace_info info;
	int ret;

	for (unsigned i = 0; i < nr_cpus; i++) {
		bufs[i] = rings[i];
		cpu_ring_slot[i] = (struct et_ring *)rings[i];
		/* Modulo 2^64: base + &et_fentry_ring = &cpu_ring_slot[i]. */
		gs_base[i] = (uint64_t)(uintptr_t)&cpu_ring_slot[i] -
			     (uint64_t)(uintptr_t)&et_fentry_ring;
	}
	__asm__ volatile("wrmsr"
			 :
			 : "c"(X86_MSR_GS_BASE), "a"((uint32_t)gs_base[self]),
			   "d"((uint32_t)(gs_base[self] >> 32))
			 : "memory");
	et_guest_init(-(int64_t)KERNEL_VIRT_BASE);
	ret = et_trace_start_percpu(bufs, nr_cpus, RING_BYTES, 0, &info);
	print_str("smp ring: handoff result=");
	if (info.handoff_result < 0) {
		print_str("-");
		print_dec((uint32_t)-info.handoff_result);
	} else {
		print_dec((uint32_t)info.handoff_result);
	}
	print_kv(" cpus=", nr_cpus);
	print_kv(" vmm_events=", ((struct et_ring *)rings[0])->vmm_events);
	print_kv(" patched=", info.patched);
	print_line("");
	if (ret)
		return ret;
	nr_rings = nr_cpus;
	return 0;
}

uint64_t smp_ring_gs_base(unsigned cpu)
{
	return nr_rings && cpu < nr_rings ? gs_base[cpu] : 0;
}

void smp_ring_stop(uintptr_t root, uintptr_t leaf)
{
	if (!nr_rings)
		return;
	et_trace_stop(0);
	for (unsigned i = 0; i < nr_rings; i++) {
		const struct et_ring *r = (const struct et_ring *)rings[i];
		uint64_t head = r->head, first = head > r->capacity ? head - r->capacity : 0;
		uint32_t nroot = 0, nleaf = 0, incomplete = 0;

		for (uint64_t j = first; j < head; j++) {
			struct et_ring_record rec;

			if (!et_ring_read(r, j, &rec)) {
				incomplete++;
				continue;
			}
			if ((rec.flags & ET_REC_SRC_MASK) != ET_REC_SRC_GUEST)
				continue;
			nroot += rec.ip == root;
			nleaf += rec.ip == leaf;
		}
		print_kv("smp ring cpu=", i);
		print_kv(" root=", nroot);
		print_kv(" leaf=", nleaf);
		print_kv(" lost=", r->lost);
		print_kv(" incomplete=", incomplete);
		print_line("");
	}
}
