// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Received frame parsing (see frame.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <netinet/in.h>

#include "frame.h"

int xwi_frame_parse(const void *data, size_t len, struct xwi_frame *f)
{
	const __u8 *pos = (const __u8 *)data + ETH_HLEN, *end = (const __u8 *)data + len;
	struct ethhdr eth;
	__u16 proto;

	/* the header is copied over and payload/len set on success */
	memset(&f->src, 0, sizeof(f->src));
	if (len < ETH_HLEN + XW_HDR_LEN)
		return -EPROTO;
	memcpy(&eth, data, ETH_HLEN);
	proto = ntohs(eth.h_proto);
	for (int i = 0; i < 2 && (proto == XWI_VLAN_PROTO_Q || proto == XWI_VLAN_PROTO_AD); i++) {
		__u16 tag[2];

		if (end - pos < 4)
			return -EPROTO;
		memcpy(tag, pos, 4);
		proto = ntohs(tag[1]);
		pos += 4;
	}
	if (proto == ETH_P_IP) {
		struct iphdr ip;
		struct udphdr udp;
		size_t ihl;

		if ((size_t)(end - pos) < sizeof(ip))
			return -EPROTO;
		memcpy(&ip, pos, sizeof(ip));
		ihl = ip.ihl * 4u;
		if (ip.version != 4 || ihl < sizeof(ip) || ip.protocol != IPPROTO_UDP ||
		    (size_t)(end - pos) < ihl + sizeof(udp))
			return -EPROTO;
		memcpy(&udp, pos + ihl, sizeof(udp));
		if (ntohs(ip.tot_len) < ihl + sizeof(udp) || ntohs(ip.tot_len) > end - pos)
			return -EPROTO;
		f->src.encap = XW_ENCAP_UDP;
		f->src.ip = ip.saddr;
		f->src.port = udp.source;
		memcpy(f->src.mac, eth.h_source, 6);
		end = pos + ntohs(ip.tot_len);
		pos += ihl + sizeof(udp);
	} else {
		f->src.encap = XW_ENCAP_ETH;
		memcpy(f->src.mac, eth.h_source, 6);
	}
	if ((size_t)(end - pos) < XW_HDR_LEN)
		return -EPROTO;
	memcpy(&f->h, pos, XW_HDR_LEN);
	pos += XW_HDR_LEN;
	f->src.ep = ntohs(f->h.src_ep);
	f->payload = pos;
	f->len = (size_t)(end - pos);
	return 0;
}
