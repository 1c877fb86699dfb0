// SPDX-License-Identifier: MIT
// bzImage setup-header parsing and payload decompression, on images built
// here with each compression library, and on corrupt variants of them.
#include <gtest/gtest.h>

#include <lz4.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/fixtures.h"
#include "tests/shim/earlytrace_shim.h"

namespace {

using Bytes = std::vector<uint8_t>;

// Something kernel-like: compressible but not trivial.
Bytes sample_kernel(size_t size)
{
	Bytes b(size);
	uint32_t x = 12345;
	for (size_t i = 0; i < size; i++) {
		x = x * 1103515245 + 12345;
		b[i] = (i % 64 < 48) ? (uint8_t)(i / 64) : (uint8_t)(x >> 24);
	}
	memcpy(b.data(), "\177ELF", 4);
	return b;
}

Bytes xz(const Bytes &in)
{
	Bytes out(in.size() + 4096);
	size_t pos = 0;
	EXPECT_EQ(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC32, nullptr, in.data(), in.size(), out.data(),
					  &pos, out.size()),
		  LZMA_OK);
	out.resize(pos);
	return out;
}

Bytes lzma_alone(const Bytes &in)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	lzma_options_lzma opt;
	lzma_lzma_preset(&opt, 6);
	EXPECT_EQ(lzma_alone_encoder(&strm, &opt), LZMA_OK);
	Bytes out(in.size() + 4096);
	strm.next_in = in.data();
	strm.avail_in = in.size();
	strm.next_out = out.data();
	strm.avail_out = out.size();
	EXPECT_EQ(lzma_code(&strm, LZMA_FINISH), LZMA_STREAM_END);
	out.resize(strm.total_out);
	lzma_end(&strm);
	return out;
}

// The legacy frame the kernel build makes with `lz4 -l`: 8 MiB blocks.
Bytes lz4_legacy(const Bytes &in, size_t block = 8u << 20)
{
	Bytes out = { 0x02, 0x21, 0x4c, 0x18 };
	for (size_t pos = 0; pos < in.size(); pos += block) {
		int n = (int)std::min(block, in.size() - pos);
		Bytes tmp(LZ4_compressBound(n));
		int c = LZ4_compress_default(reinterpret_cast<const char *>(in.data() + pos),
					     reinterpret_cast<char *>(tmp.data()), n, (int)tmp.size());
		EXPECT_GT(c, 0);
		for (int i = 0; i < 4; i++)
			out.push_back((uint8_t)(c >> (8 * i)));
		out.insert(out.end(), tmp.begin(), tmp.begin() + c);
	}
	return out;
}

// With a content checksum, as the zstd tool writes by default and so as
// the kernel build's payloads have: corruption is then always detected.
Bytes zstd(const Bytes &in)
{
	Bytes out(ZSTD_compressBound(in.size()));
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
	size_t n = ZSTD_compress2(cctx, out.data(), out.size(), in.data(), in.size());
	ZSTD_freeCCtx(cctx);
	EXPECT_FALSE(ZSTD_isError(n));
	out.resize(n);
	return out;
}

std::string extract_error(const Bytes &img)
{
	struct bzimage_info info;
	uint8_t *out = nullptr;
	size_t size = 0;
	if (bzimage_parse(img.data(), img.size(), &info) == 0 &&
	    bzimage_extract(img.data(), &info, &out, &size) == 0) {
		free(out);
		return "";
	}
	return et_last_error();
}

} // namespace

struct Codec {
	const char *name;
	Bytes (*compress)(const Bytes &);
	enum compression kind;
};

class BzImageCodec : public ::testing::TestWithParam<Codec> {};

TEST_P(BzImageCodec, ExtractsTheExactKernel)
{
	const Codec &codec = GetParam();
	Bytes kernel = sample_kernel(300000);
	Bytes img = make_bzimage(codec.compress(kernel), kernel.size());

	ASSERT_TRUE(bzimage_detect(img.data(), img.size()));
	struct bzimage_info info;
	ASSERT_EQ(bzimage_parse(img.data(), img.size(), &info), 0) << et_last_error();
	EXPECT_EQ(info.version, 0x020f);
	EXPECT_EQ(info.setup_size, 2048u);
	EXPECT_EQ(info.payload_offset, 2048u + 0x300);
	EXPECT_EQ(info.kernel_size, kernel.size());
	EXPECT_EQ(info.cmdline_size, 2047u);
	EXPECT_EQ(info.setup_header_len, 0x26cu - 0x1f1);
	EXPECT_EQ(compression_detect(img.data() + info.payload_offset, info.payload_length), codec.kind);
	EXPECT_STREQ(compression_name(codec.kind), codec.name);

	uint8_t *out = nullptr;
	size_t size = 0;
	ASSERT_EQ(bzimage_extract(img.data(), &info, &out, &size), 0) << et_last_error();
	ASSERT_EQ(size, kernel.size());
	EXPECT_EQ(memcmp(out, kernel.data(), size), 0);
	free(out);
}

