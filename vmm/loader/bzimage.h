/* SPDX-License-Identifier: MIT */
/*
 * bzImage: the x86 Linux boot image. A real-mode setup part whose "setup
 * header" describes the image, then the protected-mode part holding the
 * kernel's own decompressor and, inside it, the compressed vmlinux ELF (the
 * "payload", protocol 2.08+). earlytrace boots that ELF directly, so the
 * guest's first instruction is the kernel's, at addresses that match its
 * symbols (no decompressor, no KASLR).
 */
#ifndef VMM_LOADER_BZIMAGE_H
#define VMM_LOADER_BZIMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Offsets in the image (and in struct boot_params) per Documentation/x86/boot.rst. */
#define BZ_SETUP_HEADER_OFFSET 0x1f1
#define BZ_OFF_SETUP_SECTS 0x1f1
#define BZ_OFF_BOOT_FLAG 0x1fe
#define BZ_OFF_JUMP 0x200
#define BZ_OFF_HEADER 0x202
#define BZ_OFF_VERSION 0x206
#define BZ_OFF_LOADFLAGS 0x211
#define BZ_OFF_INITRD_ADDR_MAX 0x22c
#define BZ_OFF_KERNEL_ALIGNMENT 0x230
#define BZ_OFF_XLOADFLAGS 0x236
#define BZ_OFF_CMDLINE_SIZE 0x238
#define BZ_OFF_PAYLOAD_OFFSET 0x248
#define BZ_OFF_PAYLOAD_LENGTH 0x24c
#define BZ_OFF_PREF_ADDRESS 0x258
#define BZ_OFF_INIT_SIZE 0x260

#define BZ_BOOT_FLAG 0xaa55
#define BZ_HEADER_MAGIC 0x53726448u /* "HdrS" */
#define BZ_MIN_VERSION 0x0208	    /* first protocol with payload fields */
#define BZ_LOADFLAGS_LOADED_HIGH 0x01
#define BZ_XLF_KERNEL_64 0x01
/* No kernel decompresses to more than this; a larger claim is corruption. */
#define BZ_MAX_KERNEL_SIZE (1ull << 30)

struct bzimage_info {
	uint16_t version;	  /* boot protocol, e.g. 0x020f */
	uint8_t loadflags;
	uint16_t xloadflags;
	uint32_t cmdline_size;	  /* longest command line the kernel takes */
	uint32_t initrd_addr_max; /* highest address an initrd may end at */
	size_t setup_size;	  /* bytes of real-mode setup (setup_sects+1)*512 */
	size_t payload_offset;	  /* in the file */
	size_t payload_length;
	size_t kernel_size;	  /* decompressed size, from the payload's tail */
	/* The setup header as found in the image, [0x1f1, header end). */
	uint8_t setup_header[0x290 - BZ_SETUP_HEADER_OFFSET];
	size_t setup_header_len;
};

/* True if the bytes start like a bzImage (boot flag and "HdrS"). */
bool bzimage_detect(const uint8_t *data, size_t size);

/* Validates the setup header and locates the payload. */
int bzimage_parse(const uint8_t *data, size_t size, struct bzimage_info *info);

/* Decompresses the payload into a malloc'ed buffer (the vmlinux ELF). */
int bzimage_extract(const uint8_t *data, const struct bzimage_info *info, uint8_t **kernel,
		    size_t *kernel_size);

#ifdef __cplusplus
}
#endif

#endif /* VMM_LOADER_BZIMAGE_H */
