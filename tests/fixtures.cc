// SPDX-License-Identifier: MIT
#include "tests/fixtures.h"
#include "tests/kvm_hook_helper.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <zlib.h>
#include <unistd.h>

#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include <gtest/gtest.h>

#include "vmm/util/error.h"
#include "vmm/kvm/kvm_device.h"
#include "vmm/loader/bzimage.h"
#include "vmm/tracefile/trace_file.h"

namespace {

std::string cache_dir()
{
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	if (xdg && *xdg)
		return std::string(xdg) + "/earlytrace";
	return std::string(home ? home : "/nonexistent") + "/.cache/earlytrace";
}

std::string from_env(const char *name, const std::string &fallback)
{
	const char *v = getenv(name);
	return v && *v ? std::string(v) : fallback;
}

} // namespace

std::string debian_kernel_dir()
{
	return from_env("EARLYTRACE_DEBIAN_KERNEL_DIR", cache_dir() + "/debian-kernel");
}

std::string initramfs_path()
{
	return from_env("EARLYTRACE_INITRAMFS", cache_dir() + "/initramfs.cpio");
}

bool kvm_available(std::string *why)
{
	int fd = kvm_device_open();
	if (fd < 0) {
		if (why)
			*why = et_last_error();
		return false;
	}
	close(fd);
	return true;
}

bool kvm_shutdown_keeps_state()
{
	static int keeps = -1;
	if (keeps < 0) {
		khh_traits t;
		keeps = khh_get_traits(&t) == 0 ? t.shutdown_keeps_state : 1;
	}
	return keeps;
}

const char kTripleFaultStateLost[] =
	"triple fault; this KVM reset the vCPU before its state could be read, as on AMD SVM";

std::string int3_skip_reason()
{
	static std::string why;
	static bool known;
	if (!known) {
		khh_traits t;
		if (kvm_available() && khh_get_traits(&t) == 0 && !t.int3_exits)
			why = std::string("breakpoint tracing: ") + t.no_int3;
		known = true;
	}
	return why;
}

const char *busiest_trace_mode()
{
	return int3_skip_reason().empty() ? "int3" : "trampoline";
}

std::string stock_boot_skip_reason(const std::string &what)
{
	if (getenv("EARLYTRACE_SLOW_TESTS"))
		return "";
	if (file_exists("/sys/module/kvm_pvm"))
		return what + " takes minutes on kvm-pvm; set EARLYTRACE_SLOW_TESTS=1 to run it";
	return "";
}

bool kvm_required()
{
	const char *v = getenv("EARLYTRACE_REQUIRE_KVM");
	return v && !strcmp(v, "1");
}

unsigned kvm_recommended_vcpus()
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	int n = fd >= 0 ? ioctl(fd, KVM_CHECK_EXTENSION, KVM_CAP_NR_VCPUS) : 0;

	if (fd >= 0)
		close(fd);
	return n > 0 ? (unsigned)n : 4;
}

bool file_exists(const std::string &path)
{
	struct stat st;
	return stat(path.c_str(), &st) == 0;
}

