/* SPDX-License-Identifier: MIT */
/*
 * Every fixed guest-physical address the VMM uses, in one place (the I/O
 * ports and interrupt lines are in arch/x86/pc_ports.h). Macros only and no
 * includes: the freestanding test kernels (images/) include it too.
 *
 * The low 1 MiB follows the PC conventions Linux expects (real-mode IVT/BDA
 * at 0, EBDA below 640 KiB, VGA/BIOS hole from 640 KiB to 1 MiB); kernels
 * load at or above 1 MiB. The boot structures live in conventional memory
 * below the EBDA, where neither a kernel nor an initrd is ever placed.
 */
#ifndef ARCH_X86_LAYOUT_H
#define ARCH_X86_LAYOUT_H

/* Boot GDT, room for 8 descriptors; each protocol fills its own layout.
 * Kernels load their own GDT early. */
#define LAYOUT_BOOT_GDT 0x500
#define LAYOUT_BOOT_GDT_ENTRIES 8
/* Boot IDT: one zero entry, limit 7. Any exception before the guest loads
 * its own IDT escalates to a triple fault, which the VMM reports. */
#define LAYOUT_BOOT_IDT 0x540
/* struct hvm_start_info handed to a PVH entry point in ebx. */
#define LAYOUT_PVH_START_INFO 0x6000
/* hvm_modlist_entry array (the initrd), right after start_info. */
#define LAYOUT_PVH_MODLIST 0x6040
#define LAYOUT_PVH_MODLIST_MAX 4
/* hvm_memmap_table_entry array (the E820-style memory map). */
#define LAYOUT_PVH_MEMMAP 0x7000
#define LAYOUT_PVH_MEMMAP_MAX 128
/* struct boot_params ("zero page") for the Linux 64-bit boot protocol.
 * Shares its page with the PVH memory map: a boot uses one or the other. */
#define LAYOUT_ZERO_PAGE 0x7000
/* Initial stack pointer; PVH leaves esp unspecified, we give a sane one. */
#define LAYOUT_BOOT_STACK_TOP 0x8ff0
/* Identity page tables for entering a kernel in 64-bit mode: one PML4,
 * one PDPT and four page directories of 2 MiB pages map the first 4 GiB. */
#define LAYOUT_BOOT_PML4 0x9000
#define LAYOUT_BOOT_PDPT 0xa000
#define LAYOUT_BOOT_PD 0xb000 /* four pages: 0xb000-0xefff */
#define LAYOUT_BOOT_PD_COUNT 4
/* Kernel command line, NUL-terminated. */
#define LAYOUT_CMDLINE 0x20000
#define LAYOUT_CMDLINE_MAX 0x10000
/* Start of the Extended BIOS Data Area; memory from here to 1 MiB is
 * reported reserved, as on a PC. */
#define LAYOUT_EBDA_START 0x9fc00
/* ACPI tables (arch/x86/boot/acpi.c): in the BIOS area below 1 MiB, which the
 * memory map reserves, where a kernel scanning for the RSDP looks. */
#define LAYOUT_ACPI_TABLES 0xe0000
#define LAYOUT_ACPI_TABLES_SIZE 0x1000
/* The BIOS reset vector, F000:FFF0 in real mode, the last 16 bytes below
 * 1 MiB: where a kernel restarting through the BIOS jumps (Linux's
 * machine_real_restart: reboot=b, and its choice on a hardware-reduced
 * ACPI machine without EFI). arch/x86/kvm/reset_vector.c puts code there that
 * resets the machine. Inside the BIOS area the memory map reserves. */
#define LAYOUT_RESET_VECTOR 0xffff0
#define LAYOUT_RESET_VECTOR_CS_BASE 0xf0000 /* segment 0xf000 */
#define LAYOUT_RESET_VECTOR_SIZE 16
/* Lowest address a kernel segment may be loaded at. */
#define LAYOUT_HIMEM_START 0x100000

/* KVM needs three pages for the real-mode TSS on Intel (KVM_SET_TSS_ADDR)
 * and one for the EPT identity map; placed just below the BIOS ROM alias at
 * the top of the 32-bit space, inside the MMIO hole, never RAM. */
#define LAYOUT_KVM_IDENTITY_MAP 0xfffbc000
/* The vCPUs' KVM steal-time areas (vmm/kvm/host_wait.h), 64 bytes each,
 * four pages below those: VMM memory the memory map never names. */
#define LAYOUT_HOST_WAIT_AREA 0xfffb0000
#define LAYOUT_KVM_TSS 0xfffbd000

/* RAM above this address is relocated to 4 GiB, leaving a 32-bit MMIO hole
 * as real PCs and the reference VMMs do. */
#define LAYOUT_MMIO_HOLE_START 0xc0000000ULL
#define LAYOUT_MMIO_HOLE_END 0x100000000ULL
/* In the hole: KVM's local APIC at its reset base (its MMIO never reaches
 * the VMM), and an address no device claims, where every access is an
 * MMIO exit the VMM answers with all ones (the test kernels use it). */
#define LAYOUT_LOCAL_APIC 0xfee00000
#define LAYOUT_IO_APIC 0xfec00000 /* KVM's in-kernel I/O APIC */
#define LAYOUT_UNCLAIMED_MMIO 0xd0000000

/* Smallest RAM we accept: boot structures + 1 MiB of kernel room. */
#define LAYOUT_MIN_RAM (2ULL << 20)

#endif /* ARCH_X86_LAYOUT_H */