TEST_P(BzImageCodec, RefusesCorruptPayload)
{
	const Codec &codec = GetParam();
	Bytes kernel = sample_kernel(100000);
	Bytes compressed = codec.compress(kernel);

	// Cut short: the stream ends early.
	Bytes cut(compressed.begin(), compressed.begin() + compressed.size() / 2);
	std::string err = extract_error(make_bzimage(cut, kernel.size()));
	EXPECT_NE(err, "") << codec.name;
	EXPECT_NE(err.find(codec.name), std::string::npos) << err;

	// Announced size wrong: never a silent short or long kernel.
	EXPECT_NE(extract_error(make_bzimage(compressed, kernel.size() + 1)), "") << codec.name;
	EXPECT_NE(extract_error(make_bzimage(compressed, kernel.size() - 1)), "") << codec.name;

	// Garbage in the middle of the stream.
	Bytes bad = compressed;
	for (size_t i = bad.size() / 3; i < bad.size() / 3 + 64 && i < bad.size(); i++)
		bad[i] ^= 0x5a;
	EXPECT_NE(extract_error(make_bzimage(bad, kernel.size())), "") << codec.name;
}

INSTANTIATE_TEST_SUITE_P(Codecs, BzImageCodec,
			 ::testing::Values(Codec{ "gzip", gzip, COMPRESSION_GZIP },
					   Codec{ "xz", xz, COMPRESSION_XZ },
					   Codec{ "lzma", lzma_alone, COMPRESSION_LZMA },
					   Codec{ "lz4", [](const Bytes &b) { return lz4_legacy(b); },
						  COMPRESSION_LZ4 },
					   Codec{ "zstd", zstd, COMPRESSION_ZSTD }),
			 [](const ::testing::TestParamInfo<Codec> &p) { return std::string(p.param.name); });

TEST(BzImage, Lz4LegacyWithManyBlocks)
{
	Bytes kernel = sample_kernel(200000);
	Bytes img = make_bzimage(lz4_legacy(kernel, 65536), kernel.size());
	EXPECT_EQ(extract_error(img), "");
}

TEST(BzImage, RefusesBadHeaders)
{
	Bytes kernel = sample_kernel(4096);
	Bytes good = make_bzimage(gzip(kernel), kernel.size());
	struct bzimage_info info;

	Bytes b = good;
	b[BZ_OFF_BOOT_FLAG] = 0;
	EXPECT_FALSE(bzimage_detect(b.data(), b.size()));
	EXPECT_EQ(bzimage_parse(b.data(), b.size(), &info), -1);

	b = good;
	b[BZ_OFF_VERSION] = 0x04; // 2.04: no payload fields
	EXPECT_EQ(bzimage_parse(b.data(), b.size(), &info), -1);
	EXPECT_NE(std::string(et_last_error()).find("too old"), std::string::npos) << et_last_error();

	b = good;
	b[BZ_OFF_LOADFLAGS] = 0;
	EXPECT_EQ(bzimage_parse(b.data(), b.size(), &info), -1);
	EXPECT_NE(std::string(et_last_error()).find("zImage"), std::string::npos);

	b = good;
	put32(b, BZ_OFF_PAYLOAD_LENGTH, 0x7fffffff);
	EXPECT_EQ(bzimage_parse(b.data(), b.size(), &info), -1);
	EXPECT_NE(std::string(et_last_error()).find("payload"), std::string::npos);

	b = good;
	b[BZ_OFF_SETUP_SECTS] = 200; // setup larger than the file
	EXPECT_EQ(bzimage_parse(b.data(), b.size(), &info), -1);

	Bytes stub(good.begin(), good.begin() + 0x203); // not even the magic fits
	EXPECT_FALSE(bzimage_detect(stub.data(), stub.size()));
	EXPECT_EQ(bzimage_parse(stub.data(), stub.size(), &info), -1);
	for (size_t len : { (size_t)0x250, (size_t)1000, good.size() / 2 }) {
		Bytes cut(good.begin(), good.begin() + len);
		EXPECT_EQ(bzimage_parse(cut.data(), cut.size(), &info), -1) << len;
		EXPECT_NE(std::string(et_last_error()).find("truncated"), std::string::npos)
			<< len << ": " << et_last_error();
	}

	b = make_bzimage(gzip(kernel), 0);
	EXPECT_EQ(bzimage_parse(b.data(), b.size(), &info), -1);
	b = make_bzimage(gzip(kernel), 0x7fffffff);
	EXPECT_EQ(bzimage_parse(b.data(), b.size(), &info), -1);
}

TEST(BzImage, RefusesUnknownAndUnsupportedCompression)
{
	Bytes kernel = sample_kernel(4096);
	Bytes junk(100, 0x77);
	EXPECT_NE(extract_error(make_bzimage(junk, kernel.size())).find("unknown compression"),
		  std::string::npos);
	Bytes bz2 = { 'B', 'Z', 'h', '9', 0, 0, 0, 0 };
	EXPECT_NE(extract_error(make_bzimage(bz2, kernel.size())).find("bzip2-compressed kernels are not supported"),
		  std::string::npos);
	Bytes lzo = { 0x89, 'L', 'Z', 'O', 0, 0, 0, 0 };
	EXPECT_NE(extract_error(make_bzimage(lzo, kernel.size())).find("lzo"), std::string::npos);
}
