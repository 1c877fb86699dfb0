/* SPDX-License-Identifier: MIT */
#include "vmm/loader/decompress.h"

#include <lz4.h>
#include <stdbool.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "vmm/util/error.h"

#define LZ4_LEGACY_MAGIC 0x184c2102u
/* The legacy frame cuts the input into blocks of at most 8 MiB output. */
#define LZ4_LEGACY_BLOCK_MAX (8u << 20)
/* liblzma allocates the dictionary a header asks for, up to 4 GiB; kernels
 * use 32 MiB (xz) or 64 MiB (lzma -9), so a larger claim is refused rather
 * than allocated (fuzzing found 1.5 GiB asked for by a 2 KB image). */
#define XZ_MEMLIMIT (256ull << 20)

static const struct {
	enum compression c;
	const char *name;
	uint8_t magic[6];
	size_t magic_len;
} formats[] = {
	{ COMPRESSION_GZIP, "gzip", { 0x1f, 0x8b }, 2 },
	{ COMPRESSION_XZ, "xz", { 0xfd, '7', 'z', 'X', 'Z', 0x00 }, 6 },
	{ COMPRESSION_LZMA, "lzma", { 0x5d, 0x00, 0x00 }, 3 },
	{ COMPRESSION_LZ4, "lz4", { 0x02, 0x21, 0x4c, 0x18 }, 4 },
	{ COMPRESSION_ZSTD, "zstd", { 0x28, 0xb5, 0x2f, 0xfd }, 4 },
	{ COMPRESSION_BZIP2, "bzip2", { 'B', 'Z', 'h' }, 3 },
	{ COMPRESSION_LZO, "lzo", { 0x89, 'L', 'Z', 'O', 0x00 }, 5 },
};

enum compression compression_detect(const uint8_t *data, size_t size)
{
	if (size >= 4 && !memcmp(data, "\177ELF", 4))
		return COMPRESSION_NONE;
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (size >= formats[i].magic_len &&
		    !memcmp(data, formats[i].magic, formats[i].magic_len))
			return formats[i].c;
	return COMPRESSION_UNKNOWN;
}

const char *compression_name(enum compression c)
{
	if (c == COMPRESSION_NONE)
		return "none";
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (formats[i].c == c)
			return formats[i].name;
	return "unknown";
}

static int gunzip(const uint8_t *in, size_t size, uint8_t *out, size_t out_size)
{
	z_stream zs;
	int ret;

	memset(&zs, 0, sizeof(zs));
	/* 16 + MAX_WBITS: expect a gzip header and trailer. */
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
		return et_error("gzip: cannot initialize zlib");
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)(size > UINT32_MAX ? UINT32_MAX : size);
	zs.next_out = out;
	zs.avail_out = (uInt)out_size;
	ret = inflate(&zs, Z_FINISH);
	inflateEnd(&zs);
	if (ret != Z_STREAM_END)
		return et_error("gzip: corrupt or truncated data (%s)",
				ret == Z_BUF_ERROR ? "output larger than announced or input cut short"
						   : zs.msg ? zs.msg : "inflate failed");
	if (zs.total_out != out_size)
		return et_error("gzip: %lu bytes, but the image announces %zu", zs.total_out,
				out_size);
	return 0;
}

static int unxz(const uint8_t *in, size_t size, uint8_t *out, size_t out_size, bool alone)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	const char *name = alone ? "lzma" : "xz";
	lzma_ret ret;

	ret = alone ? lzma_alone_decoder(&strm, XZ_MEMLIMIT)
		    : lzma_stream_decoder(&strm, XZ_MEMLIMIT, 0);
	if (ret != LZMA_OK)
		return et_error("%s: cannot initialize liblzma", name);
	strm.next_in = in;
	strm.avail_in = size;
	strm.next_out = out;
	strm.avail_out = out_size;
	ret = lzma_code(&strm, LZMA_FINISH);
	lzma_end(&strm);
	if (ret == LZMA_MEMLIMIT_ERROR)
		return et_error("%s: the payload needs more than %llu MiB to decompress (its "
				"dictionary is larger than any kernel's)", name, XZ_MEMLIMIT >> 20);
	/* Only a complete stream counts: stopping because the output is full
	 * would accept a kernel larger than announced, cut short. */
	if (ret != LZMA_STREAM_END)
		return et_error("%s: corrupt or truncated data (liblzma error %d)", name, (int)ret);
	if (strm.total_out != out_size)
		return et_error("%s: %llu bytes, but the image announces %zu", name,
				(unsigned long long)strm.total_out, out_size);
	return 0;
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The legacy frame: magic, then blocks of (u32 compressed size, data); a
 * repeated magic starts another frame. The kernel appends its own u32
 * size after the last block, so stop once the output is complete. */
