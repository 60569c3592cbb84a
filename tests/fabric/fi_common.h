/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * fi_common.h - what the provider's test programs (tests/fabric/fi_unit.c,
 * tests/fabric/fi_defects.c) share, compiled once (fi_common.c, built by
 * mk/fabric.mk): one side's libfabric objects, the hints that pick the
 * xdpwake provider on an interface, closing a side, the clock.
 */
#ifndef FI_COMMON_H
#define FI_COMMON_H

#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

/* The provider's address: struct xw_addr (xdpwake.h), XWA_LEN bytes; its
 * first XWA_NAME name the endpoint, the incarnation nonce follows (0 in a
 * fi_info's src_addr, the endpoint's own in fi_getname()). */
#define XWA_LEN 24
#define XWA_NAME 16

/* One side: an RDM endpoint with its fabric, domain, AV, CQ and (if the
 * program opens them) counters; its AV's indices of the peer and itself. */
struct side {
	struct fi_info *info;
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_cntr *tx_cntr, *rx_cntr;
	struct fid_ep *ep;
	fi_addr_t peer, self;
};

/* CLOCK_MONOTONIC in seconds. */
double fit_now(void);

/* Hints for the xdpwake provider's RDM endpoints with @caps, on interface
 * @ifname (NULL: any); NULL if out of memory. */
struct fi_info *fit_hints(const char *ifname, uint64_t caps);

/* Close what is open of @s (endpoint, CQ, counters, AV, domain, fabric, in
 * that order), free its info and zero it: the number of closes that
 * failed. */
int fit_close_side(struct side *s);

#endif
