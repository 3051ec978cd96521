/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `droce-pcap verify`: every RoCEv2 packet must parse and carry the right ICRC; frames that are
 * not RoCEv2 at all are counted as skipped. One line per bad packet, one summary per file.
 */
#include <inttypes.h>
#include <stdio.h>

#include "droce_pcap.h"

static int
verify_one(const char *path)
{
	uint64_t roce = 0, skipped = 0, bad = 0;
	struct droce_pcap_frame f;
	struct droce_pcap_in in;
	struct droce_pcap_rec r;
	struct timeval first = { 0, 0 };
	int rc;

	if (droce_pcap_open(&in, path) < 0)
		return DROCE_PCAP_EXIT_ERR;
	while ((rc = droce_pcap_next(&in, &f)) == 1) {
		droce_pcap_rec_parse(&r, &f, in.n, &first);
		if (r.cls == DROCE_DROP_CLASS_NOT_ROCE) {
			skipped++;
			continue;
		}
		roce++;
		if (r.reason == DROCE_DROP_NONE)
			continue;
		bad++;
		printf("%s:%" PRIu64 ": %s: %s", path, r.n, droce_drop_name(r.reason),
		       droce_drop_desc(r.reason));
		if (r.caplen < r.wirelen)
			printf(" (captured %u of %u bytes)", r.caplen, r.wirelen);
		putchar('\n');
	}
	droce_pcap_close(&in);
	/* The error line printed by droce_pcap_next() stands for the file. */
	if (rc < 0)
		return DROCE_PCAP_EXIT_ERR;
	printf("%s: %" PRIu64 " packets, %" PRIu64 " RoCE, %" PRIu64 " skipped, %" PRIu64 " bad\n",
	       path, in.n, roce, skipped, bad);
	return bad != 0 ? DROCE_PCAP_EXIT_BAD : DROCE_PCAP_EXIT_OK;
}

int
droce_pcap_verify(char *const *paths, int npaths)
{
	int i, rc, worst = DROCE_PCAP_EXIT_OK;

	/* Every file is checked even after a failure; the worst outcome is the exit code. */
	for (i = 0; i < npaths; i++) {
		rc = verify_one(paths[i]);
		if (rc > worst)
			worst = rc;
	}
	return worst;
}
