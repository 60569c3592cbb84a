// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Older versions of exported symbols, in the shared library only (the
 * static library has the current ones alone).  struct xw_endpoint_stats
 * grew in XDPWAKE_0.2 (the local_* fields): a binary linked against
 * XDPWAKE_0.1 calls this xw_endpoint__stats, which fills the old size.
 */
#include <stddef.h>
#include <string.h>

#include "xdpwake.h"

int xwi_compat_endpoint_stats_0_1(const struct xw_endpoint *ep, struct xw_endpoint_stats *st);
__asm__(".symver xwi_compat_endpoint_stats_0_1, xw_endpoint__stats@XDPWAKE_0.1");

__attribute__((visibility("default"))) int
xwi_compat_endpoint_stats_0_1(const struct xw_endpoint *ep, struct xw_endpoint_stats *st)
{
	struct xw_endpoint_stats all;
	int err;

	if (!st)
		return xw_endpoint__stats(ep, st);
	err = xw_endpoint__stats(ep, &all);
	if (!err)
		memcpy(st, &all, offsetof(struct xw_endpoint_stats, local_tx_frames));
	return err;
}
