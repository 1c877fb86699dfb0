/* SPDX-License-Identifier: MIT */
#include "vmm/trace/event_text.h"

#include <inttypes.h>
#include <stdio.h>

#include "arch/arch.h"

const char *event_exit_kind_name(unsigned kind)
{
	switch (kind) {
	case ET_REC_PIO:
		return "pio";
	case ET_REC_MMIO:
		return "mmio";
	case ET_REC_MSR:
		return "msr";
	case ET_REC_HYPERCALL:
		return "hypercall";
	case ET_REC_HLT:
		return "hlt";
	case ET_REC_SHUTDOWN:
		return "shutdown";
	}
	return "exit";
}

static const char *hypercall_name(uint64_t nr)
{
	switch (nr) {
	case ET_HC_HANDOFF:
		return " (handoff)";
	case ET_HC_MARK:
		return " (mark)";
	}
	return "";
}

const char *event_exit_text(const struct et_ring_record *e, char *buf, size_t len)
{
	struct et_exit x = et_exit_unpack(e);
	const char *dir = x.write ? "write" : "read";
	const char *msr;

	switch (x.kind) {
	case ET_REC_PIO:
		snprintf(buf, len, "pio %s port 0x%" PRIx64 " size %u value 0x%" PRIx64 "%s", dir,
			 x.addr, x.size, x.value, x.unclaimed ? " (unclaimed)" : "");
		break;
	case ET_REC_MMIO:
		snprintf(buf, len, "mmio %s addr 0x%" PRIx64 " size %u value 0x%" PRIx64 "%s", dir,
			 x.addr, x.size, x.value, x.unclaimed ? " (unclaimed)" : "");
		break;
	case ET_REC_MSR:
		msr = arch_msr_name((uint32_t)x.addr);
		snprintf(buf, len, "msr %s 0x%" PRIx64 "%s%s%s value 0x%" PRIx64 "%s", dir, x.addr,
			 msr ? " (" : "", msr ? msr : "", msr ? ")" : "", x.value,
			 x.unclaimed ? " (#GP)" : "");
		break;
	case ET_REC_HYPERCALL:
		snprintf(buf, len, "hypercall %" PRIu64 "%s result %" PRId64, x.addr,
			 hypercall_name(x.addr), (int64_t)x.value);
		break;
	case ET_REC_HLT:
		snprintf(buf, len, "hlt");
		break;
	case ET_REC_SHUTDOWN:
		snprintf(buf, len, "shutdown (triple fault)");
		break;
	default:
		snprintf(buf, len, "exit of unknown kind %u", x.kind);
		break;
	}
	return buf;
}
