// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The client of xdpwake pingpong / stream: reads the server's address,
 * sends the test's CONFIG, and runs each size (warm-up, the measured
 * messages, the server's RESULT), collecting latency samples and both
 * sides' deltas (the protocol: perf_proto.c).
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>

#include "perf.h"
#include "addrfile.h"
#include "measure.h"
#include "stats.h"

/* Messages per stream batch: the frames of one batch must fit the
 * receiver's fill ring (2048 frames by default; a frame the kernel drops
 * is recovered by the library's retransmission, but only after a
 * retransmission timeout, which the measurement would then include):
 * eager messages bring all their frames, large ones what the sender pushes
 * unasked (BTP(1)+BTP(2), 5 frames) plus the pulls in flight (4 blocks of
 * 32).  Also at most RX_BYTES_PER_BATCH bytes of posted receive buffers. */
static unsigned long batch_for(struct perf *p, __u64 size, unsigned long want)
{
	__u64 P = (__u64)xw_endpoint__frag_payload(p->ep);
	__u64 frames, b;

	if (!P)
		P = 1;
	frames = size ? (size + P - 1) / P : 1;
	if (size > 32768 && frames > 5 + 4 * 32)
		frames = 5 + 4 * 32;
	b = RX_FRAMES_PER_BATCH / frames;
	if (size && RX_BYTES_PER_BATCH / size < b)
		b = RX_BYTES_PER_BATCH / size;
	if (b < 1)
		b = 1;
	return want < b ? want : (unsigned long)b;
}

static __u64 random64(void)
{
	__u64 v = 0;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != sizeof(v))
		v = xwu_now_ns() ^ ((__u64)getpid() << 32);
	return v;
}

/* Send CONFIG until the server answers READY or the connect timeout
 * passes; a fresh endpoint for each new try (see perf_proto.c). */
static int client_connect(struct perf *p, __u32 nsizes, struct wire_ready *rd)
{
	static struct wire_ready buf;
	struct wire_config cfg;
	__u64 nonce = random64(), deadline;
	int slice = 250, err;

	p->sess = (__u16)(nonce >> 48);
	memset(&cfg, 0, sizeof(cfg));
	cfg.magic = htobe32(PERF_MAGIC);
	cfg.version = htobe32(PERF_VERSION);
	cfg.nonce = htobe64(nonce);
	cfg.mode = htobe32(p->mode);
	cfg.policy = htobe32(p->policy);
	cfg.wait = htobe32((__u32)p->wait);
	cfg.spin_us = htobe32((__u32)p->spin_us);
	cfg.pull_spin = htobe32(p->pull_spin < 0 ? 0 : (__u32)p->pull_spin + 1);
	cfg.think_us = htobe32((__u32)p->think_us);
	cfg.timeout_ms = htobe32((__u32)p->timeout_ms);
	cfg.nsizes = htobe32(nsizes);
	deadline = xwu_now_ns() + (__u64)(p->o->connect_timeout * 1e9);
	for (int attempt = 1;; attempt++) {
		struct xw_request *req;
		XW_OPTS(xw_status, st);
		__u64 t;

		if (!p->ep) {
			err = perf_ep_open(p, true);
			if (err)
				return err;
		}
		err = xw_endpoint__irecv(p->ep, &buf, sizeof(buf), perf_tag(p, T_READY, 0),
					 MASK_NOFLAGS, &req);
		if (err)
			return perf_err(p, err, "posting a receive");
		err = perf_send_ctl(p, &cfg, sizeof(cfg), perf_tag(p, T_CONFIG, 0));
		if (err)
			return perf_err(p, err, "sending the test configuration to %s", p->peer_text);
		t = xwu_now_ns();
		if (t < deadline && (deadline - t) / 1000000 < (__u64)slice)
			slice = (int)((deadline - t) / 1000000) + 1;
		err = perf_wait_req(req, &st, slice);
		if (!err) {
			if (st.error || st.msg_len != sizeof(buf) || be32toh(buf.magic) != PERF_MAGIC)
				return perf_err(p, -EPROTO, "%s answered with a malformed READY",
					    p->peer_text);
			if (buf.nonce != cfg.nonce)
				return perf_err(p, -EPROTO, "%s answered another client's request",
					    p->peer_text);
			if (be32toh(buf.status)) {
				buf.msg[sizeof(buf.msg) - 1] = '\0';
				return perf_err(p, (int)be32toh(buf.status), "the server refused: %s",
					    buf.msg);
			}
			*rd = buf;
			return 0;
		}
		if (xw_request__cancel(req) == 0)
			xw_request__test(req, NULL);
		if (err != -ETIMEDOUT)
			return perf_err(p, err, "waiting for %s", p->peer_text);
		if (cli_verbose)
			cli_note("no answer from %s yet (try %d)", p->peer_text, attempt);
		perf_ep_close(p);
		if (xwu_now_ns() >= deadline)
			return perf_err(p, -ETIMEDOUT,
				    "no answer from %s within %g s: is `xdpwake pingpong %s --server` "
				    "running there (same --encap, --ep %d, reachable over %s)?",
				    p->peer_text, p->o->connect_timeout,
				    p->me.encap == XW_ENCAP_UDP ? "IFACE --encap udp" : "IFACE",
				    p->peer.ep, p->ifname);
		slice = slice * 2 > 1000 ? 1000 : slice * 2;
	}
}

