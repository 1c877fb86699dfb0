/* SPDX-License-Identifier: MIT */
/* Attributes the test kernels use; kept in one place so the intent is named. */
#ifndef IMAGES_COMPILER_H
#define IMAGES_COMPILER_H

#define __noreturn __attribute__((noreturn))
/*
 * A function that must stay a real, separately called function with its own
 * fentry site: no inlining, no cloning (foo.constprop.0 would be a second
 * site under another name), no IPA shortcuts at the call sites.
 */
#define __traced_fn __attribute__((noinline, noipa))

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif /* IMAGES_COMPILER_H */
