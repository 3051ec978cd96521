/* SPDX-License-Identifier: BSD-3-Clause */
/* Field formatting shared by the text and JSON printers. */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "droce_pcap.h"
#include "wire/droce_aeth.h"

void
droce_pcap_fmt_mac(char *out, const uint8_t m[6])
{
	snprintf(out, DROCE_PCAP_ADDR_LEN, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3],
		 m[4], m[5]);
}

/* inet_ntop writes IPv4-mapped GIDs as ::ffff:a.b.c.d, the form GID tables show. */
void
droce_pcap_fmt_gid(char *out, const uint8_t gid[16])
{
	if (inet_ntop(AF_INET6, gid, out, DROCE_PCAP_ADDR_LEN) == NULL)
		snprintf(out, DROCE_PCAP_ADDR_LEN, "?");
}

void
droce_pcap_fmt_ip(char *out, const struct droce_pkt *p, const uint8_t gid[16])
{
	if (p->ip_ver == 4 && inet_ntop(AF_INET, gid + 12, out, DROCE_PCAP_ADDR_LEN) != NULL)
		return;
	droce_pcap_fmt_gid(out, gid);
}

/* RFC 3168 5: the low two bits of the ToS / traffic class. */
const char *
droce_pcap_ecn_name(uint8_t tclass)
{
	static const char *const names[4] = { "Not-ECT", "ECT1", "ECT0", "CE" };

	return names[tclass & 3];
}

/* IBTA 9.7.5.2.8 table 45: end-to-end credit count by code; code 31 = credits not used. */
static const uint16_t credit_count[31] = {
	0,    1,    2,	  3,	4,    6,     8,	    12,	   16,	  24,	32,
	48,   64,   96,	  128,	192,  256,   384,   512,   768,	  1024, 1536,
	2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768,
};

/* IBTA 9.7.5.2.8 table 46: RNR NAK timer in units of 10 us by code; code 0 is the longest. */
static const uint32_t rnr_10us[32] = {
	65536, 1,    2,	   3,	 4,    6,     8,     12,    16,	   24,	  32,
	48,    64,   96,   128,	 192,  256,   384,   512,   768,   1024,  1536,
	2048,  3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
};

/* IBTA 9.7.5.2.4 table 44: NAK codes. */
static const char *const nak_names[] = {
	[DROCE_NAK_PSN_SEQ_ERR] = "PSN_SEQ_ERR",       [DROCE_NAK_INVALID_REQ] = "INVALID_REQ",
	[DROCE_NAK_REM_ACCESS_ERR] = "REM_ACCESS_ERR", [DROCE_NAK_REM_OP_ERR] = "REM_OP_ERR",
	[DROCE_NAK_INVALID_RD_REQ] = "INVALID_RD_REQ",
};

void
droce_pcap_fmt_aeth(char *out, size_t cap, uint8_t syn)
{
	unsigned int v = syn & DROCE_AETH_VALUE_MASK;
	uint32_t t;

	switch (syn & DROCE_AETH_TYPE_MASK) {
	case DROCE_AETH_TYPE_ACK:
		if (v == DROCE_AETH_CREDIT_INVALID)
			snprintf(out, cap, "ACK credits unlimited (code %u)", v);
		else
			snprintf(out, cap, "ACK credits %u (code %u)", credit_count[v], v);
		break;
	case DROCE_AETH_TYPE_RNR_NAK:
		t = rnr_10us[v];
		snprintf(out, cap, "RNR timer %u (%u.%02u ms)", v, t / 100, t % 100);
		break;
	case DROCE_AETH_TYPE_NAK:
		if (v < sizeof(nak_names) / sizeof(nak_names[0]))
			snprintf(out, cap, "NAK %s", nak_names[v]);
		else
			snprintf(out, cap, "NAK reserved code %u", v);
		break;
	default:
		snprintf(out, cap, "reserved syndrome 0x%02x", syn);
		break;
	}
}

void
droce_pcap_fmt_us(char *out, size_t cap, int64_t us)
{
	uint64_t a = us < 0 ? (uint64_t)0 - (uint64_t)us : (uint64_t)us;

	snprintf(out, cap, "%s%" PRIu64 ".%06" PRIu64, us < 0 ? "-" : "", a / 1000000, a % 1000000);
}
