/* SPDX-License-Identifier: MIT */
#include "vmm/loader/kernel_image.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "earlytrace/xen_pvh.h"
#include "vmm/util/error.h"
#include "vmm/util/input_file.h"

#define MAX_SEGMENTS 64


static bool range_in_file(uint64_t off, uint64_t len, size_t file_size)
{
	return off <= file_size && len <= file_size - off;
}

/* Looks for Xen's PHYS32_ENTRY note in one PT_NOTE segment. */
static void scan_notes(struct kernel_image *img, Elf *elf, const GElf_Phdr *ph)
{
	Elf_Data *notes = elf_getdata_rawchunk(elf, (int64_t)ph->p_offset, ph->p_filesz,
					       ELF_T_NHDR);
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	if (!notes)
		return;
	while ((off = gelf_getnote(notes, off, &nh, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)notes->d_buf + name_off;

		if (nh.n_namesz == 6 && !memcmp(name, "Linux", 6))
			img->is_linux = true;
		if (nh.n_type != XEN_ELFNOTE_PHYS32_ENTRY || nh.n_namesz != 4 ||
		    memcmp(name, "Xen", 4) != 0 || nh.n_descsz < 4)
			continue;
		/* Linux emits a pointer-sized value; the entry is its low 32 bits. */
		memcpy(&img->pvh_entry, (const uint8_t *)notes->d_buf + desc_off, 4);
		img->has_pvh = true;
	}
}

bool kernel_image_phys_in_segment(const struct kernel_image *img, uint64_t paddr)
{
	for (unsigned i = 0; i < img->nr_segments; i++)
		if (paddr >= img->segments[i].paddr &&
		    paddr - img->segments[i].paddr < img->segments[i].filesz)
			return true;
	return false;
}

bool kernel_image_section(const struct kernel_image *img, const char *name,
			  struct kernel_section *out)
{
	Elf *elf = img->elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return false;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name)) {
			*out = (struct kernel_section){ sh.sh_addr, sh.sh_offset, sh.sh_size,
							sh.sh_type };
			return true;
		}
	}
	return false;
}

const uint8_t *kernel_image_vaddr_bytes(const struct kernel_image *img, uint64_t vaddr,
					uint64_t len, uint64_t *paddr, uint32_t *flags)
{
	if (!img->data)
		return NULL;
	for (unsigned i = 0; i < img->nr_segments; i++) {
		const struct kernel_segment *seg = &img->segments[i];
		uint64_t off = vaddr - seg->vaddr;

		if (vaddr < seg->vaddr || off > seg->filesz || len > seg->filesz - off)
			continue;
		if (paddr)
			*paddr = seg->paddr + off;
		if (flags)
			*flags = seg->flags;
		return img->data + seg->offset + off;
	}
	return NULL;
}

bool kernel_image_vaddr_to_paddr(const struct kernel_image *img, uint64_t vaddr, uint64_t len,
				 uint64_t *paddr)
{
	for (unsigned i = 0; i < img->nr_segments; i++) {
		const struct kernel_segment *seg = &img->segments[i];
		uint64_t off = vaddr - seg->vaddr;

		if (vaddr < seg->vaddr || off > seg->memsz || len > seg->memsz - off)
			continue;
		*paddr = seg->paddr + off;
		return true;
	}
	return false;
}

int kernel_image_section_bytes(const struct kernel_image *img, const char *name,
			       const uint8_t **bytes, size_t *size)
{
	struct kernel_section sh;

	if (!img->data || !img->elf)
		return et_error("%s: the image's bytes were released", name);
	if (!kernel_image_section(img, name, &sh))
		return et_error("no section %s in the image", name);
	if (sh.type == SHT_NOBITS)
		return et_error("section %s has no bytes in the file", name);
	if (!range_in_file(sh.offset, sh.size, img->size))
		return et_error("section %s runs past the end of the file", name);
	*bytes = img->data + sh.offset;
	*size = (size_t)sh.size;
	return 0;
}

static int compare_paddr(const void *a, const void *b)
{
	const struct kernel_segment *x = a, *y = b;

	return x->paddr < y->paddr ? -1 : x->paddr > y->paddr;
}

