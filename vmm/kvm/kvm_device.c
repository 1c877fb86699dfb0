/* SPDX-License-Identifier: MIT */
#include "vmm/kvm/kvm_device.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "vmm/util/error.h"

const char *kvm_device_path(void)
{
	const char *path = getenv(VM_KVM_DEVICE_ENV);

	return path && *path ? path : VM_KVM_DEVICE_DEFAULT;
}

static int open_node(void)
{
	const char *path = kvm_device_path();
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd >= 0)
		return fd;
	if (errno == ENOENT)
		return et_error("%s does not exist: KVM is not available (load kvm_intel or "
				"kvm_amd, or enable nested virtualization)", path);
	if (errno == EACCES || errno == EPERM)
		return et_error("no permission to open %s (add your user to the 'kvm' group)",
				path);
	return et_error_errno("cannot open %s", path);
}

static const struct {
	int cap;
	const char *name;
} required_caps[] = {
	{ KVM_CAP_USER_MEMORY, "KVM_CAP_USER_MEMORY" },
	{ KVM_CAP_IRQCHIP, "KVM_CAP_IRQCHIP" },
	{ KVM_CAP_PIT2, "KVM_CAP_PIT2" },
	{ KVM_CAP_SET_TSS_ADDR, "KVM_CAP_SET_TSS_ADDR" },
	{ KVM_CAP_EXT_CPUID, "KVM_CAP_EXT_CPUID" },
	{ KVM_CAP_IMMEDIATE_EXIT, "KVM_CAP_IMMEDIATE_EXIT" },
};

static int check_kvm(int kvm_fd)
{
	int version = ioctl(kvm_fd, KVM_GET_API_VERSION, 0);

	if (version < 0)
		return et_error_errno("KVM_GET_API_VERSION failed: is this really a KVM device?");
	if (version != KVM_API_VERSION)
		return et_error("KVM API version %d, expected %d", version, KVM_API_VERSION);
	for (size_t i = 0; i < sizeof(required_caps) / sizeof(required_caps[0]); i++)
		if (ioctl(kvm_fd, KVM_CHECK_EXTENSION, required_caps[i].cap) <= 0)
			return et_error("this KVM lacks %s", required_caps[i].name);
	return 0;
}

int kvm_device_open(void)
{
	int fd = open_node();

	if (fd >= 0 && check_kvm(fd)) {
		close(fd);
		return -1;
	}
	return fd;
}
