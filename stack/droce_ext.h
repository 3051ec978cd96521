/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_EXT_H
#define DROCE_EXT_H

/* Engine calls beyond the verbs-like API: counters, congestion control, notification counts. */
#include <stdint.h>

#include "droce_ackpol.h"
#include "droce_cc.h"
#include "droce_counters.h"
#include "droce_verbs.h"

/* Completion events raised on this CQ by droce_cq_req_notify() arming (verbs: the channel). */
uint64_t droce_cq_events(const struct droce_cq *cq);
/* Replace a QP's congestion-control algorithm (NULL: "none") and its parameters (NULL: the
 * algorithm's defaults for the device's link_bps); its state is re-initialised. -EINVAL for
 * parameters the algorithm refuses (its check op). */
int droce_qp_set_cc(struct droce_qp *qp, const struct droce_cc_ops *ops,
		    const union droce_cc_params *p, uint64_t now_ns);
/* The algorithm QPs created from now on start with (NULL: "none"; droce_cc_dcqcn, or one
 * droce_dev_cc_find() names) and its parameters (NULL: its defaults for link_bps), unless
 * their droce_qp_init_attr names others. -EINVAL for parameters the algorithm refuses. */
int droce_dev_set_cc(struct droce_dev *dev, const struct droce_cc_ops *ops,
		     const union droce_cc_params *p);
/* The device's default algorithm and (p not NULL) its parameters. */
const struct droce_cc_ops *droce_dev_cc(const struct droce_dev *dev,
					const union droce_cc_params **p);
/* The device's registry of algorithms beyond the built-in ones (droce_cc_register()), which
 * struct droce_qp_init_attr's cc and droce_dev_cc_find() name. */
int droce_dev_cc_register(struct droce_dev *dev, const struct droce_cc_ops *ops);
const struct droce_cc_ops *droce_dev_cc_find(const struct droce_dev *dev, const char *name);
/* A QP's algorithm, and its state in *state when state is not NULL (NULL: no such QP). */
const struct droce_cc_ops *droce_qp_cc(const struct droce_qp *qp,
				       const struct droce_cc_state **state);
/* The device's QPs in table order: the first after prev (NULL: the first one), NULL after the
 * last. A scan of the QP table, for telemetry and tools, not the data path. */
struct droce_qp *droce_dev_qp_next(struct droce_dev *dev, const struct droce_qp *prev);
/* The path MTU the device's Ethernet MTU allows (enum droce_mtu). */
enum droce_mtu droce_dev_active_mtu(const struct droce_dev *dev);
/* Checks the NIC already made on received frames (enum droce_parse_flags: the IPv4 header
 * checksum, the ICRC); the engine then skips them. Default 0: everything is checked. */
int droce_dev_set_rx_offload(struct droce_dev *dev, unsigned int parse_flags);
/* DCQCN notification point: at most one CNP per QP per interval (default 4 us, as mlx5). */
int droce_dev_set_cnp_interval(struct droce_dev *dev, uint64_t ns);
/*
 * Replace the GID table (n entries, n <= DROCE_MAX_GIDS; an all-zero entry is an empty slot:
 * no source for a new QP, no destination received). The runtime's host-address mode follows
 * the interface's addresses this way; indices keep their meaning, so QPs already connected
 * keep their addresses. 0 or -EINVAL.
 */
int droce_dev_set_gids(struct droce_dev *dev, const uint8_t (*gids)[16], unsigned int n);
/*
 * Frames a QP with work sends in its turn of the transmit round robin before the next one's.
 * Several keep its state in cache while they go and reach the responder together, which
 * answers them with one ACK: frame by frame, 1,000 QPs of 16 WRITEs each drew an ACK for every
 * two. The turn ends early when the QP runs out of work, window or rate. The default is a
 * poll loop's burst (32 frames, 32 KiB at path MTU 1024); 1 interleaves QPs frame by frame.
 * 1..DROCE_TX_QUANTUM_MAX, else -EINVAL.
 */
