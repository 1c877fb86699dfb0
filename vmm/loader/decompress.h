/* SPDX-License-Identifier: MIT */
/*
 * Decompressing a kernel payload with the system's compression libraries.
 * The format is recognized by its magic bytes, as the kernel's own
 * decompressor does; the expected size comes from the caller (bzImages end
 * their payload with it).
 */
#ifndef VMM_LOADER_DECOMPRESS_H
#define VMM_LOADER_DECOMPRESS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum compression {
	COMPRESSION_NONE,
	COMPRESSION_GZIP,
	COMPRESSION_XZ,
	COMPRESSION_LZMA,
	COMPRESSION_LZ4, /* the LZ4 "legacy" frame the kernel build uses */
	COMPRESSION_ZSTD,
	COMPRESSION_BZIP2, /* recognized, not supported */
	COMPRESSION_LZO,   /* recognized, not supported */
	COMPRESSION_UNKNOWN,
};

enum compression compression_detect(const uint8_t *data, size_t size);
const char *compression_name(enum compression c);

/*
 * Decompresses `size` bytes into a new malloc'ed buffer of exactly
 * `expected_size` bytes. Fails (-1, one-line error) on unsupported or
 * unknown formats, corrupt input, or output that is not exactly the
 * expected size.
 */
int decompress(const uint8_t *data, size_t size, size_t expected_size, uint8_t **out);

#ifdef __cplusplus
}
#endif

#endif /* VMM_LOADER_DECOMPRESS_H */
