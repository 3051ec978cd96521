/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reading capture files. The parser takes Ethernet frames; Linux cooked (SLL, SLL2) and raw-IP
 * captures are rewritten to Ethernet with a synthesised 14-byte header so the same parser and
 * the same offsets apply (the ICRC does not cover layer 2, so nothing is lost).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "droce_pcap.h"

#define ETH_HDR_LEN 14
/* LINKTYPE_LINUX_SLL: pkttype, hatype, halen, addr[8], protocol */
#define SLL_HDR_LEN 16
/* LINKTYPE_LINUX_SLL2: protocol, resv, ifindex, hatype, pkttype, halen, addr[8] */
#define SLL2_HDR_LEN 20

#ifndef DLT_IPV4
#define DLT_IPV4 228
#endif
#ifndef DLT_IPV6
#define DLT_IPV6 229
#endif
#ifndef DLT_LINUX_SLL2
#define DLT_LINUX_SLL2 276
#endif

static bool
dlt_supported(int dlt)
{
	switch (dlt) {
	case DLT_EN10MB:
	case DLT_LINUX_SLL:
	case DLT_LINUX_SLL2:
	case DLT_RAW:
	case DLT_IPV4:
	case DLT_IPV6:
		return true;
	default:
		return false;
	}
}

int
droce_pcap_open(struct droce_pcap_in *in, const char *path)
{
	FILE *fp;

	/* fopen first: its errno names the cause plainly (missing, permission). "-" is stdin,
	 * for `tcpdump -w - | droce-pcap decode -`. */
	fp = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	if (fp == NULL) {
		memset(in, 0, sizeof(*in));
		fprintf(stderr, "droce-pcap: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return droce_pcap_open_stream(in, fp, path);
}

int
droce_pcap_open_stream(struct droce_pcap_in *in, FILE *fp, const char *path)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	const char *name, *desc;

	memset(in, 0, sizeof(*in));
	in->path = path;
	errbuf[0] = '\0';
	in->pc = pcap_fopen_offline_with_tstamp_precision(fp, PCAP_TSTAMP_PRECISION_MICRO, errbuf);
	if (in->pc == NULL) {
		fclose(fp); /* libpcap leaves the stream to the caller on failure */
		fprintf(stderr, "droce-pcap: %s: not a readable capture: %s\n", path,
			errbuf[0] != '\0' ? errbuf : "unknown error");
		return -1;
	}
	in->dlt = pcap_datalink(in->pc);
	if (!dlt_supported(in->dlt)) {
		name = pcap_datalink_val_to_name(in->dlt);
		desc = pcap_datalink_val_to_description(in->dlt);
		fprintf(stderr,
			"droce-pcap: %s: link type %d (%s, %s) not supported; "
			"need Ethernet, Linux cooked (SLL, SLL2) or raw IP\n",
			path, in->dlt, name != NULL ? name : "unknown",
			desc != NULL ? desc : "no description");
		droce_pcap_close(in);
		return -1;
	}
	if (in->dlt != DLT_EN10MB) {
		in->buf = malloc(DROCE_PCAP_FRAME_MAX);
		if (in->buf == NULL) {
			fprintf(stderr, "droce-pcap: %s: out of memory\n", path);
			droce_pcap_close(in);
			return -1;
		}
	}
	return 0;
}

/* Lay an Ethernet header with this EtherType (and source MAC, if there is one) before l3. */
static void
to_eth(struct droce_pcap_in *in, struct droce_pcap_frame *f, const uint8_t *smac, uint16_t etype,
       const uint8_t *l3, uint32_t l3_len, uint32_t dropped_hdr)
{
	uint8_t *b = in->buf;

	if (l3_len > DROCE_PCAP_FRAME_MAX - ETH_HDR_LEN)
		l3_len = DROCE_PCAP_FRAME_MAX - ETH_HDR_LEN;
	memset(b, 0, ETH_HDR_LEN);
	if (smac != NULL)
		memcpy(b + 6, smac, 6);
	b[12] = (uint8_t)(etype >> 8);
	b[13] = (uint8_t)etype;
	memcpy(b + ETH_HDR_LEN, l3, l3_len);
	f->data = b;
	f->caplen = ETH_HDR_LEN + l3_len;
	f->wirelen = f->wirelen >= dropped_hdr ? f->wirelen - dropped_hdr + ETH_HDR_LEN : f->caplen;
}

/* Rewrite a non-Ethernet frame; a frame shorter than its link header becomes an empty one. */
static void
adapt(struct droce_pcap_in *in, struct droce_pcap_frame *f, const uint8_t *d, uint32_t caplen)
{
	uint16_t etype;

	switch (in->dlt) {
	case DLT_LINUX_SLL:
		if (caplen < SLL_HDR_LEN)
			break;
		etype = (uint16_t)(d[14] << 8 | d[15]);
		to_eth(in, f, (d[4] == 0 && d[5] == 6) ? d + 6 : NULL, etype, d + SLL_HDR_LEN,
		       caplen - SLL_HDR_LEN, SLL_HDR_LEN);
		return;
	case DLT_LINUX_SLL2:
		if (caplen < SLL2_HDR_LEN)
			break;
		etype = (uint16_t)(d[0] << 8 | d[1]);
		to_eth(in, f, d[11] == 6 ? d + 12 : NULL, etype, d + SLL2_HDR_LEN,
		       caplen - SLL2_HDR_LEN, SLL2_HDR_LEN);
		return;
	default: /* raw IP: the version nibble says which */
		etype = 0;
		if (caplen > 0 && (d[0] >> 4) == 4)
			etype = 0x0800;
		else if (caplen > 0 && (d[0] >> 4) == 6)
			etype = 0x86DD;
		to_eth(in, f, NULL, etype, d, caplen, 0);
		return;
	}
	f->data = in->buf;
	f->caplen = 0;
}

int
droce_pcap_next(struct droce_pcap_in *in, struct droce_pcap_frame *f)
{
	struct pcap_pkthdr *h;
	const u_char *d;
	int rc;

	rc = pcap_next_ex(in->pc, &h, &d);
	if (rc == PCAP_ERROR_BREAK)
		return 0;
	if (rc != 1) {
		/* A savefile read fails only on a short read or an I/O error mid-record. */
		fflush(stdout); /* keep the error after the packets printed before it */
		fprintf(stderr, "droce-pcap: %s: unreadable after packet %llu: %s\n", in->path,
			(unsigned long long)in->n, pcap_geterr(in->pc));
		return -1;
	}
	in->n++;
	f->ts = h->ts;
	f->wirelen = h->len;
	if (in->dlt == DLT_EN10MB) {
		f->data = d;
		f->caplen = h->caplen;
	} else {
		adapt(in, f, d, h->caplen);
	}
	return 1;
}

void
droce_pcap_close(struct droce_pcap_in *in)
{
	if (in->pc != NULL)
		pcap_close(in->pc);
	free(in->buf);
	in->pc = NULL;
	in->buf = NULL;
}
