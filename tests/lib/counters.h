/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The counters the endpoint tests read (a failure to read stops the test):
 * the library's per-endpoint and wait counters, the XDP program's per-
 * endpoint counters, and this thread's involuntary context switches.
 */
#ifndef XWT_COUNTERS_H
#define XWT_COUNTERS_H

#include <linux/types.h>

#include "xdpwake.h"

struct xw_endpoint_stats xwt_ep_stats(struct xw_endpoint *ep);
struct xw_wait_stats xwt_wait_stats(struct xw_endpoint *ep);
/* The XDP program's counters of endpoint @id on @ep's interface. */
struct xw_stats xwt_xdp_stats(struct xw_endpoint *ep, __u16 id);
/* Involuntary context switches of this thread: it was preempted. */
long xwt_nivcsw(void);

/* The growth of counter @f from snapshot @a to snapshot @b. */
#define XWT_D(a, b, f) ((unsigned long long)((b).f - (a).f))

#endif
