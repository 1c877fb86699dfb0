/* SPDX-License-Identifier: MIT */
/*
 * Reading guest memory for the ftrace reader, and NUL-terminated strings
 * in it (trace_printk formats, trace_puts strings), bounded and cached.
 *
 * The reader never touches guest memory itself: the caller gives it a
 * read callback (the VMM walks the vCPU's page tables; tests use synthetic
 * memory). A string is read page by page, so one that ends just before an
 * unmapped page is still found, and never beyond a maximum length. The
 * strings asked for are constants of the kernel image (a format's address
 * is fixed), so each is read once and kept in a small cache.
 */
#ifndef VMM_FTRACE_GUEST_STRINGS_H
#define VMM_FTRACE_GUEST_STRINGS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Copies len bytes at guest-virtual vaddr into buf: 0, or non-zero when
 * any byte is not readable (not mapped, outside RAM). */
typedef int (*ftrace_read_fn)(void *ctx, uint64_t vaddr, void *buf, size_t len);

#define GUEST_STRING_MAX 1024
#define GUEST_STRINGS_CACHE 128

struct guest_strings {
	ftrace_read_fn read;
	void *ctx;
	struct {
		uint64_t addr;
		char *text;   /* NULL: slot empty */
		unsigned len;
		int truncated; /* no NUL within GUEST_STRING_MAX */
	} cache[GUEST_STRINGS_CACHE];
	uint64_t reads, hits, failures;
};

void guest_strings_init(struct guest_strings *gs, ftrace_read_fn read, void *ctx);
void guest_strings_free(struct guest_strings *gs);

/* The string at vaddr (NUL-terminated, at most GUEST_STRING_MAX - 1
 * bytes; *truncated set when it went on), or NULL when its first byte is
 * unreadable. Valid until the next call. */
const char *guest_string_get(struct guest_strings *gs, uint64_t vaddr, int *truncated);

#ifdef __cplusplus
}
#endif

#endif /* VMM_FTRACE_GUEST_STRINGS_H */
