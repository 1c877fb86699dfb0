/* SPDX-License-Identifier: MIT */
/*
 * One dispatch mechanism for port I/O and MMIO exits (kvmtool's "iotrap"
 * idea): devices register a handler for an address range on a bus; the run
 * loop looks the range up and calls the handler with the offset into it.
 * Ranges on one bus may not overlap.
 */
#ifndef VMM_KVM_IOBUS_H
#define VMM_KVM_IOBUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum iobus_space { IOBUS_PIO, IOBUS_MMIO, IOBUS_NR_SPACES };

/*
 * Called for one access of `len` bytes (1, 2, 4 or 8) at `offset` into the
 * registered range. On a read the handler fills data[0..len); on a write it
 * consumes it. Bytes are in guest (little-endian) order.
 */
typedef void (*iobus_handler_fn)(void *opaque, uint64_t offset, uint8_t *data,
				 uint32_t len, bool is_write);

struct iobus_range {
	uint64_t base;
	uint64_t len;
	iobus_handler_fn fn;
	void *opaque;
	const char *name;
};

struct iobus {
	/* Sorted by base, per space, so lookups are a binary search. */
	struct iobus_range *ranges[IOBUS_NR_SPACES];
	unsigned nr[IOBUS_NR_SPACES];
	size_t cap[IOBUS_NR_SPACES];
	/* Accesses nobody claimed; reads of those return all-ones, as on a PC
	 * with nothing decoding the address. */
	uint64_t unclaimed[IOBUS_NR_SPACES];
};

void iobus_init(struct iobus *bus);
void iobus_free(struct iobus *bus);

/* 0, or -1 with et_last_error() naming the overlapping device. */
int iobus_register(struct iobus *bus, enum iobus_space space, uint64_t base,
		   uint64_t len, iobus_handler_fn fn, void *opaque, const char *name);

const struct iobus_range *iobus_find(const struct iobus *bus, enum iobus_space space,
				     uint64_t addr);

/* Dispatches one access; returns true if a device claimed it. */
bool iobus_access(struct iobus *bus, enum iobus_space space, uint64_t addr,
		  uint8_t *data, uint32_t len, bool is_write);

#ifdef __cplusplus
}
#endif

#endif /* VMM_KVM_IOBUS_H */
