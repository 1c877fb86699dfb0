/* SPDX-License-Identifier: MIT */
/*
 * A guest kernel image, parsed and validated but not yet in guest memory.
 *
 * Parsing is separate from loading so that commands that never start a VM
 * (listing sites, symbols) share the same checks. Everything read from the
 * file is bounds-checked: images are untrusted input.
 */
#ifndef VMM_LOADER_KERNEL_IMAGE_H
#define VMM_LOADER_KERNEL_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/loader/bzimage.h"
#include "vmm/loader/decompress.h"
#include "vmm/mem/guest_mem.h"

#ifdef __cplusplus
extern "C" {
#endif

struct kernel_segment {
	uint64_t paddr;	 /* where it is loaded in guest-physical memory */
	uint64_t vaddr;	 /* where the kernel runs it once paging is on */
	uint64_t offset; /* file offset of the initialized bytes */
	uint64_t filesz;
	uint64_t memsz;	 /* filesz plus zero-filled tail (.bss) */
	uint32_t flags;	 /* PF_R | PF_W | PF_X */
};

struct kernel_image {
	char *name;	/* for messages: the path it came from */
	uint8_t *data;	/* the ELF bytes, owned */
	size_t size;
	unsigned elf_class; /* 32 or 64 */
	uint16_t machine;   /* e_machine, one arch_elf_machine_ok() takes */
	uint64_t entry;	    /* e_entry */
	bool has_pvh;
	uint32_t pvh_entry; /* physical, from XEN_ELFNOTE_PHYS32_ENTRY */
	bool is_linux;	    /* carries Linux's own ELF notes */
	/* Set when the file was a bzImage and the ELF its decompressed payload. */
	bool from_bzimage;
	enum compression compression;
	struct bzimage_info bzimage;
	unsigned nr_segments;
	struct kernel_segment *segments; /* PT_LOAD, sorted by paddr */
	uint64_t phys_start, phys_end;	  /* [lowest paddr, highest paddr+memsz) */
	void *elf;			  /* libelf handle over data (Elf *) */
};

/*
 * What the architecture takes of a kernel, declared here and defined in
 * arch/<arch>/kernel_rules.c (as vmm/mem's arch_guest_ram_layout()), so
 * that the loader includes no architecture: whether an ELF e_machine is
 * one of its, and its machines in words ("x86 (EM_386 or EM_X86_64)");
 * the lowest address a segment may load at, above the boot structures,
 * and that address in words ("1 MiB").
 */
bool arch_elf_machine_ok(unsigned machine);
const char *arch_elf_machines(void);
uint64_t arch_kernel_lowest_paddr(const char **in_words);

/* Reads and parses a file: an ELF kernel, or a bzImage whose payload is
 * decompressed and parsed as the ELF. 0, or -1 with et_last_error()
 * naming the problem. */
int kernel_image_open(struct kernel_image *img, const char *path);
/* Parses bytes already in memory (copied); `name` is used in messages. */
int kernel_image_parse(struct kernel_image *img, const void *data, size_t size,
		       const char *name);
void kernel_image_close(struct kernel_image *img);

/* Frees the file's bytes (a decompressed Linux is ~50 MB) once the guest
 * is loaded and nothing needs them; the description (name, segments,
 * entry, class) stays, and kernel_image_vaddr_bytes() returns NULL. */
void kernel_image_release_data(struct kernel_image *img);

/* Checks the segments fit in RAM at or above arch_kernel_lowest_paddr(),
 * then copies them in and zeroes their .bss tails. */
int kernel_image_load(const struct kernel_image *img, const struct guest_mem *gm);

/* True if paddr lies in the initialized bytes of a loadable segment. */
bool kernel_image_phys_in_segment(const struct kernel_image *img, uint64_t paddr);

/* Maps [vaddr, vaddr+len) to file bytes of one segment; NULL if it is not
 * all initialized bytes of one segment. *paddr gets the physical address. */
const uint8_t *kernel_image_vaddr_bytes(const struct kernel_image *img, uint64_t vaddr,
					uint64_t len, uint64_t *paddr, uint32_t *flags);

/* The guest-physical address of [vaddr, vaddr+len) where one loadable
 * segment holds it all (also once the data is released): true and *paddr
 * set, or false. */
bool kernel_image_vaddr_to_paddr(const struct kernel_image *img, uint64_t vaddr, uint64_t len,
				 uint64_t *paddr);

/* A section header, for images that keep them. */
struct kernel_section {
	uint64_t addr;	 /* sh_addr */
	uint64_t offset; /* sh_offset: where its bytes are in the file */
	uint64_t size;	 /* sh_size */
	uint32_t type;	 /* sh_type (SHT_PROGBITS, ...) */
};

/* The first section called name; false when there is none (or the image
 * has no section headers). */
bool kernel_image_section(const struct kernel_image *img, const char *name,
			  struct kernel_section *out);

/* The bytes of the section called `name` (e.g. ".BTF"), inside img->data:
 * 0, or -1 with an error naming the section when the image has no such
 * section, its data was released, or the section has no bytes in the file
 * (SHT_NOBITS) or runs past its end. */
int kernel_image_section_bytes(const struct kernel_image *img, const char *name,
			       const uint8_t **bytes, size_t *size);

/* The file size above which a file is no kernel (nor initrd), refused
 * before it is read. */
#define KERNEL_IMAGE_MAX_SIZE (1ull << 30)

/* The GNU build-id of an ELF image (build_id.c); 0 and *len set, or -1 if
 * it has none. */
int kernel_image_build_id(const struct kernel_image *img, uint8_t *id, size_t *len);

#ifdef __cplusplus
}
#endif

#endif /* VMM_LOADER_KERNEL_IMAGE_H */
