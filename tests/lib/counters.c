// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The counters the endpoint tests read (counters.h). */
#include <sys/resource.h>

#include "counters.h"
#include "harness.h"

struct xw_endpoint_stats xwt_ep_stats(struct xw_endpoint *ep)
{
	struct xw_endpoint_stats s = { .sz = sizeof(s) };

	REQUIRE(xw_endpoint__stats(ep, &s) == 0, "endpoint stats");
	return s;
}

struct xw_wait_stats xwt_wait_stats(struct xw_endpoint *ep)
{
	struct xw_wait_stats s = { .sz = sizeof(s) };

	REQUIRE(xw_endpoint__wait_stats(ep, &s) == 0, "wait stats");
	return s;
}

struct xw_stats xwt_xdp_stats(struct xw_endpoint *ep, __u16 id)
{
	XW_OPTS(xw_stats, s);

	REQUIRE(xw_iface__stats(xw_endpoint__iface(ep), id, &s) == 0, "xdp stats");
	return s;
}

long xwt_nivcsw(void)
{
	struct rusage r;

	REQUIRE(getrusage(RUSAGE_THREAD, &r) == 0, "getrusage");
	return r.ru_nivcsw;
}
