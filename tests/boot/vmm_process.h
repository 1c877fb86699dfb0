// SPDX-License-Identifier: MIT
// Runs the earlytrace binary as a user would and collects what it printed.
#ifndef TESTS_BOOT_VMM_PROCESS_H
#define TESTS_BOOT_VMM_PROCESS_H

#include <string>
#include <vector>

struct VmmResult {
	int status = -1;	 // exit status, or 128 + signal if killed
	bool timed_out = false;	 // the harness had to kill it
	std::string out, err;
};

struct VmmRun {
	std::vector<std::string> args;	   // after the program name
	std::vector<std::string> env;	   // extra NAME=VALUE entries
	double harness_timeout_s = 60;	   // safety net; tests set --timeout themselves
	std::string wait_for;		   // when this appears on stdout...
	int send_signal = 0;		   // ...send this signal
	double signal_delay_s = 0;	   // ...this long after it appeared
	bool as_nobody = false;		   // drop root first (uid/gid 65534)
	long fsize_limit = 0;		   // RLIMIT_FSIZE in bytes; 0: none
	std::string stdout_path;	   // its stdout goes to this file (e.g. /dev/full),
					   // not to res.out
	bool close_stdout = false;	   // when wait_for appears: close our end of its
					   // stdout (a reader that went away), no signal
};

// The child starts with every signal at its default action and none
// blocked, whatever the test process has: the VMM must cope with SIGPIPE,
// SIGXFSZ and the rest as a shell would hand them to it.

VmmResult run_vmm(const VmmRun &run);

// Convenience: run with arguments only.
VmmResult run_vmm(std::vector<std::string> args);

std::string image(const char *arch);
std::string temp_path(const std::string &name);

#endif // TESTS_BOOT_VMM_PROCESS_H
