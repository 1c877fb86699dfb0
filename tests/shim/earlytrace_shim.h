/* SPDX-License-Identifier: MIT */
/*
 * The C API the tests exercise, in one header C++ can include. Every C
 * header already wraps its declarations in extern "C"; this file only
 * gathers them, so a test reads like a client of the library.
 */
#ifndef TESTS_SHIM_EARLYTRACE_SHIM_H
#define TESTS_SHIM_EARLYTRACE_SHIM_H

#include "arch/x86/boot/boot.h"
#include "arch/x86/boot/cmdline.h"
#include "arch/x86/boot/linux64.h"
#include "arch/x86/boot/memmap.h"
#include "arch/x86/boot/pvh.h"
#include "arch/x86/boot_cpu.h"
#include "arch/x86/boot_paging.h"
#include "arch/x86/cpu_model.h"
#include "arch/x86/disasm.h"
#include "arch/x86/fentry_check.h"
#include "arch/x86/gdt.h"
#include "arch/x86/layout.h"
#include "arch/x86/mem_operand.h"
#include "arch/x86/page_walk.h"
#include "arch/x86/pc_ports.h"
#include "earlytrace/abi.h"
#include "vmm/cmd/cli.h"
#include "vmm/hw/debug_exit.h"
#include "arch/x86/hw/i8042.h"
#include "vmm/hw/serial8250.h"
#include "vmm/kvm/iobus.h"
#include "vmm/loader/bzimage.h"
#include "vmm/loader/decompress.h"
#include "vmm/loader/initrd.h"
#include "vmm/loader/kernel_image.h"
#include "vmm/mem/guest_mem.h"
#include "vmm/printk/printk_format.h"
#include "vmm/report/report.h"
#include "vmm/run/end.h"
#include "vmm/symbols/symtab.h"
#include "vmm/trace/hang_watch.h"
#include "vmm/trace/overhead.h"
#include "vmm/trace/wait_spread.h"
#include "vmm/tracefile/trace_file.h"
#include "vmm/util/error.h"
#include "vmm/util/grow.h"
#include "vmm/util/sorted.h"

#endif /* TESTS_SHIM_EARLYTRACE_SHIM_H */
