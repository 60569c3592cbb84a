// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * xwbench idle: the CPU of a receiver waiting with no traffic.
 *
 * idle: posts a receive nothing will match and waits --seconds with
 * --wait; reports the process's CPU time (all threads) and the machine's.
 */
#include <errno.h>
#include <unistd.h>

#include "xwbench.h"

void run_idle(void)
{
	XW_OPTS(xw_wait_opts, wo, .timeout_set = true, .timeout_ms = (int)(o.seconds * 1000.0),
		.strategy = (enum xw_wait_strategy)o.wait);
	struct xw_request *req;
	XW_OPTS(xw_status, st);
	struct snap s0, s1;
	char buf[64];
	long hz = sysconf(_SC_CLK_TCK);
	int err;

	err = xw_endpoint__irecv(ep, buf, sizeof(buf), TAG_DATA, TAG_ALL, &req);
	if (err)
		die("irecv: %s", xw_strerror(err));
	snap_take(&s0);
	err = xw_request__wait_opts(req, &st, &wo);
	snap_take(&s1);
	if (err != -ETIMEDOUT)
		die("the idle wait ended with %s", err ? xw_strerror(err) : "a message");
	xw_request__cancel(req);
	json_obj_begin();
	print_config();
	json_kv_double("seconds", o.seconds);
	json_kv_i64("clk_tck", hz);
	json_side(&s0, &s1);
	json_kv_double("proc_core_pct",
		       100.0 * (double)(s1.proc_us - s0.proc_us) / ((double)(s1.t - s0.t) / 1000.0));
	json_kv_double("machine_core_pct",
		       100.0 * (double)(s1.busy_us - s0.busy_us) / ((double)(s1.t - s0.t) / 1000.0));
	json_obj_end();
}
