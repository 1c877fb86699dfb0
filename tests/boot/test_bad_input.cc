// SPDX-License-Identifier: MIT
// Bad input through the real binary: each case must give exactly one clear
// line on stderr naming the problem, a non-zero status, and no crash.
#include <gtest/gtest.h>
#include <gtest/gtest-spi.h>

#include <elf.h>
#include <sys/stat.h>

#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "tests/boot/vmm_process.h"
#include "tests/fixtures.h"

namespace {

std::string write_temp(const std::string &name, const std::vector<uint8_t> &bytes)
{
	std::string path = temp_path(name);
	std::ofstream f(path, std::ios::binary);
	f.write(reinterpret_cast<const char *>(bytes.data()), (std::streamsize)bytes.size());
	return path;
}

// One line, our prefix, the expected words, status 1.
void expect_one_line_error(const VmmResult &r, const std::string &words)
{
	EXPECT_EQ(r.status, 1) << r.err;
	EXPECT_EQ(r.err.rfind("earlytrace: ", 0), 0u) << r.err;
	EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
	EXPECT_NE(r.err.find(words), std::string::npos) << "expected '" << words << "' in: " << r.err;
	EXPECT_EQ(r.out, "");
}

VmmResult run_kernel(const std::string &kernel, std::vector<std::string> extra = {})
{
	std::vector<std::string> args = { "run", "--kernel", kernel, "--mem", "16M", "--timeout", "20" };
	args.insert(args.end(), extra.begin(), extra.end());
	return run_vmm(args);
}

Elf64_Phdr *first_load(std::vector<uint8_t> &b)
{
	auto *eh = reinterpret_cast<Elf64_Ehdr *>(b.data());
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		auto *ph = reinterpret_cast<Elf64_Phdr *>(b.data() + eh->e_phoff + i * eh->e_phentsize);
		if (ph->p_type == PT_LOAD)
			return ph;
	}
	return nullptr;
}

} // namespace

TEST(BadInput, MissingKernelFile)
{
	expect_one_line_error(run_kernel("/nonexistent/vmlinux"),
			      "cannot open /nonexistent/vmlinux: No such file or directory");
}

TEST(BadInput, KernelIsADirectory)
{
	expect_one_line_error(run_kernel("/tmp"), "/tmp is a directory, not a regular file");
}

TEST(BadInput, NotAnElf)
{
	std::string path = write_temp("text.elf", std::vector<uint8_t>(4096, 'A'));
	expect_one_line_error(run_kernel(path), path + ": not an ELF file");
}

TEST(BadInput, EmptyFile)
{
	std::string path = write_temp("empty.elf", {});
	expect_one_line_error(run_kernel(path), "not an ELF file");
}

TEST(BadInput, TruncatedElf)
{
	auto bytes = read_file_bytes(image("x86_64"));
	ASSERT_GT(bytes.size(), 4096u);
	bytes.resize(bytes.size() / 3);
	expect_one_line_error(run_kernel(write_temp("cut.elf", bytes)), "truncated");
	bytes.resize(40);
	expect_one_line_error(run_kernel(write_temp("cut40.elf", bytes)), "truncated");
}

TEST(BadInput, SegmentOutsideRam)
{
	REQUIRE_KVM(); // RAM size is checked when the VM exists
	auto bytes = read_file_bytes(image("x86_64"));
	Elf64_Phdr *ph = first_load(bytes);
	ASSERT_NE(ph, nullptr);
	// Move every load segment 256 MiB up, together with the PVH entry, so
	// only the RAM check can object.
	auto *eh = reinterpret_cast<Elf64_Ehdr *>(bytes.data());
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		auto *p = reinterpret_cast<Elf64_Phdr *>(bytes.data() + eh->e_phoff + i * eh->e_phentsize);
		if (p->p_type == PT_LOAD)
			p->p_paddr += 256u << 20;
	}
	for (size_t off = 0; off + 8 <= bytes.size(); off++)
		if (!memcmp(&bytes[off], "Xen", 4)) {
			uint32_t entry;
			memcpy(&entry, &bytes[off + 4], 4);
			if (entry >= 0x100000 && entry < 0x200000) { // the PVH entry
				entry += 256u << 20;
				memcpy(&bytes[off + 4], &entry, 4);
			}
		}
	expect_one_line_error(run_kernel(write_temp("high.elf", bytes)), "lies outside guest RAM (16 MiB)");
}

