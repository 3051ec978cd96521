/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for droce-pcap's reader (tools/droce-pcap): the input is a capture file
 * (libpcap reads it from memory); every frame it yields, of any supported link type, is parsed
 * and printed as text and as JSON, as `droce-pcap decode` does, to /dev/null.
 */
#define _GNU_SOURCE /* fmemopen */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "droce_pcap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *sink;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct droce_pcap_frame f;
	struct droce_pcap_in in;
	struct droce_pcap_rec r;
	struct timeval first = { 0, 0 };
	FILE *fp;

	if (sink == NULL)
		sink = fopen("/dev/null", "w");
	if (size == 0 || sink == NULL)
		return 0;
	fp = fmemopen((void *)(uintptr_t)data, size, "rb");
	if (fp == NULL)
		return 0;
	if (droce_pcap_open_stream(&in, fp, "fuzz") < 0)
		return 0;
	while (droce_pcap_next(&in, &f) == 1) {
		droce_pcap_rec_parse(&r, &f, in.n, &first);
		droce_pcap_text(sink, &r);
		droce_pcap_json(sink, &r);
	}
	droce_pcap_close(&in);
	return 0;
}
