/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Capture: every frame the loop receives (before classification) and every frame it queues for
 * Tx, to a pcap file with nanosecond timestamps, written by libpcap's dumper (stdio-buffered,
 * flushed at close). A debugging aid: off unless `capture` names a file, and bounded by
 * capture_max_kb (frames past the bound are counted in rt.capture_skipped).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include "droce_rt_priv.h"

enum {
	CAP_SNAPLEN = 65535,
	CAP_RECORD_HDR = 16,	/* pcap per-record header */
	CAP_FILE_HDR = 24,
};

struct droce_rt_capture {
	pcap_t *dead;
	pcap_dumper_t *dumper;
	uint64_t bytes;
	uint64_t max_bytes;
	uint64_t wall_base_ns;	/* realtime at runtime clock 0 */
};

/* "%p" in the path becomes the process id: one config for two processes. */
static int
expand_path(const char *in, char *out, size_t outlen)
{
	size_t o = 0;
	int n;

	for (; *in != '\0'; in++) {
		if (in[0] == '%' && in[1] == 'p') {
			n = snprintf(out + o, outlen - o, "%ld", (long)getpid());
			if (n < 0 || (size_t)n >= outlen - o)
				return -ENAMETOOLONG;
			o += (size_t)n;
			in++;
			continue;
		}
		if (o + 1 >= outlen)
			return -ENAMETOOLONG;
		out[o++] = *in;
	}
	out[o] = '\0';
	return 0;
}

int
droce_rt_capture_open(struct droce_rt *rt, char *err, size_t errlen)
{
	struct droce_rt_capture *c;
	struct timespec ts;
	char path[512];

	if (rt->cfg.capture[0] == '\0')
		return 0;
	if (expand_path(rt->cfg.capture, path, sizeof(path)) != 0) {
		snprintf(err, errlen, "capture path '%s' too long: shorten DROCE_CAPTURE",
			 rt->cfg.capture);
		return -ENAMETOOLONG;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c->dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, CAP_SNAPLEN,
						       PCAP_TSTAMP_PRECISION_NANO);
	if (c->dead == NULL) {
		free(c);
		snprintf(err, errlen, "capture: libpcap cannot open a dead handle");
		return -ENOMEM;
	}
	c->dumper = pcap_dump_open(c->dead, path);
	if (c->dumper == NULL) {
		snprintf(err, errlen, "capture file %s: %s: fix DROCE_CAPTURE (capture = ...)", path,
			 pcap_geterr(c->dead));
		pcap_close(c->dead);
		free(c);
		return -EIO;
	}
	c->max_bytes = (uint64_t)rt->cfg.capture_max_kb << 10;
	c->bytes = CAP_FILE_HDR;
	clock_gettime(CLOCK_REALTIME, &ts);
	c->wall_base_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec -
			  droce_rt_clock(rt);
	rt->cap = c;
	return 0;
}

void
droce_rt_capture_frame(struct droce_rt *rt, const uint8_t *frame, uint32_t caplen, uint32_t len)
{
	struct droce_rt_capture *c = rt->cap;
	struct pcap_pkthdr h;
	uint64_t ns;

	if (caplen > CAP_SNAPLEN)
		caplen = CAP_SNAPLEN;
	if (c->bytes + CAP_RECORD_HDR + caplen > c->max_bytes) {
		rt->st.capture_skipped++;
		return;
	}
	/* The iteration's clock: one TSC read per loop pass, the time the engine saw. */
	ns = c->wall_base_ns + rt->now;
	h.ts.tv_sec = (time_t)(ns / 1000000000u);
	h.ts.tv_usec = (suseconds_t)(ns % 1000000000u);	/* nanoseconds: a NANO dumper */
	h.caplen = caplen;
	h.len = len;
	pcap_dump((u_char *)c->dumper, &h, frame);
	c->bytes += CAP_RECORD_HDR + caplen;
	rt->st.capture_pkts++;
}

void
droce_rt_capture_close(struct droce_rt *rt)
{
	struct droce_rt_capture *c = rt->cap;

	if (c == NULL)
		return;
	rt->cap = NULL;
	pcap_dump_flush(c->dumper);
	pcap_dump_close(c->dumper);
	pcap_close(c->dead);
	free(c);
}