/* One ping-pong round: post the receive of the answer, send, wait both. */
static int pp_round(struct perf *p, void *sbuf, void *rbuf, __u64 size, unsigned int flags,
		    __u64 *rtt)
{
	struct xw_request *rr, *sr;
	XW_OPTS(xw_status, st);
	__u64 t = xwu_now_ns();
	int err;

	/* As an MPI ping-pong: the message goes out first, then the receive
	 * for the answer is posted (it would still match the answer if that
	 * came first, from the unexpected queue). */
	err = perf_post_send(p, sbuf, size, perf_tag(p, T_DATA, flags), &sr);
	if (err)
		return err;
	err = xw_endpoint__irecv(p->ep, rbuf, size, perf_tag(p, T_DATA, 0), MASK_NOFLAGS, &rr);
	if (err) {
		perf_wait_req(sr, &st, p->timeout_ms);
		return err;
	}
	err = perf_wait_req(sr, &st, p->timeout_ms);
	if (err || st.error)
		return err ? err : st.error;
	err = perf_wait_req(rr, &st, p->timeout_ms);
	if (err || st.error)
		return err ? err : st.error;
	if (st.msg_len != size)
		return -EPROTO;
	*rtt = xwu_now_ns() - t;
	return 0;
}

/* One stream batch of @k messages; the last one asks for the ack. */
static int st_batch(struct perf *p, void *sbuf, __u64 size, unsigned long k, unsigned int last,
		    __u64 *lat)
{
	static struct xw_request *sr[MAX_BATCH];
	struct xw_request *ar;
	XW_OPTS(xw_status, st);
	__u64 t = xwu_now_ns();
	int err;

	err = xw_endpoint__irecv(p->ep, NULL, 0, perf_tag(p, T_ACK, 0), MASK_NOFLAGS, &ar);
	if (err)
		return err;
	for (unsigned long j = 0; j < k; j++) {
		/* all but the batch's last say "more follows" (XW_SEND_MORE) */
		err = perf_post_send_flags(p, sbuf, size,
				      perf_tag(p, T_DATA, j == k - 1 ? F_BATCH_END | last : 0),
				      j == k - 1 ? 0 : XW_SEND_MORE, &sr[j]);
		if (err)
			return err;
	}
	for (unsigned long j = 0; j < k; j++) {
		err = perf_wait_req(sr[j], &st, p->timeout_ms);
		if (err || st.error)
			return err ? err : st.error;
	}
	err = perf_wait_req(ar, &st, p->timeout_ms);
	if (err || st.error)
		return err ? err : st.error;
	*lat = xwu_now_ns() - t;
	return 0;
}