static int parse_segments(struct kernel_image *img, Elf *elf, const GElf_Ehdr *eh)
{
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum) != 0)
		return et_error("cannot read the program header count: %s", elf_errmsg(-1));
	if (!range_in_file(eh->e_phoff, (uint64_t)phnum * eh->e_phentsize, img->size))
		return et_error("truncated: program headers extend past the end of the file");
	if (phnum > 4 * MAX_SEGMENTS)
		return et_error("%zu program headers is implausible for a kernel", phnum);

	img->segments = calloc(MAX_SEGMENTS, sizeof(*img->segments));
	if (!img->segments)
		return et_error("out of memory");

	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		struct kernel_segment *seg;

		if (!gelf_getphdr(elf, (int)i, &ph))
			return et_error("cannot read program header %zu: %s", i, elf_errmsg(-1));
		if (ph.p_type == PT_NOTE && range_in_file(ph.p_offset, ph.p_filesz, img->size))
			scan_notes(img, elf, &ph);
		if (ph.p_type != PT_LOAD || ph.p_memsz == 0)
			continue;
		if (!range_in_file(ph.p_offset, ph.p_filesz, img->size))
			return et_error("truncated: segment %zu (file bytes 0x%llx+0x%llx) extends "
					"past the end of the file (%zu bytes)", i,
					(unsigned long long)ph.p_offset,
					(unsigned long long)ph.p_filesz, img->size);
		if (ph.p_filesz > ph.p_memsz)
			return et_error("segment %zu has more file bytes than memory bytes", i);
		if (ph.p_paddr + ph.p_memsz < ph.p_paddr)
			return et_error("segment %zu wraps around the address space", i);
		if (img->nr_segments == MAX_SEGMENTS)
			return et_error("more than %d loadable segments", MAX_SEGMENTS);
		seg = &img->segments[img->nr_segments++];
		*seg = (struct kernel_segment){
			.paddr = ph.p_paddr,
			.vaddr = ph.p_vaddr,
			.offset = ph.p_offset,
			.filesz = ph.p_filesz,
			.memsz = ph.p_memsz,
			.flags = ph.p_flags,
		};
	}
	if (img->nr_segments == 0)
		return et_error("no loadable segments");

	qsort(img->segments, img->nr_segments, sizeof(*img->segments), compare_paddr);
	for (unsigned i = 1; i < img->nr_segments; i++) {
		const struct kernel_segment *prev = &img->segments[i - 1], *cur = &img->segments[i];

		if (prev->paddr + prev->memsz > cur->paddr)
			return et_error("segments at 0x%llx and 0x%llx overlap",
					(unsigned long long)prev->paddr,
					(unsigned long long)cur->paddr);
	}
	img->phys_start = img->segments[0].paddr;
	img->phys_end = img->segments[img->nr_segments - 1].paddr +
			img->segments[img->nr_segments - 1].memsz;
	if (img->has_pvh && !kernel_image_phys_in_segment(img, img->pvh_entry))
		return et_error("PVH entry 0x%x is not inside any loadable segment",
				img->pvh_entry);
	return 0;
}

static int parse_elf(struct kernel_image *img)
{
	GElf_Ehdr eh;
	Elf *elf;

	if (img->size < 4 || memcmp(img->data, ELFMAG, SELFMAG) != 0)
		return et_error("not an ELF file or a bzImage");
	if (img->size < EI_NIDENT || (img->data[EI_CLASS] != ELFCLASS32 &&
				      img->data[EI_CLASS] != ELFCLASS64))
		return et_error("truncated or unknown ELF class");
	if (img->data[EI_DATA] != ELFDATA2LSB)
		return et_error("ELF is not little-endian, so not an x86 kernel");
	if (img->size < (img->data[EI_CLASS] == ELFCLASS64 ? sizeof(Elf64_Ehdr)
							   : sizeof(Elf32_Ehdr)))
		return et_error("truncated ELF header (%zu bytes)", img->size);

	elf = elf_memory((char *)img->data, img->size);
	if (!elf)
		return et_error("cannot parse ELF: %s", elf_errmsg(-1));
	img->elf = elf;
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
		return et_error("truncated ELF header");

	img->elf_class = img->data[EI_CLASS] == ELFCLASS64 ? 64 : 32;
	img->machine = eh.e_machine;
	img->entry = eh.e_entry;
	if (!arch_elf_machine_ok(eh.e_machine))
		return et_error("ELF machine %u is not %s", eh.e_machine, arch_elf_machines());
	if (eh.e_type != ET_EXEC)
		return et_error("ELF type %u is not an executable (a kernel is ET_EXEC)",
				eh.e_type);
	return parse_segments(img, elf, &eh);
}

