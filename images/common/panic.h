/* SPDX-License-Identifier: MIT */
/*
 * panic(), shaped like Linux's where a VMM watching it looks (the names
 * matter: earlytrace finds them in the symbol table): the message from a
 * printf format and its arguments, console_flush_on_panic() once it is
 * out, then either emergency_restart() (panic_timeout < 0, Linux's
 * panic=-1) or the "end Kernel panic" line and __const_udelay() forever
 * (panic_timeout == 0, panic=0).
 */
#ifndef IMAGES_PANIC_H
#define IMAGES_PANIC_H

#include "compiler.h"

/* As Linux's panic= parameter: < 0 resets at once, 0 waits forever. */
extern int panic_timeout;

__noreturn void panic(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* IMAGES_PANIC_H */