std::vector<uint8_t> read_file_bytes(const std::string &path)
{
	std::ifstream f(path, std::ios::binary);
	return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

std::string read_file_text(const std::string &path)
{
	std::ifstream f(path, std::ios::binary);
	return std::string(std::istreambuf_iterator<char>(f), {});
}

std::vector<std::string> files_in(const std::string &dir)
{
	std::vector<std::string> names;
	DIR *d = opendir(dir.c_str());
	if (!d)
		return names;
	while (struct dirent *e = readdir(d))
		if (std::string(e->d_name) != "." && std::string(e->d_name) != "..")
			names.push_back(e->d_name);
	closedir(d);
	std::sort(names.begin(), names.end());
	return names;
}

std::vector<uint8_t> gzip(const std::vector<uint8_t> &in)
{
	z_stream zs = {};
	std::vector<uint8_t> out(compressBound(in.size()) + 64);
	EXPECT_EQ(deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
	zs.next_in = const_cast<Bytef *>(in.data());
	zs.avail_in = (uInt)in.size();
	zs.next_out = out.data();
	zs.avail_out = (uInt)out.size();
	EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
	out.resize(zs.total_out);
	deflateEnd(&zs);
	return out;
}

void put32(std::vector<uint8_t> &b, size_t off, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b[off + i] = (uint8_t)(v >> (8 * i));
}

std::vector<uint8_t> make_bzimage(const std::vector<uint8_t> &compressed, size_t kernel_size,
				  uint32_t cmdline_size)
{
	const unsigned setup_sects = 3;
	const size_t setup = (setup_sects + 1) * 512, payload_offset = 0x300;
	std::vector<uint8_t> img(setup + payload_offset, 0);
	img[BZ_OFF_SETUP_SECTS] = setup_sects;
	img[BZ_OFF_BOOT_FLAG] = 0x55;
	img[BZ_OFF_BOOT_FLAG + 1] = 0xaa;
	img[BZ_OFF_JUMP] = 0xeb;
	img[BZ_OFF_JUMP + 1] = 0x6a; // header ends at 0x26c
	memcpy(&img[BZ_OFF_HEADER], "HdrS", 4);
	img[BZ_OFF_VERSION] = 0x0f;
	img[BZ_OFF_VERSION + 1] = 0x02;
	img[BZ_OFF_LOADFLAGS] = 0x01;
	img[BZ_OFF_XLOADFLAGS] = 0x7f;
	put32(img, BZ_OFF_CMDLINE_SIZE, cmdline_size);
	put32(img, BZ_OFF_INITRD_ADDR_MAX, 0x7fffffff);
	put32(img, BZ_OFF_PAYLOAD_OFFSET, (uint32_t)payload_offset);
	put32(img, BZ_OFF_PAYLOAD_LENGTH, (uint32_t)compressed.size() + 4);
	// resize + memcpy rather than insert: gcc 12 warns falsely on the latter.
	size_t at = img.size();
	img.resize(at + compressed.size() + 4 + 512, 0); // + size + decompressor tail
	if (!compressed.empty())
		memcpy(&img[at], compressed.data(), compressed.size());
	put32(img, at + compressed.size(), (uint32_t)kernel_size);
	return img;
}

TempDir::TempDir()
{
	// gtest's temporary folder: $TEST_TMPDIR, else /tmp (scripts/test.sh
	// points the nested VM's runs at a tmpfs of the VM's own).
	std::string tmpl = ::testing::TempDir() + "earlytrace-test-XXXXXX";
	const char *made = mkdtemp(tmpl.data());
	path = made ? made : "/nonexistent";
}

TempDir::~TempDir()
{
	(void)!system(("rm -rf '" + path + "'").c_str());
}

et_ring_record make_call(uint64_t tsc, uint64_t ip, uint64_t parent, uint32_t cpu, uint16_t source)
{
	et_ring_record e{};
	e.tsc = tsc;
	e.ip = ip;
	e.parent_ip = parent;
	e.cpu = cpu;
	e.kind = ET_REC_CALL;
	e.flags = source;
	return e;
}

std::vector<std::string> text_lines(const std::string &text)
{
	std::vector<std::string> out;
	std::istringstream in(text);
	for (std::string l; std::getline(in, l);)
		out.push_back(l);
	return out;
}

std::string report_text(const std::string &path, report_format f, int want)
{
	trace_reader *r;
	EXPECT_EQ(trace_reader_open(&r, path.c_str()), 0) << et_last_error();
	char *buf = nullptr;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	EXPECT_EQ(report_write(r, f, out), want) << et_last_error();
	fclose(out);
	std::string s(buf, len);
	free(buf);
	trace_reader_close(r);
	return s;
}
