// SPDX-License-Identifier: MIT
#include "arch/x86/hw/pc_devices.h"

#include <stdlib.h>

#include "arch/x86/pc_ports.h"
#include "earlytrace/abi.h"
#include "vmm/kvm/iobus.h"
#include "vmm/util/error.h"

static void com1_irq(void *ctx, int level)
{
	vm_set_irq_line(ctx, PC_IRQ_COM1, level);
}

int arch_devices_attach(struct arch_devices **out, struct vm *vm, struct serial8250 *console,
			int console_fd)
{
	struct arch_devices *pc = calloc(1, sizeof(*pc));

	*out = pc;
	if (!pc)
		return et_error("out of memory");
	pc->com1 = console;
	serial8250_init(pc->com1, console_fd, com1_irq, vm);
	i8042_init(&pc->kbc, vm_request_stop_detail, vm);
	pc->debug_exit = (struct debug_exit){ .stop = vm_request_stop_detail, .vm = vm };
	pc->acpi_sleep = (struct acpi_sleep){ .stop = vm_request_stop_detail, .vm = vm };
	pc->reset_control = (struct reset_control){ .stop = vm_request_stop_detail, .vm = vm };

	if (iobus_register(&vm->bus, IOBUS_PIO, PC_PORT_COM1, SERIAL8250_NR_REGS,
			   serial8250_io, pc->com1, "com1") ||
	    iobus_register(&vm->bus, IOBUS_PIO, PC_PORT_I8042_DATA, 1, i8042_data_io, &pc->kbc,
			   "i8042") ||
	    iobus_register(&vm->bus, IOBUS_PIO, PC_PORT_I8042_CMD, 1, i8042_cmd_io, &pc->kbc,
			   "i8042") ||
	    iobus_register(&vm->bus, IOBUS_PIO, ET_PORT_DEBUG_EXIT, 4, debug_exit_io,
			   &pc->debug_exit, "debug-exit") ||
	    iobus_register(&vm->bus, IOBUS_PIO, PC_PORT_ACPI_SLEEP_CONTROL, 2, acpi_sleep_io,
			   &pc->acpi_sleep, "acpi-sleep") ||
	    iobus_register(&vm->bus, IOBUS_PIO, PC_PORT_RESET_CONTROL, 1, reset_control_io,
			   &pc->reset_control, "reset-control"))
		return -1;
	return 0;
}

void arch_devices_destroy(struct arch_devices *pc)
{
	if (!pc)
		return;
	if (pc->com1->set_irq) /* initialized */
		serial8250_destroy(pc->com1);
	free(pc);
}