#define DROCE_TX_QUANTUM     32
#define DROCE_TX_QUANTUM_MAX 1024
int droce_dev_set_tx_quantum(struct droce_dev *dev, unsigned int frames);
/* Asynchronous events lost because the queue was full. */
uint64_t droce_dev_events_lost(const struct droce_dev *dev);

/*
 * Loss recovery of RC requesters on the standard wire (stack/droce_inflight.c), so against any
 * peer. A cap on the packets (PSNs) sent and not yet acknowledged keeps a go-back-N rewind to
 * about one path's worth; an AckReq every quarter of the cap keeps the window moving. An RTO
 * from measured round trips (RFC 6298, Karn's rule) resends a lost tail long before the IBTA
 * local ACK timeout (4.096 us x 2^timeout, its upper bound); only that timeout spends retry_cnt.
 */
#define DROCE_INFLIGHT_CAP_BDP UINT32_MAX /* cap: path_bps x rtt_ns over the path MTU */
/* cap: path_bps x the QP's smoothed round trip over the path MTU, at least the BDP of rtt_ns
 * (also what it starts at, before the first sample) */
#define DROCE_INFLIGHT_CAP_AUTO	  (UINT32_MAX - 1)
#define DROCE_INFLIGHT_RTT_NS	  10000 /* default round trip of the BDP cap */
#define DROCE_INFLIGHT_RTO_MIN_NS 20000 /* default floor of the RTO */

struct droce_inflight_cfg {
	uint32_t cap;	   /* packets; 0: no cap (the engine's 1024-PSN window); _CAP_BDP, _AUTO */
	uint64_t path_bps; /* the BDP's rate; 0: the device's link_bps (100 Gbit/s unknown) */
	uint32_t rtt_ns;   /* the BDP's round trip (_AUTO's floor); 0: DROCE_INFLIGHT_RTT_NS */
	bool rto;	   /* resend after an RTO from measured RTT (else the local ACK timeout) */
	uint32_t rto_min_ns; /* the RTO's floor */
};

/* Defaults: cap from the BDP, RTO on, floor DROCE_INFLIGHT_RTO_MIN_NS. */
void droce_inflight_defaults(struct droce_inflight_cfg *c);
/* The settings QPs created from now on start with; -EINVAL for NULL. */
int droce_dev_set_inflight(struct droce_dev *dev, const struct droce_inflight_cfg *c);
const struct droce_inflight_cfg *droce_dev_inflight(const struct droce_dev *dev);
/* One QP's settings (they apply from its next packet; the RTT estimate is kept). */
int droce_qp_set_inflight(struct droce_qp *qp, const struct droce_inflight_cfg *c);

struct droce_inflight_info {
	uint32_t cap; /* packets; 0: none */
	uint32_t ackreq_every;
	uint64_t srtt_ns; /* 0: no sample yet */
	uint64_t rttvar_ns;
	uint64_t rto_ns;  /* what an early resend waits now (backoff included); 0: none */
	uint64_t ibta_ns; /* the local ACK timeout, the RTO's bound (UINT64_MAX: timeout 0) */
};
int droce_qp_inflight(const struct droce_qp *qp, struct droce_inflight_info *info);

/* Loss recovery of RC QPs. Go-back-N is standard RoCEv2 and the default. Selective repeat
 * (stack/droce_sr.h, wire format stack/wire/droce_srh.h) is droce's own and works only when both
 * ends of the connection use it: set it on both, before the QP leaves INIT. */
enum droce_recovery {
	DROCE_RECOVERY_GBN,
	DROCE_RECOVERY_SR,
};
/* A QP's mode (RC only; in RESET or INIT): 0, -EINVAL (another state or type), -ENOMEM. */
int droce_qp_set_recovery(struct droce_qp *qp, enum droce_recovery mode);
/* The mode RC QPs created from now on start with. */
int droce_dev_set_recovery(struct droce_dev *dev, enum droce_recovery mode);
enum droce_recovery droce_qp_recovery(const struct droce_qp *qp);

#endif /* DROCE_EXT_H */