TEST(BadInput, OverlappingSegments)
{
	auto bytes = read_file_bytes(image("x86_64"));
	auto *eh = reinterpret_cast<Elf64_Ehdr *>(bytes.data());
	Elf64_Phdr *load = first_load(bytes);
	ASSERT_NE(load, nullptr);
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		auto *p = reinterpret_cast<Elf64_Phdr *>(bytes.data() + eh->e_phoff + i * eh->e_phentsize);
		if (p != load && p->p_type != PT_NOTE) {
			*p = *load;
			p->p_paddr += 16;
			break;
		}
	}
	expect_one_line_error(run_kernel(write_temp("overlap.elf", bytes)), "overlap");
}

TEST(BadInput, NoPvhNote)
{
	auto bytes = read_file_bytes(image("x86_64"));
	for (size_t off = 8; off + 4 <= bytes.size(); off++)
		if (!memcmp(&bytes[off], "Xen", 4) && bytes[off - 4] == 18)
			bytes[off - 4] = 17; // another Xen note type, not PHYS32_ENTRY
	expect_one_line_error(run_kernel(write_temp("nopvh.elf", bytes), { "--boot", "pvh" }),
			      "no PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY)");
}

TEST(BadInput, NoWayToBoot)
{
	// A 32-bit kernel without a PVH note has no protocol we can enter.
	auto bytes = read_file_bytes(image("i386"));
	for (size_t off = 8; off + 4 <= bytes.size(); off++)
		if (!memcmp(&bytes[off], "Xen", 4) && bytes[off - 4] == 18)
			bytes[off - 4] = 17;
	expect_one_line_error(run_kernel(write_temp("nopvh32.elf", bytes)),
			      "no PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY) and not a 64-bit kernel");
	expect_one_line_error(run_kernel(image("i386"), { "--boot", "linux64" }),
			      "the Linux 64-bit boot protocol needs an x86-64 kernel");
	expect_one_line_error(run_kernel(image("i386"), { "--boot", "efi" }),
			      "--boot: unknown boot protocol 'efi'");
}

TEST(BadInput, RamTooSmall)
{
	REQUIRE_KVM(); // checked as the VM's RAM is made
	expect_one_line_error(run_vmm({ "run", "--kernel", image("x86_64"), "--mem", "1M" }),
			      "guest RAM of 1048576 bytes is too small");
}

TEST(BadInput, BadOptionValues)
{
	expect_one_line_error(run_vmm({ "run", "--kernel", image("x86_64"), "--mem", "12Q" }),
			      "--mem: invalid size '12Q'");
	expect_one_line_error(run_vmm({ "run", "--kernel", image("x86_64"), "--timeout", "soon" }),
			      "--timeout: invalid time 'soon'");
	expect_one_line_error(run_vmm({ "run", "--kernel", image("x86_64"), "--cpu", "z80" }),
			      "unknown CPU model 'z80'");
	expect_one_line_error(run_vmm({ "run", "--frobnicate" }), "unknown option '--frobnicate'");
	expect_one_line_error(run_vmm({ "run" }), "--kernel FILE is required");
	expect_one_line_error(run_vmm({ "launch" }), "unknown command 'launch'");
}

TEST(BadInput, MissingInitrd)
{
	REQUIRE_KVM();
	expect_one_line_error(run_vmm({ "run", "--kernel", image("x86_64"), "--mem", "16M", "--initrd",
					"/nonexistent/initrd" }),
			      "cannot open /nonexistent/initrd");
}

