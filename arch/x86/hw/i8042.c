/* SPDX-License-Identifier: MIT */
#include "arch/x86/hw/i8042.h"

#include <string.h>

#include "arch/x86/pc_ports.h"

#define STATUS_OBF 0x01	    /* output buffer full: data waiting at 0x60 */
#define STATUS_SYSFLAG 0x04 /* self test passed since power-on */
#define STATUS_CMD 0x08	    /* last write was to the command port */
#define STATUS_UNLOCKED 0x10 /* keyboard not inhibited by the keylock */
#define CONFIG_KBD_DISABLED 0x10
#define CONFIG_AUX_DISABLED 0x20

enum {
	CMD_READ_CONFIG = 0x20,
	CMD_WRITE_CONFIG = 0x60,
	CMD_AUX_DISABLE = 0xa7,
	CMD_AUX_ENABLE = 0xa8,
	CMD_AUX_TEST = 0xa9,
	CMD_SELF_TEST = 0xaa,
	CMD_KBD_TEST = 0xab,
	CMD_KBD_DISABLE = 0xad,
	CMD_KBD_ENABLE = 0xae,
	CMD_WRITE_OUTPUT_PORT = 0xd1,
};

#define SELF_TEST_OK 0x55
#define PORT_TEST_OK 0x00
#define OUTPUT_PORT_RESET_BIT 0x01 /* active low: 0 asserts CPU reset */

void i8042_init(struct i8042 *kbc, run_stop_fn stop, void *vm)
{
	memset(kbc, 0, sizeof(*kbc));
	kbc->config = 0x45; /* translate, system flag, keyboard interrupt */
	kbc->stop = stop;
	kbc->vm = vm;
}

static void queue_reply(struct i8042 *kbc, uint8_t byte)
{
	if (kbc->out_count < sizeof(kbc->out))
		kbc->out[kbc->out_count++] = byte;
}

static void reset(struct i8042 *kbc)
{
	kbc->stop(kbc->vm, RUN_END_RESET, 0, "i8042 reset line");
}

static void command(struct i8042 *kbc, uint8_t cmd)
{
	switch (cmd) {
	case CMD_READ_CONFIG:
		queue_reply(kbc, kbc->config);
		break;
	case CMD_WRITE_CONFIG:
	case CMD_WRITE_OUTPUT_PORT:
		kbc->pending_cmd = cmd;
		break;
	case CMD_SELF_TEST:
		queue_reply(kbc, SELF_TEST_OK);
		break;
	case CMD_KBD_TEST:
	case CMD_AUX_TEST:
		queue_reply(kbc, PORT_TEST_OK);
		break;
	/* Nothing is attached either way, but the configuration byte shows
	 * the setting, as Linux's driver checks when it probes. */
	case CMD_KBD_DISABLE:
		kbc->config |= CONFIG_KBD_DISABLED;
		break;
	case CMD_KBD_ENABLE:
		kbc->config &= (uint8_t)~CONFIG_KBD_DISABLED;
		break;
	case CMD_AUX_DISABLE:
		kbc->config |= CONFIG_AUX_DISABLED;
		break;
	case CMD_AUX_ENABLE:
		kbc->config &= (uint8_t)~CONFIG_AUX_DISABLED;
		break;
	case PC_I8042_CMD_RESET:
		reset(kbc);
		break;
	default:
		break;
	}
}

void i8042_cmd_io(void *opaque, uint64_t offset, uint8_t *data, uint32_t len, bool is_write)
{
	struct i8042 *kbc = opaque;

	(void)offset;
	if (is_write) {
		command(kbc, data[0]);
		return;
	}
	memset(data, 0, len);
	data[0] = STATUS_SYSFLAG | STATUS_UNLOCKED | (kbc->pending_cmd ? STATUS_CMD : 0) |
		  (kbc->out_count ? STATUS_OBF : 0);
}

void i8042_data_io(void *opaque, uint64_t offset, uint8_t *data, uint32_t len, bool is_write)
{
	struct i8042 *kbc = opaque;

	(void)offset;
	if (!is_write) {
		memset(data, 0, len);
		if (kbc->out_count) {
			data[0] = kbc->out[0];
			memmove(kbc->out, kbc->out + 1, --kbc->out_count);
		}
		return;
	}
	switch (kbc->pending_cmd) {
	case CMD_WRITE_CONFIG:
		kbc->config = data[0];
		break;
	case CMD_WRITE_OUTPUT_PORT:
		if (!(data[0] & OUTPUT_PORT_RESET_BIT))
			reset(kbc);
		break;
	default:
		break; /* bytes for a keyboard that is not there */
	}
	kbc->pending_cmd = 0;
}
