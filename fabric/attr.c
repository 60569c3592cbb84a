// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * attr.c - fi_getinfo: one fi_info per usable interface (domain name =
 * interface name), the hints it honours, and the attributes it grants
 * (capabilities, transmit/receive/endpoint/domain/fabric attributes).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xwfi.h"

#define XWFI_DOMAIN_CAPS (FI_LOCAL_COMM | FI_REMOTE_COMM)
#define XWFI_ORDER FI_ORDER_SAS

/* ---- interfaces -------------------------------------------------------- */

static int sysfs_read(const char *ifname, const char *file, char *buf, size_t len)
{
	char path[128];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/sys/class/net/%s/%s", ifname, file);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	return 0;
}

/* An Ethernet interface that is up, not loopback and not a bridge. */
static bool iface_usable(const char *ifname)
{
	char buf[64], path[128];
	unsigned long flags;

	if (sysfs_read(ifname, "type", buf, sizeof(buf)) || atoi(buf) != 1 /* ARPHRD_ETHER */)
		return false;
	if (sysfs_read(ifname, "flags", buf, sizeof(buf)))
		return false;
	flags = strtoul(buf, NULL, 0);
	if (!(flags & 0x1 /* IFF_UP */) || (flags & 0x8 /* IFF_LOOPBACK */))
		return false;
	snprintf(path, sizeof(path), "/sys/class/net/%s/bridge", ifname);
	return access(path, F_OK) != 0;
}

/* @ifname's Ethernet address with endpoint id @ep: 0, or -1. */
static int iface_addr(const char *ifname, int ep, struct xw_addr *a)
{
	char mac[32], text[XW_ADDR_STRLEN];

	if (sysfs_read(ifname, "address", mac, sizeof(mac)))
		return -1;
	mac[strcspn(mac, "\n")] = 0;
	snprintf(text, sizeof(text), "%s/%d", mac, ep);
	return xw_addr_parse(text, a) ? -1 : 0;
}

