/* SPDX-License-Identifier: MIT */
#ifndef VMM_CMD_RUN_H
#define VMM_CMD_RUN_H

/* `earlytrace run`: boots a kernel and returns the process exit status. */
int cmd_run(int argc, char **argv);

#endif /* VMM_CMD_RUN_H */
