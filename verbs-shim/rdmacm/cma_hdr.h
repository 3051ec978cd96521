/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_CMA_HDR_H
#define DROCE_CMA_HDR_H

#include <stdint.h>
#include <sys/socket.h>

/*
 * rdma_cm's IP addressing header at the start of a REQ's private data (kernel cma.c's
 * struct cma_hdr: version 0x00, IP version in the top nibble, port, source and destination
 * address, 36 bytes; IPv4 addresses in the last 4 bytes of each 16-byte field).
 *
 * The port is the ACTIVE side's own (source) port, not the destination's: the kernel writes
 * src->sin_port (cma_format_hdr), its passive side takes it as the remote port
 * (cma_save_ip4_info: dst_addr.sin_port = hdr->port), and Wireshark labels it "IP CM Source
 * Port". The listener's (destination) port is in the service ID only: cma_service_id_port().
 * In the header, src is the active side and dst the passive side.
 */
enum { CMA_HDR_SIZE = 36 };
/* port = src's port (see above); 0 / -EAFNOSUPPORT / -EINVAL (families differ) */
int cma_hdr_build(uint8_t out[CMA_HDR_SIZE], const struct sockaddr *src,
		  const struct sockaddr *dst);
/* fills family and addresses, and the port into src (the active side; dst port 0: take it from
 * the REQ's service ID); -EPROTO for unknown version, -EAFNOSUPPORT for an IP version not 4 or 6 */
int cma_hdr_parse(const uint8_t in[CMA_HDR_SIZE], struct sockaddr_storage *src,
		  struct sockaddr_storage *dst);
/* rdma_cm service ID: (port space << 16) | port
 * (RDMA_PS_TCP 0x0106 -> 0x0000000001060000 | port). */
uint64_t cma_service_id(uint16_t port_space, uint16_t port);
/* Its two halves, as the kernel's cma_port_from_service_id / rdma_ps_from_service_id read them. */
uint16_t cma_service_id_port(uint64_t service_id);
uint16_t cma_service_id_ps(uint64_t service_id);

#endif /* DROCE_CMA_HDR_H */