/* Whether @a (its MAC, or in UDP form its IPv4 address) is @ifname's own. */
static bool iface_owns(const char *ifname, const struct xw_addr *a)
{
	struct ifaddrs *ifa, *i;
	bool found = false;

	if (a->encap == XW_ENCAP_ETH) {
		struct xw_addr own;

		return !iface_addr(ifname, a->ep, &own) && !memcmp(own.mac, a->mac, sizeof(a->mac));
	}
	if (getifaddrs(&ifa))
		return false;
	for (i = ifa; i && !found; i = i->ifa_next)
		found = i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
			!strcmp(i->ifa_name, ifname) &&
			((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr == a->ip;
	freeifaddrs(ifa);
	return found;
}

/* ---- getinfo ----------------------------------------------------------- */

#define REJECT(why, ...)                                                                   \
	do {                                                                               \
		FI_INFO(&xwfi_prov, FI_LOG_CORE, "hints rejected: " why "\n", ##__VA_ARGS__); \
		return false;                                                              \
	} while (0)

/* What fi_getinfo grants it honours: the transmit and receive attributes
 * (completion levels, completion order, sizes) and the endpoint's. */
static bool tx_rx_hints_ok(const struct fi_info *h)
{
	const struct fi_tx_attr *tx = h->tx_attr;
	const struct fi_rx_attr *rx = h->rx_attr;

	if (tx && (tx->caps & ~(XWFI_CAPS | FI_REMOTE_CQ_DATA)))
		REJECT("tx caps %#llx", (unsigned long long)(tx->caps & ~XWFI_CAPS));
	/* sends complete when their buffer may be reused (FI_INJECT_COMPLETE),
	 * or acknowledged (FI_TRANSMIT_COMPLETE); never after the peer's match */
	if (tx && (tx->op_flags & ~XWFI_TX_OP_FLAGS))
		REJECT("tx op_flags %#llx (FI_DELIVERY_COMPLETE and beyond, FI_FENCE: not "
		       "offered)",
		       (unsigned long long)(tx->op_flags & ~XWFI_TX_OP_FLAGS));
	if (tx && tx->comp_order != FI_ORDER_NONE)
		REJECT("tx comp_order %#llx (none)", (unsigned long long)tx->comp_order);
	if (tx && tx->inject_size > XWFI_INJECT_SIZE)
		REJECT("inject_size %zu (at most %d)", tx->inject_size, XWFI_INJECT_SIZE);
	if (tx && (tx->iov_limit > 1 || tx->rma_iov_limit))
		REJECT("tx iov_limit %zu rma_iov_limit %zu (1, 0)", tx->iov_limit,
		       tx->rma_iov_limit);
	if (rx && (rx->caps & ~(XWFI_CAPS | FI_REMOTE_CQ_DATA)))
		REJECT("rx caps %#llx", (unsigned long long)(rx->caps & ~XWFI_CAPS));
	if (rx && (rx->op_flags & ~XWFI_RX_OP_FLAGS))
		REJECT("rx op_flags %#llx", (unsigned long long)(rx->op_flags & ~XWFI_RX_OP_FLAGS));
	if (rx && rx->comp_order != FI_ORDER_NONE)
		REJECT("rx comp_order %#llx (none)", (unsigned long long)rx->comp_order);
	if (rx && rx->iov_limit > 1)
		REJECT("rx iov_limit %zu (1)", rx->iov_limit);
	return true;
}

static bool ep_hints_ok(const struct fi_info *h)
{
	const struct fi_ep_attr *e = h->ep_attr;
	const struct fi_domain_attr *d = h->domain_attr;

	if (e && e->protocol != FI_PROTO_UNSPEC)
		REJECT("protocol %u", e->protocol);
	if (e && e->max_msg_size > XWFI_MAX_MSG)
		REJECT("max_msg_size %zu", e->max_msg_size);
	if (e && (e->msg_prefix_size || e->max_order_raw_size || e->max_order_war_size ||
		  e->max_order_waw_size))
		REJECT("message prefix or RMA ordering sizes");
	/* FI_SHARED_CONTEXT is SIZE_MAX: refused as well (no shared contexts) */
	if (e && (e->tx_ctx_cnt > 1 || e->rx_ctx_cnt > 1))
		REJECT("tx_ctx_cnt %zu rx_ctx_cnt %zu (one each, not shared)", e->tx_ctx_cnt,
		       e->rx_ctx_cnt);
	if (d && d->av_type != FI_AV_UNSPEC && d->av_type != FI_AV_MAP && d->av_type != FI_AV_TABLE)
		REJECT("av_type %d", (int)d->av_type);
	return true;
}

/* A struct xw_addr that names an endpoint (what xw_addr_format takes);
 * @a: the application's bytes, of any alignment. */
static bool addr_ok(const void *a)
{
	char text[XW_ADDR_STRLEN];
	struct xw_addr x;

	memcpy(&x, a, sizeof(x));
	return xw_addr_format(&x, text, sizeof(text)) >= 0;
}

static bool hints_ok(const struct fi_info *h)
{
	if (!h)
		return true;
	/* FI_REMOTE_CQ_DATA is an operation flag, not a capability (remote CQ
	 * data is offered by cq_data_size): accepted in hints, never reported */
	if (h->caps & ~(XWFI_CAPS | FI_REMOTE_CQ_DATA))
		REJECT("caps %#llx not supported", (unsigned long long)(h->caps & ~XWFI_CAPS));
	if (h->domain_attr && (h->domain_attr->caps & ~XWFI_DOMAIN_CAPS))
		REJECT("domain caps %#llx not supported",
		       (unsigned long long)(h->domain_attr->caps & ~XWFI_DOMAIN_CAPS));
	if (h->ep_attr && h->ep_attr->type != FI_EP_UNSPEC && h->ep_attr->type != FI_EP_RDM)
		REJECT("endpoint type %d (only FI_EP_RDM)", (int)h->ep_attr->type);
	if (h->fabric_attr && h->fabric_attr->name && strcmp(h->fabric_attr->name, XWFI_NAME))
		REJECT("fabric %s", h->fabric_attr->name);
	if (h->fabric_attr && h->fabric_attr->prov_name &&
	    !strstr(h->fabric_attr->prov_name, XWFI_NAME))
		REJECT("provider %s", h->fabric_attr->prov_name);
	if (h->domain_attr && h->domain_attr->cq_data_size > 4)
		REJECT("cq_data_size %zu (at most 4)", h->domain_attr->cq_data_size);
	if (h->tx_attr && (h->tx_attr->msg_order & ~XWFI_ORDER))
		REJECT("tx msg_order %#llx", (unsigned long long)h->tx_attr->msg_order);
	if (h->rx_attr && (h->rx_attr->msg_order & ~XWFI_ORDER))
		REJECT("rx msg_order %#llx", (unsigned long long)h->rx_attr->msg_order);
	if (!tx_rx_hints_ok(h) || !ep_hints_ok(h))
		return false;
	if (h->addr_format != FI_FORMAT_UNSPEC)
		REJECT("addr_format %u", h->addr_format);
	if (h->dest_addr && (h->dest_addrlen != sizeof(struct xw_addr) || !addr_ok(h->dest_addr)))
		REJECT("dest_addr (length %zu) not an xdpwake address", h->dest_addrlen);
	if (h->src_addr && (h->src_addrlen != sizeof(struct xw_addr) || !addr_ok(h->src_addr)))
		REJECT("src_addr (length %zu) not an xdpwake address", h->src_addrlen);
	/* FI_PROGRESS_AUTO: a thread per domain (fabric/wait.c) */
	return true;
}

/* ---- the attributes granted ---------------------------------------------- */

/* What every fi_info says; info_new() adds what the hints choose
 * (capabilities, operation flags, threading, progress, AV type) and the
 * domain's name. */
static const struct fi_tx_attr tx_attr = {
	.msg_order = XWFI_ORDER,
	.comp_order = FI_ORDER_NONE,
	.inject_size = XWFI_INJECT_SIZE,
	.size = 1024,
	.iov_limit = 1,
	.rma_iov_limit = 0,
};

static const struct fi_rx_attr rx_attr = {
	.msg_order = XWFI_ORDER,
	.comp_order = FI_ORDER_NONE,
	.total_buffered_recv = 0,
	.size = 1024,
	.iov_limit = 1,
};

static const struct fi_ep_attr ep_attr = {
	.type = FI_EP_RDM,
	.protocol = FI_PROTO_UNSPEC,
	.protocol_version = 1,
	.max_msg_size = XWFI_MAX_MSG,
	.tx_ctx_cnt = 1,
	.rx_ctx_cnt = 1,
};

static const struct fi_domain_attr domain_attr = {
	.resource_mgmt = FI_RM_ENABLED,
	.mr_mode = 0,
	.mr_key_size = 0,
	/* 4 bytes (the header's 32-bit data, XW_DATA_MAX): MPI sends its rank
	 * there; a larger value is -FI_EINVAL. */
	.cq_data_size = 4,
	.cq_cnt = 64,
	.ep_cnt = XWFI_DOMAIN_EPS,
	.tx_ctx_cnt = XWFI_DOMAIN_EPS,
	.rx_ctx_cnt = XWFI_DOMAIN_EPS,
	.max_ep_tx_ctx = 1,
	.max_ep_rx_ctx = 1,
	.cntr_cnt = 64,
	.mr_iov_limit = 1,
	.caps = XWFI_DOMAIN_CAPS,
	.max_err_data = 0,
	.mr_cnt = 0,
};

static void *addr_dup(const struct xw_addr *a, size_t *len)
{
	void *p = malloc(sizeof(*a));

	if (p) {
		memcpy(p, a, sizeof(*a));
		*len = sizeof(*a);
	}
	return p;
}

/* @src, @dst: the addresses fi_getinfo's node and service or the hints
 * named (or NULL); @src_ep: the endpoint id of the source when only a
 * service was given (or -1). */
static struct fi_info *info_new(const char *ifname, const struct fi_info *h,
				const struct xw_addr *src, const struct xw_addr *dst, int src_ep)
{
	struct fi_info *fi = fi_allocinfo();
	uint64_t caps = h && (h->caps & XWFI_CAPS) ? h->caps & XWFI_CAPS : XWFI_CAPS;
	struct xw_addr own;

	if (!fi)
		return NULL;
	fi->caps = caps;
	fi->mode = 0;
	fi->addr_format = FI_FORMAT_UNSPEC;
	/* The source: the one named (node/service with FI_SOURCE, or the
	 * hints' src_addr), else the interface's address (Ethernet
	 * encapsulation) with the endpoint id of FI_XDPWAKE_EP_ID, or 1, the
	 * first an endpoint tries (fi_getname tells the one it got). */
	if (!src && (!xwfi_params.encap || strcmp(xwfi_params.encap, "udp")) &&
	    !iface_addr(ifname,
			src_ep >= 0 ? src_ep : xwfi_params.ep_id >= 0 ? xwfi_params.ep_id : 1, &own))
		src = &own;
	if ((src && !(fi->src_addr = addr_dup(src, &fi->src_addrlen))) ||
	    (dst && !(fi->dest_addr = addr_dup(dst, &fi->dest_addrlen))))
		goto err;

	*fi->tx_attr = tx_attr;
	fi->tx_attr->caps = caps & (FI_MSG | FI_TAGGED | FI_SEND);
	fi->tx_attr->op_flags = h && h->tx_attr ? h->tx_attr->op_flags : 0;
	*fi->rx_attr = rx_attr;
	fi->rx_attr->caps = caps & (FI_MSG | FI_TAGGED | FI_RECV | FI_DIRECTED_RECV | FI_SOURCE);
	fi->rx_attr->op_flags = h && h->rx_attr ? h->rx_attr->op_flags : 0;
	*fi->ep_attr = ep_attr;
	/* 64 tag bits when FI_MSG is not asked for; otherwise the top bit
	 * tells untagged messages apart. */
	fi->ep_attr->mem_tag_format = (caps & FI_TAGGED) && !(caps & FI_MSG) ? ~0ULL
									     : ~XWFI_MSG_BIT;
	*fi->domain_attr = domain_attr;
	fi->domain_attr->name = strdup(ifname);
	fi->domain_attr->threading = h && h->domain_attr && h->domain_attr->threading
					     ? h->domain_attr->threading
					     : FI_THREAD_SAFE;
	/* Manual unless asked: progress by the application's calls (the
	 * wake engine wakes a thread blocked in them); FI_PROGRESS_AUTO
	 * starts a thread per domain. */
	fi->domain_attr->control_progress =
		h && h->domain_attr && h->domain_attr->control_progress == FI_PROGRESS_AUTO
			? FI_PROGRESS_AUTO
			: FI_PROGRESS_MANUAL;
	fi->domain_attr->data_progress =
		h && h->domain_attr && h->domain_attr->data_progress == FI_PROGRESS_AUTO
			? FI_PROGRESS_AUTO
			: FI_PROGRESS_MANUAL;
	fi->domain_attr->av_type = h && h->domain_attr && h->domain_attr->av_type
					   ? h->domain_attr->av_type
					   : FI_AV_UNSPEC;

	fi->fabric_attr->name = strdup(XWFI_NAME);
	fi->fabric_attr->prov_version = XWFI_VERSION;
	fi->fabric_attr->api_version = XWFI_FI_VERSION;
	if (!fi->domain_attr->name || !fi->fabric_attr->name)
		goto err;
	return fi;
err:
	fi_freeinfo(fi);
	return NULL;
}

int xwfi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
		 const struct fi_info *hints, struct fi_info **info)
{
	struct if_nameindex *ifs, *i;
	struct fi_info *head = NULL, **tail = &head;
	const char *want = hints && hints->domain_attr ? hints->domain_attr->name : NULL;
	const struct xw_addr *src = NULL, *dst = NULL;
	struct xw_addr named, hsrc, hdst; /* the hints' bytes, aligned */
	int src_ep = -1;

	(void)version;
	*info = NULL;
	if (!hints_ok(hints))
		return -FI_ENODATA;
	if (hints && hints->src_addr)
		src = memcpy(&hsrc, hints->src_addr, sizeof(hsrc));
	if (hints && hints->dest_addr)
		dst = memcpy(&hdst, hints->dest_addr, sizeof(hdst));
	/* node and service as fi_av_insertsvc() takes them (node a MAC or
	 * "IPv4:port", service the endpoint id): the destination, or with
	 * FI_SOURCE the source, which must be an interface's own.  A
	 * service alone is the source's endpoint id on every interface. */
	if (node) {
		if (xwfi_node_addr(node, service, &named)) {
			FI_INFO(&xwfi_prov, FI_LOG_CORE,
				"node '%s' service '%s': not an xdpwake address (node: MAC or "
				"IPv4:port; service: endpoint id)\n", node, service ? service : "");
			return -FI_ENODATA;
		}
		if (flags & FI_SOURCE)
			src = &named;
		else
			dst = &named;
	} else if (service) {
		char *end;
		unsigned long v = strtoul(service, &end, 10);

		if (*end || end == service || v >= XW_MAX_ENDPOINTS) {
			FI_INFO(&xwfi_prov, FI_LOG_CORE,
				"service '%s': not an endpoint id (0..%d)\n", service,
				XW_MAX_ENDPOINTS - 1);
			return -FI_ENODATA;
		}
		src_ep = (int)v;
	}
	ifs = if_nameindex();
	if (!ifs)
		return -FI_ENODATA;
	for (i = ifs; i->if_index; i++) {
		struct fi_info *fi;

		if (xwfi_params.iface && *xwfi_params.iface && strcmp(xwfi_params.iface, i->if_name))
			continue;
		if (want && strcmp(want, i->if_name))
			continue;
		if (!iface_usable(i->if_name) || (src && !iface_owns(i->if_name, src)))
			continue;
		fi = info_new(i->if_name, hints, src, dst, src_ep);
		if (!fi) {
			if_freenameindex(ifs);
			fi_freeinfo(head);
			return -FI_ENOMEM;
		}
		*tail = fi;
		tail = &fi->next;
	}
	if_freenameindex(ifs);
	if (!head) {
		FI_INFO(&xwfi_prov, FI_LOG_CORE, "no usable interface%s%s\n",
			xwfi_params.iface ? " named " : "", xwfi_params.iface ? xwfi_params.iface : "");
		return -FI_ENODATA;
	}
	*info = head;
	return 0;
}
