// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Check polls (xw_check, xdpwake.h): a progress pass from the
 * application's own loop at most every interval, timed by the cycle
 * counter.
 */
#include <pthread.h>

#include "internal.h"
#include "endpoint_int.h"

static double cycles_per_ns;
static pthread_once_t cycles_once = PTHREAD_ONCE_INIT;

static void calibrate_cycles(void)
{
	__u64 t0 = xwi_now_ns(), c0 = xw__cycles(), t1, c1;

	do {
		t1 = xwi_now_ns();
	} while (t1 - t0 < 2000000); /* 2 ms */
	c1 = xw__cycles();
	cycles_per_ns = c1 > c0 ? (double)(c1 - c0) / (double)(t1 - t0) : 0;
}

XW_API int xw_check__init(struct xw_check *c, struct xw_endpoint *ep, __u32 interval_usecs)
{
	if (!c || !ep || !interval_usecs)
		return -EINVAL;
	pthread_once(&cycles_once, calibrate_cycles);
	c->ep = ep;
	/* Without a cycle counter every check polls (interval 0). */
	c->interval = (__u64)(cycles_per_ns * interval_usecs * 1000.0);
	c->next = xw__cycles() + c->interval;
	return 0;
}

XW_API int xw_check__poll(struct xw_check *c)
{
	int n = xw_endpoint__progress(c->ep);

	c->next = xw__cycles() + c->interval;
	return n;
}
