// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The control protocol of xdpwake pingpong / stream (measurements between
 * two xdpwake endpoints, in the spirit of Open-MX's omx_perf).
 *
 * One side runs --server: it opens an endpoint, prints its address and
 * waits.  The other runs --client --peer ADDR with the options of the test;
 * it sends a CONFIG message (mode, policy, wait strategy, spin and think
 * time, timeout, number of sizes) and the server obeys, so only the client
 * needs options.  Then, for each size:
 *
 *   client                               server
 *   PHASE {size, batch}           --->   allocates, posts receives
 *                                 <---   PHASE_OK
 *   warm-up messages, the last one with the MARK flag; the server takes a
 *   snapshot of its counters (XDP stats of the endpoint, wait statistics,
 *   getrusage, /proc/stat) before it answers that one, the client once it
 *   has the answer
 *   measured messages, the last with LAST; both take the end snapshot
 *                                 <---   RESULT {the server's deltas}
 *
 * pingpong: the client sends a message of SIZE bytes, the server answers
 * with one of SIZE bytes (after --think microseconds of computation).
 * stream: the client sends batches of messages, the last of each batch
 * flagged BATCH_END; the server acknowledges each batch with a 0-byte
 * message; the next batch starts once the ack is in (flow control: the
 * library's delivery is reliable, with retransmission, but a batch that
 * overflows the receiver's rings would measure retransmission timeouts
 * rather than the stream; perf_client.c sizes the batches).
 *
 * All messages carry a 64-bit match: magic (24 bits) | session (16) |
 * type (8) | flags (16).  Every wait has a deadline (--timeout), and a
 * waiting call is cut into slices so that Ctrl-C is seen.
 *
 * The server opens a fresh endpoint for every client, and a client that
 * gets no answer opens a fresh endpoint before it asks again, so that every
 * test starts from a clean endpoint: no messages, requests or counters of
 * an earlier client or attempt are left over (stale CONFIGs are told apart
 * by their nonce, other messages by the session bits of the match).
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "perf.h"
#include "measure.h"

const char *const perf_side_names[SIDE_NR] = {
#define SIDE_NAME(n) #n,
	SIDE_FIELDS(SIDE_NAME)
#undef SIDE_NAME
};

__u64 perf_tag(const struct perf *p, enum msg_type type, unsigned int flags)
{
	return TAG_MAGIC << 40 | (__u64)p->sess << 24 | (__u64)type << 16 | (flags & 0xFFFF);
}

/* Wait for @req up to @timeout_ms, in slices so that a stop request is
 * seen; -EINTR when stopped (the request then stays pending). */
int perf_wait_req(struct xw_request *req, struct xw_status *st, int timeout_ms)
{
	__u64 end = xwu_now_ns() + (__u64)timeout_ms * 1000000ULL;

	for (;;) {
		__u64 t = xwu_now_ns();
		int slice, err;

		if (t >= end)
			return -ETIMEDOUT;
		slice = (int)((end - t + 999999) / 1000000);
		if (slice > 200)
			slice = 200;
		err = xw_request__wait(req, st, slice);
		if (err != -ETIMEDOUT)
			return err;
		if (cli_stop)
			return -EINTR;
	}
}

/* Post a send, retrying while the send backlog is full. */
int perf_post_send_flags(struct perf *p, const void *buf, size_t len, __u64 match,
			 __u32 flags, struct xw_request **req)
{
	XW_OPTS(xw_send_opts, so, .flags = flags);
	__u64 end = xwu_now_ns() + (__u64)p->timeout_ms * 1000000ULL;
	int err;

	for (;;) {
		err = xw_endpoint__isend_opts(p->ep, &p->peer, buf, len, match, &so, req);
		if (err != -EAGAIN)
			return err;
		if (xwu_now_ns() >= end)
			return -ETIMEDOUT;
		if (cli_stop)
			return -EINTR;
		xw_endpoint__progress(p->ep);
	}
}

int perf_post_send(struct perf *p, const void *buf, size_t len, __u64 match,
		   struct xw_request **req)
{
	return perf_post_send_flags(p, buf, len, match, 0, req);
}

/* Blocking send of a small control message. */
int perf_send_ctl(struct perf *p, const void *buf, size_t len, __u64 match)
{
	struct xw_request *req;
	XW_OPTS(xw_status, st);
	int err = perf_post_send(p, buf, len, match, &req);

	if (err)
		return err;
	err = perf_wait_req(req, &st, p->timeout_ms);
	return err ? err : st.error;
}

/* Blocking receive of a control message of exactly @len bytes. */
int perf_recv_ctl(struct perf *p, void *buf, size_t len, __u64 match, __u64 mask,
		  struct xw_status *st, int timeout_ms)
{
	struct xw_request *req;
	int err = xw_endpoint__irecv(p->ep, buf, len, match, mask, &req);

	if (err)
		return err;
	err = perf_wait_req(req, st, timeout_ms);
	if (err) {
		/* Nothing may write into @buf once we return. */
		if (xw_request__cancel(req) == 0)
			xw_request__test(req, NULL);
		return err;
	}
	if (st->error)
		return st->error;
	return st->msg_len == len ? 0 : -EPROTO;
}

void perf_result_encode(struct wire_result *w, const struct side *s, int status)
{
	const __u64 *v = (const __u64 *)s;

	memset(w, 0, sizeof(*w));
	w->magic = htobe32(PERF_MAGIC);
	w->status = htobe32((__u32)status);
	for (int i = 0; i < SIDE_NR; i++)
		w->v[i] = htobe64(v[i]);
}

void perf_result_decode(const struct wire_result *w, struct side *s, int *status)
{
	__u64 *v = (__u64 *)s;

	for (int i = 0; i < SIDE_NR; i++)
		v[i] = be64toh(w->v[i]);
	*status = (int)be32toh(w->status);
}
