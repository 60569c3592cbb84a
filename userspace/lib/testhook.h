/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * testhook.h - endpoint settings only the project's tests and benchmarks
 * use, kept out of the public options.  Not installed and not exported
 * (hidden like every xwi_ symbol): the tests and benchmarks link
 * libxdpwake.a and include this header with -Iuserspace/lib.
 */
#ifndef XW_TESTHOOK_H
#define XW_TESTHOOK_H

#include <stdbool.h>
#include "xdpwake.h"

struct xwi_test_opts {
	/* LAT on fragment N-1-mark_shift of a MEDIUM message (and of a
	 * PULL_REPLY block) instead of the last, when 0 < mark_shift < N:
	 * the coalescing paper's mis-ordering experiment (docs/PROTOCOL.md). */
	__u32 mark_shift;
	/* No CRC32C on frames (measuring its cost; both ends must agree). */
	bool crc_off;
	/* Large messages from peers on this host are not read from their
	 * buffers (process_vm_readv) but pulled: the fallback where that is
	 * not permitted (Yama ptrace_scope, another user). */
	bool cma_off;
};

/** xw_endpoint__open() with @t (NULL: none) applied to the endpoint's
 *  protocol engine. */
int xwi_endpoint_open_test(const char *ifname, __u16 id, const struct xw_endpoint_opts *o,
			   const struct xwi_test_opts *t, struct xw_endpoint **epp);

#endif /* XW_TESTHOOK_H */
