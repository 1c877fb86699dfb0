/* SPDX-License-Identifier: MIT */
/* Assembling the kernel command line the guest receives. */
#ifndef ARCH_X86_BOOT_CMDLINE_H
#define ARCH_X86_BOOT_CMDLINE_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Returns a malloc'ed copy of `user` with each space-separated word of
 * `params` appended unless the user already gave a word with the same name
 * (the text before '='), so the user's choice always wins. `added`, when
 * not NULL, receives a malloc'ed list of the words actually appended (""
 * when none). NULL on allocation failure.
 */
char *cmdline_append_params(const char *user, const char *params, char **added);

/* Whether the command line has a parameter called `name` (with or
 * without "=value"). */
bool cmdline_has_param(const char *cmdline, const char *name);

#ifdef __cplusplus
}
#endif

#endif /* ARCH_X86_BOOT_CMDLINE_H */
