// SPDX-License-Identifier: MIT
#include "tests/fixtures.h"

#include <sys/stat.h>

#include <stdlib.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

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

TempDir::TempDir()
{
	char tmpl[] = "/tmp/earlytrace-test-XXXXXX";
	const char *made = mkdtemp(tmpl);
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
