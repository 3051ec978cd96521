/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_ACKPOL_H
#define DROCE_ACKPOL_H

/*
 * Transmit policy for the responder's ACKs. An ACK answers every request up to its PSN (IBTA
 * 9.7.5.1: a responder may coalesce the acknowledgements of several requests into one; NAKs,
 * READ and atomic responses are never coalesced), so a pure ACK may wait a little for company:
 * the frames the application posts next (a ping-pong's answer), which it then rides with in one
 * transmit batch, before or after them. The ACK is not built while it waits: the engine hands
 * the caller's tx_send only frames that may go now, in the order to send them.
 */
#include <stdbool.h>
#include <stdint.h>

struct droce_dev;
struct droce_qp;

enum droce_ack_order {
	/* A waiting ACK leads the frames it rides with: the peer, polling for the completion it
	 * brings, gets it and the answer in one receive burst. */
	DROCE_ACK_ORDER_FIFO,
	/* A waiting ACK follows them: the peer's next receive burst begins with the answer it
	 * waits for. Requests and ACKs run opposite ways of their QPs, each way keeps its order. */
	DROCE_ACK_ORDER_REQUESTS_FIRST,
};

struct droce_ack_policy {
	uint64_t delay_ns; /* the longest a pure ACK waits for other frames; 0: none waits */
	uint32_t coalesce; /* it goes once it answers this many AckReq requests; 0: no bound */
	enum droce_ack_order order;
};

/* The device's policy: its order, and the delay and bound of QPs without their own
 * (droce_qp_set_ack_policy). Default: delay 0 (every ACK leaves at once). -EINVAL for NULL. */
int droce_dev_set_ack_policy(struct droce_dev *dev, const struct droce_ack_policy *pol);
void droce_dev_ack_policy(const struct droce_dev *dev, struct droce_ack_policy *pol);
/* One QP's delay and bound (its order is the device's); NULL: the device's again. */
int droce_qp_set_ack_policy(struct droce_qp *qp, const struct droce_ack_policy *pol);

/*
 * Whether ACKs may wait now. A caller that drives the engine inline turns it on after the
 * droce_dev_process() that follows the application's step (the ACKs of what arrives next may
 * wait for the step after), and off before that call: the application had its turn, so the
 * next droce_dev_process() sends every waiting ACK with what it posted, in the policy's order
 * (droce_dev_next_deadline() says so). Off all the time (the default): no ACK waits. While on,
 * a held ACK goes with the next frames the device sends, or when its delay ends.
 */
void droce_dev_ack_hold(struct droce_dev *dev, bool on);
/* ACKs waiting now (each QP's waits as one frame). */
unsigned int droce_dev_acks_held(const struct droce_dev *dev);

#endif /* DROCE_ACKPOL_H */
