// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * fi_common.c - the helpers the provider's test programs share
 * (fi_common.h).
 */
#include <string.h>
#include <time.h>

#include "fi_common.h"

double fit_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct fi_info *fit_hints(const char *ifname, uint64_t caps)
{
	struct fi_info *h = fi_allocinfo();

	if (!h)
		return NULL;
	h->caps = caps;
	h->ep_attr->type = FI_EP_RDM;
	h->fabric_attr->prov_name = strdup("xdpwake");
	if (ifname)
		h->domain_attr->name = strdup(ifname);
	return h;
}

static int fid_close(struct fid *f)
{
	return f && fi_close(f) ? 1 : 0;
}

int fit_close_side(struct side *s)
{
	int failed = 0;

	failed += fid_close(s->ep ? &s->ep->fid : NULL);
	failed += fid_close(s->cq ? &s->cq->fid : NULL);
	failed += fid_close(s->tx_cntr ? &s->tx_cntr->fid : NULL);
	failed += fid_close(s->rx_cntr ? &s->rx_cntr->fid : NULL);
	failed += fid_close(s->av ? &s->av->fid : NULL);
	failed += fid_close(s->dom ? &s->dom->fid : NULL);
	failed += fid_close(s->fab ? &s->fab->fid : NULL);
	fi_freeinfo(s->info);
	memset(s, 0, sizeof(*s));
	return failed;
}