static int unlz4_legacy(const uint8_t *in, size_t size, uint8_t *out, size_t out_size)
{
	size_t pos = 4, done = 0;

	while (done < out_size) {
		uint32_t block;
		int n;

		if (size - pos < 4)
			return et_error("lz4: truncated: %zu of %zu bytes decompressed", done,
					out_size);
		block = get_le32(in + pos);
		pos += 4;
		if (block == LZ4_LEGACY_MAGIC)
			continue;
		if (block == 0 || block > size - pos || block > (uint32_t)LZ4_compressBound(LZ4_LEGACY_BLOCK_MAX))
			return et_error("lz4: corrupt block size %u at offset %zu", block, pos - 4);
		n = LZ4_decompress_safe((const char *)in + pos, (char *)out + done, (int)block,
					(int)(out_size - done < LZ4_LEGACY_BLOCK_MAX
						      ? out_size - done
						      : LZ4_LEGACY_BLOCK_MAX));
		if (n < 0)
			return et_error("lz4: corrupt block at offset %zu", pos - 4);
		pos += block;
		done += (size_t)n;
	}
	return 0;
}

static int unzstd(const uint8_t *in, size_t size, uint8_t *out, size_t out_size)
{
	ZSTD_DCtx *dctx = ZSTD_createDCtx();
	ZSTD_inBuffer input = { in, size, 0 };
	ZSTD_outBuffer output = { out, out_size, 0 };
	size_t ret;

	if (!dctx)
		return et_error("zstd: cannot initialize libzstd");
	/* Streaming, one frame: the kernel's trailing size is not a frame. */
	do {
		ret = ZSTD_decompressStream(dctx, &output, &input);
	} while (!ZSTD_isError(ret) && ret != 0 && input.pos < input.size &&
		 output.pos < output.size);
	ZSTD_freeDCtx(dctx);
	if (ZSTD_isError(ret))
		return et_error("zstd: corrupt data (%s)", ZSTD_getErrorName(ret));
	if (ret != 0 || output.pos != out_size)
		return et_error("zstd: %zu bytes, but the image announces %zu", output.pos,
				out_size);
	return 0;
}

int decompress(const uint8_t *data, size_t size, size_t expected_size, uint8_t **out)
{
	enum compression c = compression_detect(data, size);
	uint8_t *buf;
	int ret;

	switch (c) {
	case COMPRESSION_UNKNOWN:
		return et_error("unknown compression (magic %02x %02x %02x %02x)",
				size > 0 ? data[0] : 0, size > 1 ? data[1] : 0,
				size > 2 ? data[2] : 0, size > 3 ? data[3] : 0);
	case COMPRESSION_BZIP2:
	case COMPRESSION_LZO:
		return et_error("%s-compressed kernels are not supported (use gzip, xz, lzma, "
				"lz4 or zstd, or pass the vmlinux ELF)", compression_name(c));
	default:
		break;
	}
	if (expected_size == 0)
		return et_error("%s: the image announces an empty kernel", compression_name(c));
	buf = malloc(expected_size);
	if (!buf)
		return et_error("out of memory for a %zu-byte kernel", expected_size);
	switch (c) {
	case COMPRESSION_NONE:
		ret = size >= expected_size ? (memcpy(buf, data, expected_size), 0)
					    : et_error("payload shorter than announced");
		break;
	case COMPRESSION_GZIP:
		ret = gunzip(data, size, buf, expected_size);
		break;
	case COMPRESSION_XZ:
		ret = unxz(data, size, buf, expected_size, false);
		break;
	case COMPRESSION_LZMA:
		ret = unxz(data, size, buf, expected_size, true);
		break;
	case COMPRESSION_LZ4:
		ret = unlz4_legacy(data, size, buf, expected_size);
		break;
	default:
		ret = unzstd(data, size, buf, expected_size);
		break;
	}
	if (ret) {
		free(buf);
		return -1;
	}
	*out = buf;
	return 0;
}
