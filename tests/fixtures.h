// SPDX-License-Identifier: MIT
// Where the tests find inputs that are not in the repository: the Debian
// cloud kernel and the busybox initramfs, which images/fetch-debian-kernel.sh
// and images/make-initramfs.sh put in a cache (scripts/test.sh runs both).
#ifndef TESTS_FIXTURES_H
#define TESTS_FIXTURES_H

#include <string>

// $EARLYTRACE_DEBIAN_KERNEL_DIR, else ${XDG_CACHE_HOME:-~/.cache}/earlytrace/debian-kernel.
std::string debian_kernel_dir();
// $EARLYTRACE_INITRAMFS, else ${XDG_CACHE_HOME:-~/.cache}/earlytrace/initramfs.cpio.
std::string initramfs_path();
bool file_exists(const std::string &path);

#endif // TESTS_FIXTURES_H
