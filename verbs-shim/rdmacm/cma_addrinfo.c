/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_getaddrinfo: the socket resolver's addresses, as rdma_cm's (TCP or UDP port space) source
 * (RAI_PASSIVE) or destination. No route or connect data: the device resolves those itself.
 */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "cma_priv.h"

int
rdma_getaddrinfo(const char *node, const char *service, const struct rdma_addrinfo *hints,
		 struct rdma_addrinfo **res)
{
	struct addrinfo h = { .ai_socktype = SOCK_STREAM }, *ai;
	struct rdma_addrinfo *r;
	bool passive = hints != NULL && (hints->ai_flags & RAI_PASSIVE);
	int rc;

	if (res == NULL || (node == NULL && service == NULL))
		return cma_errno(-EINVAL);
	if (hints != NULL) {
		h.ai_family = hints->ai_family;
		if (hints->ai_flags & RAI_NUMERICHOST)
			h.ai_flags |= AI_NUMERICHOST;
		if (hints->ai_port_space != 0 && hints->ai_port_space != RDMA_PS_TCP &&
		    hints->ai_port_space != RDMA_PS_UDP)
			return cma_errno(-EPROTONOSUPPORT);
	}
	if (passive)
		h.ai_flags |= AI_PASSIVE;
	rc = getaddrinfo(node, service, &h, &ai);
	if (rc != 0)
		return cma_errno(rc == EAI_SYSTEM ? -errno : -EADDRNOTAVAIL);
	r = calloc(1, sizeof(*r));
	if (r == NULL || (r->ai_src_addr = calloc(1, sizeof(struct sockaddr_storage))) == NULL ||
	    (r->ai_dst_addr = calloc(1, sizeof(struct sockaddr_storage))) == NULL) {
		freeaddrinfo(ai);
		rdma_freeaddrinfo(r);
		return cma_errno(-ENOMEM);
	}
	r->ai_flags = hints != NULL ? hints->ai_flags : 0;
	r->ai_family = ai->ai_family;
	r->ai_port_space =
		hints != NULL && hints->ai_port_space == RDMA_PS_UDP ? RDMA_PS_UDP : RDMA_PS_TCP;
	r->ai_qp_type = r->ai_port_space == RDMA_PS_UDP ? IBV_QPT_UD : IBV_QPT_RC;
	if (passive) {
		memcpy(r->ai_src_addr, ai->ai_addr, ai->ai_addrlen);
		r->ai_src_len = ai->ai_addrlen;
	} else {
		memcpy(r->ai_dst_addr, ai->ai_addr, ai->ai_addrlen);
		r->ai_dst_len = ai->ai_addrlen;
		free(r->ai_src_addr);
		r->ai_src_addr = NULL;
	}
	if (passive) {
		free(r->ai_dst_addr);
		r->ai_dst_addr = NULL;
	}
	freeaddrinfo(ai);
	*res = r;
	return 0;
}

void
rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	struct rdma_addrinfo *n;

	for (; res != NULL; res = n) {
		n = res->ai_next;
		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
	}
}
