/* SPDX-License-Identifier: MIT */
#ifndef VMM_CMD_DOMAIN_XML_H
#define VMM_CMD_DOMAIN_XML_H

#include "vmm/cmd/cli.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const char cli_domain_xml_usage[];

struct domain_xml_options {
	struct run_options run;
	const char *name;   /* --name, or NULL: derived */
	const char *output; /* --output FILE, or NULL: standard output */
};

/* Parses `domain-xml`'s options (argv[0] is "domain-xml"). 0, or -1 with an
 * error. */
int cli_parse_domain_xml(int argc, char **argv, struct domain_xml_options *opts);

/* `earlytrace domain-xml`: returns the exit status. */
int cmd_domain_xml(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif /* VMM_CMD_DOMAIN_XML_H */
