/* SPDX-License-Identifier: MIT */
#include "panic.h"

#include <stdarg.h>

#include "machine.h"
#include "print.h"

int panic_timeout = -1;

/* Linux's loop step: 100 ms, as mdelay(100) passes it to udelay. */
#define PANIC_STEP_XLOOPS (100 * 1000 * 0x10c7ul)

/* Linux flushes what printk buffered; our console is polled, so the
 * output is already out. A real function for the VMM to see return. */
__traced_fn void console_flush_on_panic(void);
__traced_fn void console_flush_on_panic(void)
{
	__asm__ volatile("" ::: "memory");
}

__traced_fn __noreturn void emergency_restart(void);
__traced_fn __noreturn void emergency_restart(void)
{
	machine_reboot_kbd();
}

/* A busy wait, as Linux's delay loop; how long does not matter here. */
__traced_fn void __const_udelay(unsigned long xloops);
__traced_fn void __const_udelay(unsigned long xloops)
{
	for (unsigned long i = 0; i < (xloops >> 20); i++)
		__asm__ volatile("pause");
}

static void print_message(const char *before, const char *fmt, va_list ap, const char *after)
{
	print_str(before);
	print_vfmt(fmt, ap);
	print_str(after);
}

__noreturn void panic(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	print_message("Kernel panic - not syncing: ", fmt, ap, "\n");
	va_end(ap);
	console_flush_on_panic();
	if (panic_timeout < 0)
		emergency_restart();
	va_start(ap, fmt);
	print_message("---[ end Kernel panic - not syncing: ", fmt, ap, " ]---\n");
	va_end(ap);
	for (;;)
		__const_udelay(PANIC_STEP_XLOOPS);
}
