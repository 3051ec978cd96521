/* SPDX-License-Identifier: BSD-3-Clause */
/* `droce-pcap decode`: every packet of one file, then a count per drop reason. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "droce_pcap.h"

/*
 * Totals and one line per reason that occurred. Lines start with '#' so that a reader of the
 * packet lines can tell them apart; with --json they go to stderr and stdout stays pure JSON.
 */
static void
summary(FILE *o, const struct droce_drop_stats *st, uint64_t n)
{
	uint64_t roce = 0, skipped = 0, bad = 0;
	unsigned int i;

	for (i = 0; i < DROCE_DROP_MAX; i++) {
		if (droce_drop_class(i) == DROCE_DROP_CLASS_NOT_ROCE)
			skipped += st->cnt[i];
		else
			roce += st->cnt[i];
		if (droce_drop_class(i) == DROCE_DROP_CLASS_MALFORMED)
			bad += st->cnt[i];
	}
	fprintf(o,
		"# %" PRIu64 " packets: %" PRIu64 " RoCE (%" PRIu64 " ok, %" PRIu64
		" bad), %" PRIu64 " skipped\n",
		n, roce, st->cnt[DROCE_DROP_NONE], bad, skipped);
	for (i = 0; i < DROCE_DROP_MAX; i++)
		if (st->cnt[i] != 0)
			fprintf(o, "#   %-14s %10" PRIu64 "  %s\n", droce_drop_name(i), st->cnt[i],
				droce_drop_desc(i));
}

int
droce_pcap_decode(const char *path, bool json)
{
	struct droce_drop_stats st;
	struct droce_pcap_frame f;
	struct droce_pcap_in in;
	struct droce_pcap_rec r;
	struct timeval first = { 0, 0 };
	int rc, ret = DROCE_PCAP_EXIT_OK;

	if (droce_pcap_open(&in, path) < 0)
		return DROCE_PCAP_EXIT_ERR;
	memset(&st, 0, sizeof(st));
	while ((rc = droce_pcap_next(&in, &f)) == 1) {
		droce_pcap_rec_parse(&r, &f, in.n, &first);
		st.cnt[r.reason]++;
		if (json)
			droce_pcap_json(stdout, &r);
		else
			droce_pcap_text(stdout, &r);
	}
	/* A read error ends the output with its own single line: no summary of a partial file. */
	if (rc < 0)
		ret = DROCE_PCAP_EXIT_ERR;
	else
		summary(json ? stderr : stdout, &st, in.n);
	droce_pcap_close(&in);
	return ret;
}
