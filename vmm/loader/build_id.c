// SPDX-License-Identifier: MIT
/*
 * The GNU build-id note of an ELF image, which a kernel and its symbol
 * file (--symbols) are matched by.
 */
#include <gelf.h>
#include <libelf.h>
#include <string.h>

#include "vmm/loader/kernel_image.h"

#define NT_GNU_BUILD_ID_TYPE 3

/* Looks for the note in SHT_NOTE sections, then PT_NOTE segments, so a
 * stripped kernel and its debug file are read the same way. */
static int find_build_id(Elf_Data *notes, uint8_t *id, size_t *len)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while ((off = gelf_getnote(notes, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type != NT_GNU_BUILD_ID_TYPE || nh.n_namesz != 4 ||
		    memcmp((const char *)notes->d_buf + name_off, "GNU", 4) != 0 ||
		    nh.n_descsz == 0 || nh.n_descsz > 64)
			continue;
		memcpy(id, (const uint8_t *)notes->d_buf + desc_off, nh.n_descsz);
		*len = nh.n_descsz;
		return 0;
	}
	return -1;
}

int kernel_image_build_id(const struct kernel_image *img, uint8_t *id, size_t *len)
{
	Elf *elf = img->elf;
	Elf_Scn *scn = NULL;
	size_t phnum;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		if (sh.sh_offset > img->size || sh.sh_size > img->size - sh.sh_offset)
			continue;
		data = elf_getdata(scn, NULL);
		if (data && data->d_buf && !find_build_id(data, id, len))
			return 0;
	}
	if (elf_getphdrnum(elf, &phnum) != 0)
		return -1;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		Elf_Data *data;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE ||
		    ph.p_offset > img->size || ph.p_filesz > img->size - ph.p_offset)
			continue;
		data = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		if (data && !find_build_id(data, id, len))
			return 0;
	}
	return -1;
}
