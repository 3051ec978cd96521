/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_RESP_H
#define DROCE_RESP_H

/* Responder steps shared by droce_resp.c (execution) and droce_resp_rx.c (per service type). */
#include <stdbool.h>
#include <stdint.h>

#include "droce_internal.h"

/* What a request step decided: the error states map one-to-one to a NAK (IBTA 9.7.5.2). */
enum droce_rst {
	RST_DONE,	    /* executed; ACK if asked */
	RST_QUIET,	    /* executed, no ACK (READ/atomic answer with data) */
	RST_RNR,	    /* no receive WQE: RNR NAK, nothing consumed (9.7.5.2.8) */
	RST_DROP,	    /* silently dropped */
	RST_ERR_OPSEQ,	    /* NAK invalid request (opcode sequence, IBTA 9.7.5.1.3) */
	RST_ERR_LENGTH,	    /* NAK invalid request; receive WQE LOC_LEN_ERR (9.7.5.1.x) */
	RST_ERR_RKEY,	    /* NAK remote access error (C9-86..88) */
	RST_ERR_LOCAL,	    /* NAK remote operational error (receive WQE LOC_PROT_ERR) */
	RST_ERR_ALIGN,	    /* NAK invalid request: atomic target not 8-aligned (9.4.5) */
	RST_ERR_QP_ACCESS,  /* NAK invalid request: the QP not enabled for it (9.7.5.2.2) */
	RST_ERR_INVALIDATE, /* NAK invalid request: the IETH's R_Key (10.6.7.2.x) */
	RST_ERR_RD_RES,	    /* NAK invalid request: READ/atomic past max_dest_rd_atomic */
};

void droce_resp_complete(struct droce_qp *qp, enum droce_wc_status st, const struct droce_pkt *p,
			 uint32_t byte_len, enum droce_wc_opcode opc);
void droce_resp_fatal(struct droce_qp *qp, enum droce_rst st, const struct droce_pkt *p);
void droce_resp_fatal_end(struct droce_qp *qp);
void droce_resp_nak(struct droce_qp *qp, uint8_t syn, uint32_t psn);
enum droce_rst droce_resp_take_rwqe(struct droce_qp *qp);
enum droce_rst droce_resp_read(struct droce_qp *qp, const struct droce_pkt *p, bool dup);
enum droce_rst droce_resp_execute(struct droce_qp *qp, const struct droce_pkt *p,
				  const struct droce_opcode_info *op, const uint8_t *frame);

#endif /* DROCE_RESP_H */
