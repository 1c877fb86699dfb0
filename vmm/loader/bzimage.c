/* SPDX-License-Identifier: MIT */
#include "vmm/loader/bzimage.h"

#include <string.h>

#include "vmm/loader/decompress.h"
#include "vmm/util/error.h"

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

bool bzimage_detect(const uint8_t *data, size_t size)
{
	return size >= BZ_OFF_HEADER + 4 && le16(data + BZ_OFF_BOOT_FLAG) == BZ_BOOT_FLAG &&
	       le32(data + BZ_OFF_HEADER) == BZ_HEADER_MAGIC;
}

int bzimage_parse(const uint8_t *data, size_t size, struct bzimage_info *info)
{
	size_t header_end, pm_start;
	unsigned setup_sects;

	memset(info, 0, sizeof(*info));
	if (!bzimage_detect(data, size))
		return et_error("not a bzImage (no boot flag and \"HdrS\" setup header)");
	if (size < BZ_OFF_INIT_SIZE + 4)
		return et_error("truncated bzImage: %zu bytes cannot hold the setup header", size);

	info->version = le16(data + BZ_OFF_VERSION);
	if (info->version < BZ_MIN_VERSION)
		return et_error("bzImage boot protocol %u.%02u is too old (need 2.08 or later)",
				info->version >> 8, info->version & 0xff);
	info->loadflags = data[BZ_OFF_LOADFLAGS];
	if (!(info->loadflags & BZ_LOADFLAGS_LOADED_HIGH))
		return et_error("bzImage is a zImage (not loaded high); not supported");
	info->xloadflags = info->version >= 0x020c ? le16(data + BZ_OFF_XLOADFLAGS) : 0;
	info->cmdline_size = info->version >= 0x0206 ? le32(data + BZ_OFF_CMDLINE_SIZE) : 255;
	info->initrd_addr_max = le32(data + BZ_OFF_INITRD_ADDR_MAX);

	/* The header ends at 0x202 + the jump's displacement byte. */
	header_end = 0x202 + data[BZ_OFF_JUMP + 1];
	if (header_end > 0x290 || header_end < BZ_OFF_INIT_SIZE + 4)
		header_end = 0x290 < size ? 0x290 : BZ_OFF_INIT_SIZE + 4;
	if (header_end > size) /* found by fuzzing: read past the end */
		return et_error("truncated bzImage: %zu bytes cannot hold the %zu-byte setup header",
				size, header_end - BZ_SETUP_HEADER_OFFSET);
	info->setup_header_len = header_end - BZ_SETUP_HEADER_OFFSET;
	memcpy(info->setup_header, data + BZ_SETUP_HEADER_OFFSET, info->setup_header_len);

	setup_sects = data[BZ_OFF_SETUP_SECTS] ? data[BZ_OFF_SETUP_SECTS] : 4;
	info->setup_size = ((size_t)setup_sects + 1) * 512;
	if (info->setup_size >= size)
		return et_error("truncated bzImage: setup claims %zu of %zu bytes", info->setup_size,
				size);
	pm_start = info->setup_size;
	info->payload_offset = pm_start + le32(data + BZ_OFF_PAYLOAD_OFFSET);
	info->payload_length = le32(data + BZ_OFF_PAYLOAD_LENGTH);
	if (info->payload_length < 8 || info->payload_offset > size ||
	    info->payload_length > size - info->payload_offset)
		return et_error("truncated or corrupt bzImage: payload 0x%zx+0x%zx lies outside "
				"the %zu-byte file", info->payload_offset, info->payload_length, size);
	/* The build appends the decompressed size to the compressed data. */
	info->kernel_size = le32(data + info->payload_offset + info->payload_length - 4);
	if (info->kernel_size == 0 || info->kernel_size > BZ_MAX_KERNEL_SIZE)
		return et_error("corrupt bzImage: payload announces a %zu-byte kernel",
				info->kernel_size);
	return 0;
}

int bzimage_extract(const uint8_t *data, const struct bzimage_info *info, uint8_t **kernel,
		    size_t *kernel_size)
{
	if (decompress(data + info->payload_offset, info->payload_length - 4, info->kernel_size,
		       kernel))
		return et_error_prefix("bzImage payload");
	*kernel_size = info->kernel_size;
	return 0;
}