static int client_phase(struct perf *p, unsigned int idx, __u64 size, struct size_result *r)
{
	static struct wire_phase_ok ok;
	static struct wire_result res;
	struct wire_phase ph;
	struct xwu_samples lat = { 0 }, raw = { 0 };
	struct snap s0, s1;
	XW_OPTS(xw_status, st);
	unsigned long batch = 1, warmup;
	__u64 n = 0, t0, dur_ns = (__u64)(p->o->duration * 1e9), sample;
	void *sbuf, *rbuf;
	char sz[32];
	bool last = false;
	int err, status;

	perf_print_size(sz, sizeof(sz), size);
	memset(r, 0, sizeof(*r));
	r->size = size;
	if (p->mode == MODE_STREAM)
		batch = batch_for(p, size, p->o->batch_set ? p->o->batch : 32);
	warmup = p->o->warmup_set ? p->o->warmup
		 : p->o->duration_set ? 10 : (p->o->iters / 10 > 1000 ? 1000 : p->o->iters / 10);
	r->warmup = warmup;
	r->batch = batch;
	sbuf = perf_buf_alloc(p, size);
	rbuf = perf_buf_alloc(p, size);
	if (!sbuf || !rbuf)
		return perf_err(p, -ENOMEM, "buffers for size %s", sz);

	memset(&ph, 0, sizeof(ph));
	ph.magic = htobe32(PERF_MAGIC);
	ph.idx = htobe32(idx);
	ph.size = htobe64(size);
	ph.batch = htobe32((__u32)batch);
	err = perf_send_ctl(p, &ph, sizeof(ph), perf_tag(p, T_PHASE, 0));
	if (!err)
		err = perf_recv_ctl(p, &ok, sizeof(ok), perf_tag(p, T_PHASE_OK, 0), MASK_NOFLAGS,
				    &st, p->timeout_ms);
	if (err)
		return perf_err(p, err, "size %s: starting", sz);
	if (be32toh(ok.status))
		return perf_err(p, (int)be32toh(ok.status), "size %s: the server refused", sz);

	/* Warm-up; the last message (an extra one) carries MARK. */
	if (p->mode == MODE_PINGPONG) {
		for (unsigned long i = 0; i <= warmup && !err; i++)
			err = pp_round(p, sbuf, rbuf, size, i == warmup ? F_MARK : 0, &sample);
	} else {
		for (unsigned long i = 0; i < warmup && !err; i += batch)
			err = st_batch(p, sbuf, size, warmup - i < batch ? warmup - i : batch, 0,
				       &sample);
		if (!err)
			err = st_batch(p, sbuf, size, 1, F_MARK, &sample);
	}
	if (err)
		return perf_err(p, err, "size %s: warm-up", sz);

	perf_snap_take(p, &s0);
	t0 = s0.t;
	while (!last) {
		unsigned long k = 1;

		if (p->o->duration_set) {
			last = xwu_now_ns() - t0 >= dur_ns;
			if (p->mode == MODE_STREAM)
				k = batch;
		} else if (p->mode == MODE_STREAM) {
			k = p->o->iters - n < batch ? p->o->iters - n : batch;
			last = n + k >= p->o->iters;
		} else {
			last = n + 1 >= p->o->iters;
		}
		/* SIGINT/SIGTERM: this round or batch is the phase's last, so
		 * the server ends it and sends its result as after the full
		 * phase (the waits only see cli_stop when nothing arrives for
		 * 200 ms, which a running ping-pong never lets happen). */
		if (cli_stop)
			last = true;
		if (p->mode == MODE_PINGPONG) {
			err = pp_round(p, sbuf, rbuf, size, last ? F_LAST : 0, &sample);
			if (!err)
				err = xwu_samples_add(&raw, sample / 1e3);
			if (!err) {
				double one = (sample / 1e3 - (double)p->think_us) / 2;

				err = xwu_samples_add(&lat, one > 0 ? one : 0);
			}
		} else {
			err = st_batch(p, sbuf, size, k, last ? F_LAST : 0, &sample);
			if (!err)
				err = xwu_samples_add(&lat, sample / 1e3);
		}
		if (err) {
			xwu_samples_free(&lat);
			xwu_samples_free(&raw);
			if (err == -EPROTO)
				return perf_err(p, err, "size %s, message %llu: wrong answer", sz,
					    (unsigned long long)n);
			return perf_err(p, err, "size %s, message %llu", sz, (unsigned long long)n);
		}
		n += k;
	}
	perf_snap_take(p, &s1);
	err = perf_recv_ctl(p, &res, sizeof(res), perf_tag(p, T_RESULT, 0), MASK_NOFLAGS, &st,
			    p->timeout_ms);
	if (err) {
		xwu_samples_free(&lat);
		xwu_samples_free(&raw);
		return perf_err(p, err, "size %s: waiting for the server's result", sz);
	}
	perf_result_decode(&res, &r->srv, &status);
	if (be32toh(res.magic) != PERF_MAGIC || status) {
		xwu_samples_free(&lat);
		xwu_samples_free(&raw);
		return perf_err(p, status ? status : -EPROTO, "size %s: the server's result", sz);
	}
	perf_side_delta(&r->cli, &s0, &s1, p->mode == MODE_PINGPONG ? n : lat.n);
	r->n = n;
	r->msgs = p->mode == MODE_PINGPONG ? 2 * n : n;
	r->elapsed_s = (double)(s1.t - s0.t) / 1e9;
	xwu_summarize(lat.v, lat.n, &r->lat);
	xwu_summarize(raw.v, raw.n, &r->raw);
	xwu_samples_free(&lat);
	xwu_samples_free(&raw);
	r->msg_rate = xwu_ratio((double)r->msgs, r->elapsed_s);
	r->mbps = xwu_ratio((double)r->msgs * (double)size / 1e6, r->elapsed_s);
	r->wakes_per_msg = p->mode == MODE_PINGPONG ?
		xwu_ratio((double)(perf_side_wakes(&r->cli) + perf_side_wakes(&r->srv)),
			  (double)r->msgs) :
		xwu_ratio((double)perf_side_wakes(&r->srv), (double)r->msgs);
	r->machine_cpu = xwu_ratio((double)r->cli.machine_busy_us, (double)r->msgs);
	r->proc_cpu = xwu_ratio((double)(r->cli.proc_user_us + r->cli.proc_sys_us),
				(double)r->msgs);
	r->srv_proc_cpu = xwu_ratio((double)(r->srv.proc_user_us + r->srv.proc_sys_us),
				(double)r->msgs);
	perf_bufs_release(p);
	return 0;
}

