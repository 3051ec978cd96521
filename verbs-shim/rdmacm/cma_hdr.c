/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_cm's IP addressing header in a REQ's private data (IBTA Annex A11, the kernel's struct
 * cma_hdr) and its service IDs.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>

#include "cma_hdr.h"
#include "../../stack/wire/droce_cm.h"

_Static_assert(CMA_HDR_SIZE == sizeof(struct droce_cm_ip_hdr), "one cma_hdr size");

#define IPH(f) offsetof(struct droce_cm_ip_hdr, f)

int
cma_hdr_build(uint8_t out[CMA_HDR_SIZE], const struct sockaddr *src, const struct sockaddr *dst)
{
	if ((src->sa_family != AF_INET && src->sa_family != AF_INET6) ||
	    (dst->sa_family != AF_INET && dst->sa_family != AF_INET6))
		return -EAFNOSUPPORT;
	if (src->sa_family != dst->sa_family)
		return -EINVAL;
	memset(out, 0, CMA_HDR_SIZE);
	out[IPH(version)] = DROCE_CM_IP_HDR_VERSION;
	if (src->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)src;
		const struct sockaddr_in *d = (const struct sockaddr_in *)dst;

		out[IPH(ip_version)] = 4 << DROCE_CM_IP_VERSION_SHIFT;
		memcpy(out + IPH(src_port), &s->sin_port, 2); /* both in network order */
		memcpy(out + IPH(src_addr) + 12, &s->sin_addr, 4);
		memcpy(out + IPH(dst_addr) + 12, &d->sin_addr, 4);
	} else {
		const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)src;
		const struct sockaddr_in6 *d = (const struct sockaddr_in6 *)dst;

		out[IPH(ip_version)] = 6 << DROCE_CM_IP_VERSION_SHIFT;
		memcpy(out + IPH(src_port), &s->sin6_port, 2);
		memcpy(out + IPH(src_addr), &s->sin6_addr, 16);
		memcpy(out + IPH(dst_addr), &d->sin6_addr, 16);
	}
	return 0;
}

int
cma_hdr_parse(const uint8_t in[CMA_HDR_SIZE], struct sockaddr_storage *src,
	      struct sockaddr_storage *dst)
{
	/* The kernel (cma_save_ip_info) refuses any version but CMA_VERSION 0x00. */
	if (in[IPH(version)] != DROCE_CM_IP_HDR_VERSION)
		return -EPROTO;
	switch (in[IPH(ip_version)] >> DROCE_CM_IP_VERSION_SHIFT) {
	case 4: {
		struct sockaddr_in *s = (struct sockaddr_in *)src;
		struct sockaddr_in *d = (struct sockaddr_in *)dst;

		memset(src, 0, sizeof(*src));
		memset(dst, 0, sizeof(*dst));
		s->sin_family = AF_INET;
		d->sin_family = AF_INET;
		memcpy(&s->sin_port, in + IPH(src_port), 2);
		memcpy(&s->sin_addr, in + IPH(src_addr) + 12, 4);
		memcpy(&d->sin_addr, in + IPH(dst_addr) + 12, 4);
		return 0;
	}
	case 6: {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)src;
		struct sockaddr_in6 *d = (struct sockaddr_in6 *)dst;

		memset(src, 0, sizeof(*src));
		memset(dst, 0, sizeof(*dst));
		s->sin6_family = AF_INET6;
		d->sin6_family = AF_INET6;
		memcpy(&s->sin6_port, in + IPH(src_port), 2);
		memcpy(&s->sin6_addr, in + IPH(src_addr), 16);
		memcpy(&d->sin6_addr, in + IPH(dst_addr), 16);
		return 0;
	}
	default:
		/* As the kernel: IP version 4 or 6 only (cma_save_ip_info). */
		return -EAFNOSUPPORT;
	}
}

uint64_t
cma_service_id(uint16_t port_space, uint16_t port)
{
	return (uint64_t)port_space << 16 | port;
}

uint16_t
cma_service_id_port(uint64_t service_id)
{
	return (uint16_t)service_id;
}

uint16_t
cma_service_id_ps(uint64_t service_id)
{
	return (uint16_t)(service_id >> 16);
}