TEST(BadInput, InitrdTooLarge)
{
	REQUIRE_KVM();
	std::string path = write_temp("big.initrd", std::vector<uint8_t>(20 << 20, 0));
	expect_one_line_error(run_vmm({ "run", "--kernel", image("x86_64"), "--mem", "16M", "--initrd", path }),
			      "does not fit in guest RAM");
	remove(path.c_str());
}

TEST(BadInput, KvmDeviceMissing)
{
	VmmRun run;
	run.args = { "run", "--kernel", image("x86_64"), "--mem", "16M" };
	run.env = { "EARLYTRACE_KVM_DEVICE=/nonexistent/kvm" };
	expect_one_line_error(run_vmm(run), "/nonexistent/kvm does not exist: KVM is not available");
}

TEST(BadInput, KvmDeviceNotKvm)
{
	VmmRun run;
	run.args = { "run", "--kernel", image("x86_64"), "--mem", "16M" };
	run.env = { "EARLYTRACE_KVM_DEVICE=/dev/null" };
	expect_one_line_error(run_vmm(run), "is this really a KVM device?");
}

TEST(BadInput, KvmDeviceNotAccessible)
{
	std::string path = write_temp("kvm-noperm", {});
	chmod(path.c_str(), 0);
	// Root opens anything, so the VMM runs as nobody for this check, on a
	// copy of the kernel that nobody may read wherever the tree lives.
	std::string kernel = write_temp("kernel.elf", read_file_bytes(image("x86_64")));
	chmod(kernel.c_str(), 0644);
	VmmRun run;
	run.args = { "run", "--kernel", kernel, "--mem", "16M" };
	run.env = { "EARLYTRACE_KVM_DEVICE=" + path };
	run.as_nobody = geteuid() == 0;
	expect_one_line_error(run_vmm(run), "no permission to open");
}

// The tests' KVM check (REQUIRE_KVM() in tests/fixtures.h) asks the device
// the VMM would open, and under EARLYTRACE_REQUIRE_KVM=1 a KVM it cannot
// use fails the test instead of skipping it. (Only the failing path can be
// checked here: a skip would end this test.)
namespace {

// Sets an environment variable for a scope, restoring what was there.
struct ScopedEnv {
	std::string name;
	std::optional<std::string> old;
	ScopedEnv(const char *n, const char *value) : name(n)
	{
		if (const char *v = getenv(n))
			old = v;
		setenv(n, value, 1);
	}
	~ScopedEnv()
	{
		if (old)
			setenv(name.c_str(), old->c_str(), 1);
		else
			unsetenv(name.c_str());
	}
};

void require_kvm_here()
{
	REQUIRE_KVM();
}

} // namespace

TEST(RequireKvm, FollowsTheDeviceOverrideAndTheSwitch)
{
	std::string why;
	{
		ScopedEnv dev("EARLYTRACE_KVM_DEVICE", "/nonexistent/kvm");
		EXPECT_FALSE(kvm_available(&why));
		EXPECT_NE(why.find("/nonexistent/kvm does not exist: KVM is not available"),
			  std::string::npos)
			<< why;
		ScopedEnv on("EARLYTRACE_REQUIRE_KVM", "1");
		EXPECT_TRUE(kvm_required());
		EXPECT_FATAL_FAILURE(require_kvm_here(),
				     "EARLYTRACE_REQUIRE_KVM=1 but /nonexistent/kvm does not exist");
	}
	{
		ScopedEnv dev("EARLYTRACE_KVM_DEVICE", "/dev/null");
		EXPECT_FALSE(kvm_available(&why));
		EXPECT_NE(why.find("is this really a KVM device?"), std::string::npos) << why;
	}
	{
		ScopedEnv off("EARLYTRACE_REQUIRE_KVM", "0");
		EXPECT_FALSE(kvm_required()) << "only 1 turns it on";
	}
}

// --no-fill means something only with --follow: said, not ignored.
TEST(BadInput, NoFillWithoutFollow)
{
	expect_one_line_error(run_vmm({ "trace", "--kernel", "/nonexistent/vmlinux", "--no-fill" }),
			      "--no-fill: only --follow writes into the kernel's ring");
}
