/* SPDX-License-Identifier: MIT */
/* Where the test kernel puts its application processors' start code: a
 * page below 1 MiB that the boot structures leave free (arch/x86/layout.h),
 * so SIPI vector 0x10. */
#ifndef IMAGES_X86_64_SMP_LAYOUT_H
#define IMAGES_X86_64_SMP_LAYOUT_H

#define SMP_AP_PA 0x10000
#define SMP_MAX_CPUS 16

#endif