/* Parses data (malloc'd, size bytes), which img owns from here on, freed
 * with it or on failure: the loaders hand over what they read or unpacked
 * instead of holding a second copy of a 50 MB kernel. */
static int parse_owned(struct kernel_image *img, uint8_t *data, size_t size, const char *name)
{
	memset(img, 0, sizeof(*img));
	img->data = data;
	img->size = size;
	img->name = strdup(name ? name : "kernel");
	if (!img->name) {
		kernel_image_close(img);
		return et_error("out of memory");
	}
	elf_version(EV_CURRENT);
	if (parse_elf(img)) {
		et_error_prefix("%s", img->name);
		kernel_image_close(img);
		return -1;
	}
	return 0;
}

int kernel_image_parse(struct kernel_image *img, const void *data, size_t size,
		       const char *name)
{
	uint8_t *copy = malloc(size ? size : 1);

	if (!copy) {
		memset(img, 0, sizeof(*img));
		return et_error("out of memory");
	}
	if (size)
		memcpy(copy, data, size);
	return parse_owned(img, copy, size, name);
}

/* Unpacks the vmlinux ELF inside a bzImage (file, which it frees as soon
 * as the ELF is out) and parses that. */
static int open_bzimage(struct kernel_image *img, uint8_t *file, size_t size, const char *path)
{
	enum compression compression;
	struct bzimage_info bz;
	uint8_t *elf;
	size_t elf_size;

	memset(img, 0, sizeof(*img));
	if (bzimage_parse(file, size, &bz) || bzimage_extract(file, &bz, &elf, &elf_size)) {
		free(file);
		return et_error_prefix("%s", path);
	}
	compression = compression_detect(file + bz.payload_offset, bz.payload_length);
	free(file);
	if (parse_owned(img, elf, elf_size, path))
		return et_error_prefix("payload");
	img->from_bzimage = true;
	img->bzimage = bz;
	img->compression = compression;
	return 0;
}

int kernel_image_open(struct kernel_image *img, const char *path)
{
	uint8_t *data;
	size_t size;

	memset(img, 0, sizeof(*img));
	if (input_read_whole_file(path, KERNEL_IMAGE_MAX_SIZE, &data, &size))
		return -1;
	if (bzimage_detect(data, size))
		return open_bzimage(img, data, size, path);
	return parse_owned(img, data, size, path);
}

void kernel_image_release_data(struct kernel_image *img)
{
	if (img->elf)
		elf_end(img->elf);
	free(img->data);
	img->elf = NULL;
	img->data = NULL;
	img->size = 0;
}

void kernel_image_close(struct kernel_image *img)
{
	if (img->elf)
		elf_end(img->elf);
	free(img->segments);
	free(img->data);
	free(img->name);
	memset(img, 0, sizeof(*img));
}

int kernel_image_load(const struct kernel_image *img, const struct guest_mem *gm)
{
	const char *lowest_name;
	uint64_t lowest = arch_kernel_lowest_paddr(&lowest_name);

	for (unsigned i = 0; i < img->nr_segments; i++) {
		const struct kernel_segment *seg = &img->segments[i];
		uint8_t *dst;

		if (seg->paddr < lowest)
			return et_error("%s: segment at 0x%llx is below %s, where the boot "
					"structures live", img->name,
					(unsigned long long)seg->paddr, lowest_name);
		dst = guest_mem_ptr(gm, seg->paddr, seg->memsz);
		if (!dst)
			return et_error("%s: segment 0x%llx-0x%llx lies outside guest RAM "
					"(%llu MiB); try a larger --mem", img->name,
					(unsigned long long)seg->paddr,
					(unsigned long long)(seg->paddr + seg->memsz),
					(unsigned long long)(gm->size >> 20));
		memcpy(dst, img->data + seg->offset, seg->filesz);
		memset(dst + seg->filesz, 0, seg->memsz - seg->filesz);
	}
	return 0;
}
