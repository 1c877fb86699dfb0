/* SPDX-License-Identifier: MIT */
#ifndef VMM_VERSION_H
#define VMM_VERSION_H

#define EARLYTRACE_VERSION "0.1.0"

#endif /* VMM_VERSION_H */
