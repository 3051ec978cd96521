/* SPDX-License-Identifier: BSD-3-Clause */
/* droce-pcap command line: `decode [--json] FILE`, `verify FILE...`, `--help`. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "droce_pcap.h"

static const char usage_text[] =
	"Usage: droce-pcap decode [--json] FILE\n"
	"       droce-pcap verify FILE...\n"
	"       droce-pcap --help\n"
	"\n"
	"Decode or check RoCEv2 captures (pcap or pcapng; Ethernet, Linux cooked SLL/SLL2 or raw\n"
	"IP) with droce's own parser. FILE '-' reads standard input.\n"
	"\n"
	"decode   one line per packet: number, time since the first packet, addresses, UDP source\n"
	"         port, opcode, dest QP, PSN, flags, ECN, extension headers, payload length and\n"
	"         'icrc ok' or 'icrc BAD'; 'skipped (...)' for frames that are not RoCEv2 and\n"
	"         'BAD REASON: ...' for malformed ones; then a count per drop reason.\n"
	"  --json one JSON object per packet instead (keys: see tools/droce-pcap/README.md);\n"
	"         the summary then goes to stderr.\n"
	"verify   print FILE:N: REASON: description for every RoCEv2 packet that does not parse\n"
	"         or has a wrong ICRC, and a summary line per file.\n"
	"\n"
	"Exit status: 0 all good; 1 verify found a bad RoCEv2 packet; 2 usage error, or a file\n"
	"missing, unreadable, truncated, not a capture or of an unsupported link type.\n";

static int
usage_error(const char *what, const char *arg)
{
	fprintf(stderr, "droce-pcap: %s%s%s; try 'droce-pcap --help'\n", what,
		arg != NULL ? ": " : "", arg != NULL ? arg : "");
	return DROCE_PCAP_EXIT_ERR;
}

static bool
is_help(const char *a)
{
	return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0 || strcmp(a, "help") == 0;
}

static int
cmd_decode(int argc, char **argv)
{
	const char *file = NULL;
	bool json = false, opts = true;
	int i;

	for (i = 0; i < argc; i++) {
		if (opts && strcmp(argv[i], "--") == 0) {
			opts = false;
		} else if (opts && strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (opts && argv[i][0] == '-' && argv[i][1] != '\0') {
			return usage_error("decode: unknown option", argv[i]);
		} else if (file == NULL) {
			file = argv[i];
		} else {
			return usage_error("decode takes one FILE", NULL);
		}
	}
	if (file == NULL)
		return usage_error("decode needs a FILE", NULL);
	return droce_pcap_decode(file, json);
}

static int
cmd_verify(int argc, char **argv)
{
	int i, first = 0;

	if (argc > 0 && strcmp(argv[0], "--") == 0)
		first = 1;
	else
		for (i = 0; i < argc; i++)
			if (argv[i][0] == '-' && argv[i][1] != '\0')
				return usage_error("verify: unknown option", argv[i]);
	if (argc - first < 1)
		return usage_error("verify needs at least one FILE", NULL);
	return droce_pcap_verify(argv + first, argc - first);
}

int
main(int argc, char **argv)
{
	int rc;

	if (argc < 2)
		return usage_error("missing command (decode or verify)", NULL);
	if (is_help(argv[1]) || (argc > 2 && is_help(argv[2]))) {
		fputs(usage_text, stdout);
		return DROCE_PCAP_EXIT_OK;
	}
	if (strcmp(argv[1], "decode") == 0)
		rc = cmd_decode(argc - 2, argv + 2);
	else if (strcmp(argv[1], "verify") == 0)
		rc = cmd_verify(argc - 2, argv + 2);
	else
		return usage_error("unknown command", argv[1]);
	/* Output that could not be written (a full disk, a closed pipe) is a failure too. */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "droce-pcap: error writing standard output\n");
		return DROCE_PCAP_EXIT_ERR;
	}
	return rc;
}
