/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the IB CM message decoder of the rdma_cm replacement
 * (stack/cm/droce_cm_msg.c): droce_cm_msg_parse() on any bytes, and on what parses, the rdma_cm
 * IP header in its private data (cma_hdr_parse). A message that parses and builds again
 * (droce_cm_msg_build) must parse back to the same message.
 * A broken invariant is __builtin_trap().
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cm/droce_cm_msg.h"
#include "cma_hdr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) \
	do { \
		if (!(c)) \
			__builtin_trap(); \
	} while (0)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_storage src, dst;
	uint8_t mad[DROCE_MAD_SIZE];
	struct droce_cm_msg m, m2;
	int rc;

	memset(&m, 0, sizeof(m));
	rc = droce_cm_msg_parse(data, size, &m);
	if (size >= CMA_HDR_SIZE)
		(void)cma_hdr_parse(data, &src, &dst);
	if (rc != 0)
		return 0;
	CHECK(droce_cm_attr_name(m.attr)[0] != '?');
	CHECK(m.private_data_len == droce_cm_msg_priv_max(m.attr));
	if (m.private_data_len >= CMA_HDR_SIZE)
		(void)cma_hdr_parse(m.private_data, &src, &dst);
	if (droce_cm_msg_build(&m, mad) == 0) {
		memset(&m2, 0, sizeof(m2));
		CHECK(droce_cm_msg_parse(mad, sizeof(mad), &m2) == 0);
		/* ARI bytes past ari_len are not part of the message: parse copies all 72, build
		 * only ari_len of them */
		if (m.ari_len < sizeof(m.ari))
			memset(m.ari + m.ari_len, 0, sizeof(m.ari) - m.ari_len);
		CHECK(memcmp(&m, &m2, sizeof(m)) == 0);
	}
	return 0;
}
