/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * frame.h - parsing of one received Ethernet frame (pure: no socket, no
 * state), used by the port's receive path and by the fuzzers.
 */
#ifndef XWI_FRAME_H
#define XWI_FRAME_H

#include <stddef.h>
#include <linux/types.h>

#include "xdpwake.h"

/* VLAN tag protocol identifiers (802.1Q, 802.1ad); at most two tags. */
#define XWI_VLAN_PROTO_Q 0x8100
#define XWI_VLAN_PROTO_AD 0x88A8

struct xwi_frame {
	/*
	 * The sender: encap, mac (Ethernet source), ep (h.src_ep); UDP mode
	 * also ip and port.  src.encap is XW_ENCAP_UDP as soon as the IPv4 and
	 * UDP headers were valid, even when the parse failed after them (the
	 * port learns the neighbour from such a frame).
	 */
	struct xw_addr src;
	struct xw_hdr h;	/* copy of the xdpwake header (network order) */
	const __u8 *payload;	/* what follows the header, inside the frame  */
	size_t len;		/* bytes at payload (IPv4: up to tot_len)     */
};

/*
 * Parse @len bytes at @data: Ethernet, up to two VLAN tags, then either
 * IPv4 (EtherType 0x0800; no options check beyond ihl >= 5; protocol UDP;
 * tot_len within the frame) and UDP, or any other EtherType taken as ours,
 * then the 56-byte header.  Neither the EtherType nor the UDP port is
 * checked: the XDP program passed only frames of ours.  Returns 0, or
 * -EPROTO for a frame that is not ours (too short, bad IPv4/UDP).  Header
 * fields are not checked here (xwi_engine_rx does it).
 */
int xwi_frame_parse(const void *data, size_t len, struct xwi_frame *f);

#endif
