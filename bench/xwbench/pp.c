// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * xwbench pp: ping-pong with framing, mark and compute options.
 *
 * pp: per iteration (after --warmup unmeasured ones), role a optionally
 * synchronises with a 0-byte barrier ping-pong (--barrier, implied by
 * --x-us/--y-us), then times: compute x; isend --size bytes; compute y;
 * receive the --reply bytes; complete the send.  Role b: compute y; receive;
 * compute x; send the reply.  This is the push-pull paper's early/late
 * receiver routine (Fig. 5); with x = y = 0 it is a plain ping-pong.  The
 * compute loops call xw_check() every --check-us (the library's gated poll).
 * Framing and marks come from the endpoint options: --eager-max, --btp1,
 * --btp2 (bytes, or N"f" for N frames), --marks (all, none, or all minus a
 * comma list: -rndv,-pull,-pull_reply,-notify,-small,-medium), --mark-shift.
 */
#include <stdlib.h>

#include "xwbench.h"
#include "measure.h"

int run_pp(void)
{
	size_t blen = o.size > o.reply ? o.size : o.reply;
	char *buf = calloc(1, blen ? blen : 1), *rbuf = calloc(1, blen ? blen : 1);
	double *lat = calloc((size_t)o.iters, sizeof(double));
	struct snap s0, s1;
	long total = o.warmup + o.iters;

	if (!buf || !rbuf || !lat)
		die("out of memory");
	for (size_t i = 0; i < blen; i++)
		buf[i] = (char)(i * 7);
	connect_peer();
	for (long i = 0; i < total; i++) {
		if (i == o.warmup)
			snap_take(&s0);
		if (o.role == 'a') {
			struct xw_request *req;
			XW_OPTS(xw_status, st);
			__u64 t0;
			int err;

			if (o.barrier) {
				send_or_die(NULL, 0, TAG_BAR, "barrier");
				recv_or_die(NULL, 0, TAG_BAR, NULL, "barrier");
			}
			t0 = xwu_now_ns();
			compute_us(o.x_us);
			err = xw_endpoint__isend(ep, &peer, buf, o.size, TAG_DATA, &req);
			if (err)
				die("isend: %s", xw_strerror(err));
			compute_us(o.y_us);
			recv_or_die(rbuf, o.reply, TAG_REPLY, &st, "reply");
			err = xw_request__wait(req, &st, o.timeout_ms);
			if (err)
				die("send completion: %s", xw_strerror(err));
			if (i >= o.warmup)
				lat[i - o.warmup] = (double)(xwu_now_ns() - t0) / 1000.0;
		} else {
			XW_OPTS(xw_status, st);

			if (o.barrier) {
				recv_or_die(NULL, 0, TAG_BAR, NULL, "barrier");
				send_or_die(NULL, 0, TAG_BAR, "barrier");
			}
			compute_us(o.y_us);
			recv_or_die(rbuf, o.size, TAG_DATA, &st, "data");
			if (st.len != o.size)
				die("received %zu bytes, expected %lu", st.len, o.size);
			compute_us(o.x_us);
			send_or_die(buf, o.reply, TAG_REPLY, "reply");
		}
	}
	snap_take(&s1);
	json_obj_begin();
	print_config();
	json_kv_u64("size", o.size);
	json_kv_u64("reply", o.reply);
	json_kv_i64("iters", o.iters);
	json_kv_i64("warmup", o.warmup);
	json_kv_u64("x_us", o.x_us);
	json_kv_u64("y_us", o.y_us);
	json_kv_bool("barrier", o.barrier);
	json_kv_u64("check_us", o.check_us);
	json_kv_u64("eager_max", frames_to_bytes(o.eager_max, o.eager_f));
	json_kv_u64("btp1", frames_to_bytes(o.btp1, o.btp1_f));
	json_kv_u64("btp2", frames_to_bytes(o.btp2, o.btp2_f));
	json_kv_str("marks", o.marks_text ? o.marks_text : "all");
	json_kv_u64("marks_mask", o.marks_set ? o.marks : XW_MARK_ALL);
	json_kv_u64("mark_shift", o.mark_shift);
	json_side(&s0, &s1);
	if (o.role == 'a')
		json_stats("iter_us", lat, o.iters);
	json_obj_end();
	free(buf);
	free(rbuf);
	free(lat);
	return 0;
}