int perf_run_client(struct perf *p)
{
	static struct size_result res[MAX_SIZES];
	struct wire_ready rd = { 0 };
	unsigned long spin = 0;
	const char *peer = p->o->peer;
	char pbuf[256];
	int err, done = 0;

	perf_install_signals();
	if (p->o->peer_file) {
		/* Wait (up to the connect timeout) for the server to write it. */
		__u64 end = xwu_now_ns() + (__u64)(p->o->connect_timeout * 1e9);

		err = xwu_addr_file_wait(p->o->peer_file, pbuf, sizeof(pbuf), end, &cli_stop);
		if (err)
			return cli_fail(EXIT_RUNTIME, err, "%s: %s after %g s (is the server running?)",
					p->o->peer_file, err == -EINVAL ? "empty" : "no such file",
					p->o->connect_timeout);
		peer = pbuf;
	}
	err = xw_addr_parse(peer, &p->peer);
	if (err)
		return cli_usage("bad peer address '%s'%s%s", peer, p->o->peer_file ? " in " : "",
				 p->o->peer_file ? p->o->peer_file : "");
	if (p->a->encap_set && p->a->encap != p->peer.encap)
		return cli_usage("--encap %s does not match the peer address %s",
				 p->a->encap == XW_ENCAP_UDP ? "udp" : "eth", peer);
	p->a->encap = p->peer.encap;
	p->a->encap_set = true;
	xw_addr_format(&p->peer, p->peer_text, sizeof(p->peer_text));
	p->me.encap = p->peer.encap;

	if (perf_iface_open(p))
		return cli_fail(EXIT_RUNTIME, -EIO, "%s", p->err);
	err = client_connect(p, (__u32)p->o->nsizes, &rd);
	if (err)
		goto fail;
	if (p->wait == XW_WAIT_SPIN_YIELD || p->wait == XW_WAIT_SPIN_BLOCK ||
	    p->wait == XW_WAIT_DEFAULT || p->wait == XW_WAIT_ADAPTIVE)
		spin = p->spin_us ? p->spin_us : (unsigned long)((xw_block_cost_ns() + 500) / 1000);
	if (!cli_json)
		perf_text_header(p, spin);
	for (int i = 0; i < p->o->nsizes; i++) {
		err = client_phase(p, (unsigned int)i, p->o->sizes[i], &res[i]);
		if (err)
			goto fail;
		done++;
		if (!cli_json)
			perf_text_line(p, &res[i]);
		if (cli_stop)
			break; /* the phase was cut short: no further sizes */
	}
	if (cli_json)
		perf_report_client_json(p, &rd, spin, res, done);
	perf_ep_close(p);
	perf_iface_close(p);
	if (cli_stop)
		return cli_fail(EXIT_RUNTIME, -EINTR, "interrupted after %d of %d sizes", done,
				p->o->nsizes);
	return EXIT_OK;
fail:
	perf_ep_close(p);
	perf_iface_close(p);
	return cli_fail(EXIT_RUNTIME, err, "%s", p->err);
}
