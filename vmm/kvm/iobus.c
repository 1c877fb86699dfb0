/* SPDX-License-Identifier: MIT */
#include "vmm/kvm/iobus.h"

#include <stdlib.h>
#include <string.h>

#include "vmm/util/error.h"
#include "vmm/util/grow.h"
#include "vmm/util/sorted.h"

static const char *const space_names[IOBUS_NR_SPACES] = { "port", "MMIO" };

void iobus_init(struct iobus *bus)
{
	memset(bus, 0, sizeof(*bus));
}

void iobus_free(struct iobus *bus)
{
	for (int s = 0; s < IOBUS_NR_SPACES; s++)
		free(bus->ranges[s]);
	memset(bus, 0, sizeof(*bus));
}

/* Ranges are sorted by base: the index of the first one above addr. */
static bool starts_at_or_below(const void *range, const void *addr)
{
	return ((const struct iobus_range *)range)->base <= *(const uint64_t *)addr;
}

static unsigned upper_bound(const struct iobus_range *r, unsigned n, uint64_t addr)
{
	return (unsigned)sorted_partition_point(r, n, sizeof(*r), &addr, starts_at_or_below);
}

int iobus_register(struct iobus *bus, enum iobus_space space, uint64_t base,
		   uint64_t len, iobus_handler_fn fn, void *opaque, const char *name)
{
	struct iobus_range *r = bus->ranges[space];
	unsigned n = bus->nr[space];
	unsigned pos;

	if (len == 0 || base + len < base)
		return et_error("%s: bad %s range 0x%llx+0x%llx", name, space_names[space],
				(unsigned long long)base, (unsigned long long)len);
	pos = upper_bound(r, n, base);
	if (pos > 0 && r[pos - 1].base + r[pos - 1].len > base)
		return et_error("%s: %s range 0x%llx+0x%llx overlaps %s", name,
				space_names[space], (unsigned long long)base,
				(unsigned long long)len, r[pos - 1].name);
	if (pos < n && base + len > r[pos].base)
		return et_error("%s: %s range 0x%llx+0x%llx overlaps %s", name,
				space_names[space], (unsigned long long)base,
				(unsigned long long)len, r[pos].name);

	if (n == bus->cap[space]) {
		struct iobus_range *grown = array_grow(r, &bus->cap[space], sizeof(*r), 8);

		if (!grown)
			return et_error("out of memory registering %s", name);
		bus->ranges[space] = r = grown;
	}
	memmove(&r[pos + 1], &r[pos], (n - pos) * sizeof(*r));
	r[pos] = (struct iobus_range){ base, len, fn, opaque, name };
	bus->nr[space] = n + 1;
	return 0;
}

const struct iobus_range *iobus_find(const struct iobus *bus, enum iobus_space space,
				     uint64_t addr)
{
	const struct iobus_range *r = bus->ranges[space];
	unsigned pos = upper_bound(r, bus->nr[space], addr);

	if (pos == 0)
		return NULL;
	r = &r[pos - 1];
	return addr - r->base < r->len ? r : NULL;
}

bool iobus_access(struct iobus *bus, enum iobus_space space, uint64_t addr,
		  uint8_t *data, uint32_t len, bool is_write)
{
	const struct iobus_range *r = iobus_find(bus, space, addr);

	if (!r) {
		bus->unclaimed[space]++;
		if (!is_write)
			memset(data, 0xff, len);
		return false;
	}
	r->fn(r->opaque, addr - r->base, data, len, is_write);
	return true;
}
