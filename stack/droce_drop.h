/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef DROCE_DROP_H
#define DROCE_DROP_H

/*
 * Why a received frame was not accepted. Every reason has a name, a sentence and a counter.
 * X(name, class, description); class NOT_ROCE marks frames that are simply not RoCEv2 (listed as
 * skipped by tools, handed to an exception path by the runtime), MALFORMED the rest.
 * Transport-level reasons (bad QP, PSN, rkey ...) are appended by the engine in the same list,
 * and last the runtime's own (class RUNTIME: frames pmd-glue never hands to an engine). One
 * vocabulary: the runtime's classifier names a frame it refuses with these same reasons.
 */
#include <stdint.h>

#define DROCE_DROP_LIST(X) \
	X(NONE, OK, "accepted") \
	X(ETH_SHORT, MALFORMED, "frame shorter than an Ethernet header") \
	X(VLAN_SHORT, MALFORMED, "frame ends inside the 802.1Q tag") \
	X(NOT_IP, NOT_ROCE, "EtherType is neither IPv4 nor IPv6") \
	X(IP_SHORT, MALFORMED, "frame ends inside the IP header") \
	X(IP_VERSION, MALFORMED, "IP version does not match the EtherType") \
	X(IP_IHL, MALFORMED, "IPv4 IHL below 5 or past the frame") \
	X(IP_LEN, MALFORMED, "IP length field disagrees with the frame") \
	X(IP_FRAG, MALFORMED, "IPv4 fragment (RoCEv2 is never fragmented)") \
	X(IP_CSUM, MALFORMED, "IPv4 header checksum wrong") \
	X(NOT_UDP, NOT_ROCE, "IP protocol is not UDP") \
	X(UDP_SHORT, MALFORMED, "frame ends inside the UDP header") \
	X(NOT_ROCE_PORT, NOT_ROCE, "UDP destination port is not 4791") \
	X(UDP_LEN, MALFORMED, "UDP length disagrees with the IP length") \
	X(BTH_SHORT, MALFORMED, "UDP payload too short for BTH and ICRC") \
	X(BTH_TVER, MALFORMED, "BTH transport version is not 0") \
	X(OPCODE, MALFORMED, "unknown or unsupported BTH opcode") \
	X(HDR_SHORT, MALFORMED, "packet too short for its opcode's headers") \
	X(PADCNT, MALFORMED, "PadCnt inconsistent with the payload length") \
	X(PAYLOAD_LEN, MALFORMED, "payload present where the opcode allows none") \
	X(ICRC, MALFORMED, "ICRC mismatch") \
	X(BAD_QPN, TRANSPORT, "no QP with this destination QPN") \
	X(QP_STATE, TRANSPORT, "QP state does not accept this packet") \
	X(QPT_OPCODE, TRANSPORT, "opcode not valid for the QP type") \
	X(PKEY, TRANSPORT, "P_Key does not match the QP's") \
	X(PSN_OUT_OF_SEQ, TRANSPORT, "request PSN ahead of the expected PSN") \
	X(DUP_NO_REPLAY, TRANSPORT, "duplicate request with nothing to replay") \
	X(OPCODE_SEQ, TRANSPORT, "opcode out of sequence within a message") \
	X(RKEY, TRANSPORT, "R_Key, PD, access or bounds check failed") \
	X(INVALIDATE, TRANSPORT, "SEND with Invalidate names no window this QP may invalidate") \
	X(LENGTH, TRANSPORT, "payload length invalid for the message") \
	X(QKEY, TRANSPORT, "UD Q_Key mismatch") \
	X(NO_RWQE, TRANSPORT, "no receive WQE posted (RNR)") \
	X(RESOURCE, TRANSPORT, "responder resources exhausted") \
	X(UC_GAP, TRANSPORT, "UC packet outside the current message") \
	X(RESP_GHOST, TRANSPORT, "response for a PSN never sent") \
	X(RESP_STALE, TRANSPORT, "response for a PSN already acknowledged") \
	X(RESP_OUT_OF_SEQ, TRANSPORT, "response PSN not the next expected") \
	X(RESP_UNEXPECTED, TRANSPORT, "response kind does not match the request") \
	X(MCAST_NOT_GROUP, TRANSPORT, "multicast DestQP 0xFFFFFF sent to a unicast address") \
	X(MCAST_NO_MEMBER, TRANSPORT, "multicast group with no QP attached here") \
	X(DST_MAC, TRANSPORT, \
	  "destination MAC not this port's (broadcast, or a group not joined)") \
	X(DST_IP, TRANSPORT, "destination IP is not one of this port's GIDs") \
	X(SRC_GID, TRANSPORT, "source address is not the QP's remote GID") \
	X(DST_GID, TRANSPORT, "destination GID is not the QP's own (its sgid_index)") \
	X(QP_ACCESS, TRANSPORT, "the QP is not enabled for this remote operation") \
	X(ATOMIC_ALIGN, TRANSPORT, "atomic target address not 8-byte aligned") \
	X(RWQE_PROT, TRANSPORT, "receive WQE's buffer fails its L_Key check") \
	X(MULTISEG, RUNTIME, "multi-segment mbuf that could not be linearised") \
	X(EXC_FULL, RUNTIME, "exception ring full") \
	X(NEIGH_BAD, RUNTIME, "ARP/ND frame the neighbour module rejected") \
	X(NO_DEVICE, RUNTIME, "RoCEv2 frame while no engine device is open") \
	X(VLAN_OTHER, RUNTIME, "802.1Q tag of a VLAN other than DROCE_VLAN") \
	X(VLAN_UNTAGGED, RUNTIME, "untagged or priority-tagged frame while DROCE_VLAN is set") \
	X(VLAN_TAGGED, RUNTIME, "802.1Q-tagged frame (VID not 0) while no DROCE_VLAN is set")

enum droce_drop_class {
	DROCE_DROP_CLASS_OK,
	DROCE_DROP_CLASS_NOT_ROCE,
	DROCE_DROP_CLASS_MALFORMED,
	DROCE_DROP_CLASS_TRANSPORT, /* a valid RoCEv2 packet the transport refused */
	DROCE_DROP_CLASS_RUNTIME,   /* refused by the runtime before any engine saw it */
};

enum droce_drop {
#define DROCE_X_DROP_ENUM(name, cls, desc) DROCE_DROP_##name,
	DROCE_DROP_LIST(DROCE_X_DROP_ENUM)
#undef DROCE_X_DROP_ENUM
		DROCE_DROP_MAX
};

/* Short name ("ICRC") and sentence for a reason; "?" for out-of-range values. */
const char *droce_drop_name(enum droce_drop reason);
const char *droce_drop_desc(enum droce_drop reason);
enum droce_drop_class droce_drop_class(enum droce_drop reason);

/* One counter per reason; cnt[DROCE_DROP_NONE] counts accepted frames. */
struct droce_drop_stats {
	uint64_t cnt[DROCE_DROP_MAX];
};

#endif /* DROCE_DROP_H */
