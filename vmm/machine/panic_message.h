/* SPDX-License-Identifier: MIT */
/*
 * The message a guest kernel panics with. Linux's panic(fmt, ...) gets a
 * printk format string in guest memory and its arguments in registers and
 * on the stack; at the breakpoint on panic()'s first instruction the VMM
 * reads the format (bounded) and the first few arguments and renders them
 * through vmm/printk/ as vsnprintf would: %d %i %u %x %X %o %c %s with
 * flags, width, precision and the h/l/ll/z/t/j sizes; %p and its
 * extensions as a hex address, %pS/%ps/%pB/%pF/%pf as a symbol. The guest
 * is untrusted: every read is bounded, and the message keeps printable
 * characters only (newlines and tabs become spaces, anything else '?').
 */
#ifndef VMM_PANIC_MESSAGE_H
#define VMM_PANIC_MESSAGE_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/kvm/vcpu.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PANIC_MESSAGE_MAX 256	  /* bytes of message kept, NUL included */
#define PANIC_FORMAT_MAX 256	  /* bytes of format string read */
#define PANIC_STRING_ARG_MAX 128 /* bytes read for each %s */
#define PANIC_ARGS_MAX 8	  /* argument words read after the format */

/* Reads len bytes of guest memory at a guest-virtual address: 0, or -1
 * when any of it is not mapped. */
typedef int (*guest_read_fn)(void *ctx, uint64_t va, void *buf, size_t len);

struct panic_args {
	const uint64_t *words; /* the arguments after the format, one a word */
	unsigned nr;
	unsigned word_bytes;   /* 8 in 64-bit code, 4 in 32-bit code */
	guest_read_fn read;    /* for %s */
	void *read_ctx;
	vcpu_symbolize_fn symbolize; /* for %pS; may be NULL */
	void *symbolize_ctx;
};

/* Renders the format with the arguments into out (always NUL-terminated)
 * and returns out. A conversion with no argument left, or a string that
 * cannot be read, gives "?". */
const char *panic_message_format(const char *fmt, const struct panic_args *a, char *out,
				 size_t len);

/* At a breakpoint on panic()'s first instruction: the message, or "" when
 * the format cannot be read. */
const char *panic_message_read(struct vcpu *vcpu, char *out, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* VMM_PANIC_MESSAGE_H */
