/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_PCAP_H
#define DROCE_PCAP_H

/*
 * droce-pcap: decode and verify RoCEv2 captures with the stack's own parser. Pieces: capture.c
 * reads frames (any supported link type, handed on as Ethernet), record.c parses one frame,
 * fmt.c formats fields, out_text.c and out_json.c print a record, decode.c and verify.c are the
 * two commands, main.c the command line.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/time.h>

#include <pcap/pcap.h>

#include "droce_pkt.h"

/* Exit codes shared by the commands. */
enum droce_pcap_exit {
	DROCE_PCAP_EXIT_OK = 0,
	DROCE_PCAP_EXIT_BAD = 1, /* verify: a RoCEv2 packet failed */
	DROCE_PCAP_EXIT_ERR = 2, /* usage, unreadable or unsupported file */
};

/* Largest frame handed on: libpcap's maximum snapshot length plus a synthesised header. */
#define DROCE_PCAP_FRAME_MAX (262144 + 64)

struct droce_pcap_in {
	pcap_t *pc;
	const char *path;
	int dlt;
	uint64_t n;   /* frames read so far */
	uint8_t *buf; /* DROCE_PCAP_FRAME_MAX bytes for frames rewritten to Ethernet */
};

/* One captured frame, as Ethernet. */
struct droce_pcap_frame {
	const uint8_t *data;
	uint32_t caplen;  /* bytes in data */
	uint32_t wirelen; /* bytes on the wire (more than caplen if snapped) */
	struct timeval ts;
};

/* Open a capture; on failure print one line naming the file and the cause, return -1. */
int droce_pcap_open(struct droce_pcap_in *in, const char *path);
/* The same on an open stream (a file, or memory for the fuzzer), closed with the capture or
 * on failure. */
int droce_pcap_open_stream(struct droce_pcap_in *in, FILE *fp, const char *path);
/* 1: *f holds the next frame; 0: end of file; -1: read error (truncated file), line printed. */
int droce_pcap_next(struct droce_pcap_in *in, struct droce_pcap_frame *f);
void droce_pcap_close(struct droce_pcap_in *in);

/*
 * How far droce_parse() filled struct droce_pkt before it stopped: it checks in wire order and
 * fills each layer's fields just before that layer's own checks, so the reason says which
 * fields are valid.
 */
enum droce_pcap_stage {
	DROCE_PCAP_ST_NONE,   /* nothing */
	DROCE_PCAP_ST_MAC,    /* dmac, smac */
	DROCE_PCAP_ST_L2,     /* + has_vlan, vlan_tci, l3_off */
	DROCE_PCAP_ST_IP,     /* + ip_ver, tclass, hop_limit, flow_label, ip_id, sgid, dgid */
	DROCE_PCAP_ST_L4,     /* + l4_off */
	DROCE_PCAP_ST_UDP,    /* + udp_sport, udp_csum */
	DROCE_PCAP_ST_BTHOFF, /* + bth_off */
	DROCE_PCAP_ST_BTH,    /* + BTH fields, icrc, frame_len */
	DROCE_PCAP_ST_ALL,    /* + pay_off, pay_len, the opcode's extension headers */
};

/* A frame and what the parser made of it. */
struct droce_pcap_rec {
	uint64_t n;	   /* 1-based packet number in its file */
	struct timeval ts; /* absolute capture time */
	int64_t rel_us;	   /* microseconds since the file's first packet */
	const uint8_t *frame;
	uint32_t caplen;
	uint32_t wirelen;
	enum droce_drop reason;
	enum droce_drop_class cls;
	enum droce_pcap_stage stage;
	bool icrc_ok; /* ICRC computed and right (false if not reached) */
	struct droce_pkt pkt;
};

/* Parse f into r (packet number n, times relative to *first, set from the first frame). */
void droce_pcap_rec_parse(struct droce_pcap_rec *r, const struct droce_pcap_frame *f, uint64_t n,
			  struct timeval *first);
enum droce_pcap_stage droce_pcap_stage_of(enum droce_drop reason);

/* Formatting helpers (fmt.c). */
#define DROCE_PCAP_ADDR_LEN 48
void droce_pcap_fmt_mac(char *out, const uint8_t mac[6]);
void droce_pcap_fmt_gid(char *out, const uint8_t gid[16]);
/* The IP address behind a GID: dotted quad for IPv4 packets, IPv6 text otherwise. */
void droce_pcap_fmt_ip(char *out, const struct droce_pkt *p, const uint8_t gid[16]);
const char *droce_pcap_ecn_name(uint8_t tclass);
/* AETH syndrome in words: "ACK credits 16 (code 8)", "RNR timer 14 (1.28 ms)", "NAK PSN_SEQ_ERR" */
void droce_pcap_fmt_aeth(char *out, size_t cap, uint8_t syn);
/* Seconds and microseconds, signed, as "s.uuuuuu". */
void droce_pcap_fmt_us(char *out, size_t cap, int64_t us);

/* Print one record as a text line or a JSON object line. */
void droce_pcap_text(FILE *o, const struct droce_pcap_rec *r);
void droce_pcap_json(FILE *o, const struct droce_pcap_rec *r);

/* The commands; each returns an enum droce_pcap_exit. */
int droce_pcap_decode(const char *path, bool json);
int droce_pcap_verify(char *const *paths, int npaths);

#endif /* DROCE_PCAP_H */
