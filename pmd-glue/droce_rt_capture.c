/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Capture: every frame the loop receives (before classification) and every frame it queues for
 * Tx, to a pcap file with nanosecond timestamps: records are copied into a 1 MiB buffer that one
 * write() empties when full and at close (no stdio, no libpcap: tens of ns a frame). A debugging
 * aid: off unless `capture` names a file, and bounded by capture_max_kb (frames past the bound are counted in rt.capture_skipped).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_spinlock.h>

#include "droce_rt_priv.h"

enum {
	CAP_SNAPLEN = 65535,
	CAP_RECORD_HDR = 16, /* pcap per-record header */
	CAP_FILE_HDR = 24,
	CAP_BUF = 1 << 20, /* one write() per MiB of frames */
	CAP_LINKTYPE_ETHERNET = 1,
};

/* The pcap file format (tcpdump.org pcap-savefile), nanosecond variant. */
static const uint32_t cap_magic_ns = 0xa1b23c4d;

struct droce_rt_capture {
	rte_spinlock_t lock; /* taken when several poll lcores capture */
	int fd;
	bool failed;	/* a write failed: stop writing, count the rest as skipped */
	uint32_t used;	/* bytes in buf */
	uint64_t bytes; /* file size once buf is written */
	uint64_t max_bytes;
	uint64_t wall_base_ns; /* realtime at runtime clock 0 */
	uint8_t buf[CAP_BUF];
};

/* Fields in host order: readers tell the byte order from the magic. */
static void
put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void
put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

static void
cap_write(struct droce_rt_capture *c)
{
	uint32_t off = 0;
	ssize_t n;

	while (off < c->used && !c->failed) {
		n = write(c->fd, c->buf + off, c->used - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			c->failed = true;
		else
			off += (uint32_t)n;
	}
	c->used = 0;
}

/* "%p" in the path becomes the process id: one config for two processes. */
int
droce_rt_expand_path(const char *in, char *out, size_t outlen)
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
	uint8_t *h;

	if (rt->cfg.capture[0] == '\0')
		return 0;
	if (droce_rt_expand_path(rt->cfg.capture, path, sizeof(path)) != 0) {
		snprintf(err, errlen, "capture path '%s' too long: shorten DROCE_CAPTURE",
			 rt->cfg.capture);
		return -ENAMETOOLONG;
	}
	c = calloc(1, sizeof(*c)); /* calloc touches the buffer now, not in the loop */
	if (c == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	memset(c->buf, 0, sizeof(c->buf));
	rte_spinlock_init(&c->lock);
	c->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (c->fd < 0) {
		snprintf(err, errlen, "capture file %s: %s: fix DROCE_CAPTURE (capture = ...)",
			 path, strerror(errno));
		free(c);
		return -EIO;
	}
	h = c->buf;
	put32(h, cap_magic_ns);
	put16(h + 4, 2); /* version 2.4; thiszone and sigfigs stay 0 */
	put16(h + 6, 4);
	put32(h + 16, CAP_SNAPLEN);
	put32(h + 20, CAP_LINKTYPE_ETHERNET);
	c->used = CAP_FILE_HDR;
	c->bytes = CAP_FILE_HDR;
	c->max_bytes = (uint64_t)rt->cfg.capture_max_kb << 10;
	clock_gettime(CLOCK_REALTIME, &ts);
	c->wall_base_ns =
		(uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec - droce_rt_clock(rt);
	rt->cap = c;
	return 0;
}

void
droce_rt_capture_frame(struct droce_rt_shard *s, const uint8_t *frame, uint32_t caplen,
		       uint32_t len)
{
	struct droce_rt_capture *c = s->rt->cap;
	bool lock = s->rt->started && s->rt->nb_shards > 1;
	uint64_t ns;
	uint8_t *r;

	if (caplen > CAP_SNAPLEN)
		caplen = CAP_SNAPLEN;
	/* Several poll lcores share the file: a debugging aid may take a lock. */
	if (lock)
		rte_spinlock_lock(&c->lock);
	if (c->failed || c->bytes + CAP_RECORD_HDR + caplen > c->max_bytes) {
		s->st.capture_skipped++;
		if (lock)
			rte_spinlock_unlock(&c->lock);
		return;
	}
	if (c->used + CAP_RECORD_HDR + caplen > CAP_BUF)
		cap_write(c);
	/* The iteration's clock: one TSC read per loop pass, the time the engine saw. */
	ns = c->wall_base_ns + s->now;
	r = c->buf + c->used;
	put32(r, (uint32_t)(ns / 1000000000u));
	put32(r + 4, (uint32_t)(ns % 1000000000u));
	put32(r + 8, caplen);
	put32(r + 12, len);
	memcpy(r + CAP_RECORD_HDR, frame, caplen);
	c->used += CAP_RECORD_HDR + caplen;
	c->bytes += CAP_RECORD_HDR + caplen;
	s->st.capture_pkts++;
	if (lock)
		rte_spinlock_unlock(&c->lock);
}

void
droce_rt_capture_close(struct droce_rt *rt)
{
	struct droce_rt_capture *c = rt->cap;

	if (c == NULL)
		return;
	rt->cap = NULL;
	cap_write(c);
	close(c->fd);
	free(c);
}
