// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The server of xdpwake pingpong / stream: a fresh endpoint for every
 * client, its CONFIG obeyed, each size served (receive, answer or
 * acknowledge, snapshots around the measured window) and its deltas sent
 * back as RESULT (the protocol: perf_proto.c).
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "perf.h"
#include "addrfile.h"
#include "measure.h"

/* Server side of one size: receive, answer (pingpong) or acknowledge each
 * batch (stream); snapshots after the MARK message and after the LAST. */
/* Post the receive of the next message into @buf again. */
static int repost(struct perf *p, void *buf, __u64 size, struct xw_request **rq)
{
	int err = xw_endpoint__irecv(p->ep, buf, size, perf_tag(p, T_DATA, 0), MASK_NOFLAGS, rq);

	if (err) {
		*rq = NULL;
		return perf_err(p, err, "posting a receive");
	}
	return 0;
}

static int serve_phase(struct perf *p, __u64 size, unsigned long batch, struct side *out)
{
	static struct xw_request *rq[MAX_BATCH];
	static unsigned char *bufs[MAX_BATCH];
	unsigned long W = p->mode == MODE_STREAM ? batch : 1, h = 0, r;
	struct wire_phase_ok ok = { .magic = htobe32(PERF_MAGIC), .status = 0 };
	struct xw_request *sreq;
	struct snap s0, s1;
	XW_OPTS(xw_status, st);
	unsigned char *sbuf;
	bool measuring = false, done = false, pending = false;
	__u64 msgs = 0;
	int err = 0;

	memset(rq, 0, sizeof(rq));
	memset(bufs, 0, sizeof(bufs));
	perf_snap_take(p, &s0);
	sbuf = perf_buf_alloc(p, size);
	for (unsigned long i = 0; sbuf && i < W; i++) {
		bufs[i] = perf_buf_alloc(p, size);
		if (!bufs[i])
			break;
	}
	if (!sbuf || !bufs[W - 1]) {
		ok.status = htobe32((__u32)-ENOMEM);
		perf_send_ctl(p, &ok, sizeof(ok), perf_tag(p, T_PHASE_OK, 0));
		return perf_err(p, -ENOMEM, "buffers for size %llu", (unsigned long long)size);
	}
	for (unsigned long i = 0; i < W; i++) {
		err = xw_endpoint__irecv(p->ep, bufs[i], size, perf_tag(p, T_DATA, 0), MASK_NOFLAGS,
					 &rq[i]);
		if (err) {
			rq[i] = NULL;
			err = perf_err(p, err, "posting a receive");
			goto out;
		}
	}
	err = perf_send_ctl(p, &ok, sizeof(ok), perf_tag(p, T_PHASE_OK, 0));
	if (err) {
		err = perf_err(p, err, "sending PHASE_OK");
		goto out;
	}
	while (!done) {
		unsigned int flags;

		err = perf_wait_req(rq[h], &st, p->timeout_ms);
		if (err) {
			err = perf_err(p, err, "waiting for message %llu of size %llu",
				   (unsigned long long)msgs, (unsigned long long)size);
			goto out;
		}
		rq[h] = NULL;
		if (st.error || st.msg_len != size) {
			err = perf_err(p, st.error ? st.error : -EPROTO,
				   "got a message of %zu bytes where %llu were expected", st.msg_len,
				   (unsigned long long)size);
			goto out;
		}
		flags = (unsigned int)(st.match & 0xFFFF);
		done = flags & F_LAST;
		/* A ping-pong answers first and posts the next receive after
		 * (as an MPI ping-pong: the answer is what the client waits
		 * for); a stream keeps its window of receives posted. */
		if (!done && p->mode != MODE_PINGPONG) {
			err = repost(p, bufs[h], size, &rq[h]);
			if (err)
				goto out;
		}
		r = h;
		h = (h + 1) % W;
		if (measuring)
			msgs++;
		/* The window opens before the answer to MARK goes out: the
		 * client starts measuring when it has that answer. */
		if (flags & F_MARK) {
			perf_snap_take(p, &s0);
			measuring = true;
		}
		perf_think(p->think_us);
		if (p->mode == MODE_PINGPONG) {
			err = perf_post_send(p, sbuf, size, perf_tag(p, T_DATA, flags), &sreq);
			if (!err) {
				int rerr = done ? 0 : repost(p, bufs[r], size, &rq[r]);

				err = perf_wait_req(sreq, &st, p->timeout_ms);
				if (!err)
					err = st.error;
				if (!err)
					err = rerr;
			}
		} else if (flags & F_BATCH_END) {
			err = perf_send_ctl(p, NULL, 0, perf_tag(p, T_ACK, flags));
		}
		if (err) {
			err = perf_err(p, err, "answering message %llu of size %llu",
				   (unsigned long long)msgs, (unsigned long long)size);
			goto out;
		}
	}
	perf_snap_take(p, &s1);
	perf_side_delta(out, &s0, &s1, msgs);
out:
	/* Receives still posted (the rest of a stream window): cancel them. */
	for (unsigned long i = 0; i < W; i++) {
		if (!rq[i])
			continue;
		if (xw_request__cancel(rq[i]) == 0 && xw_request__test(rq[i], NULL) == 1)
			continue;
		pending = true; /* in progress: it may still write its buffer */
	}
	if (!pending)
		perf_bufs_release(p);
	return err;
}

/* Wait for a client's CONFIG; stale messages of earlier sessions are
 * dropped.  1: got one; 0: stopped or --accept-timeout passed. */
static int accept_config(struct perf *p, struct wire_config *cfg, struct xw_status *st,
			 __u64 *recent, int nrecent, __u64 deadline)
{
	static unsigned char buf[4096];

	for (;;) {
		struct xw_request *req;
		__u64 nonce;
		bool seen = false;
		int err;

		err = xw_endpoint__irecv(p->ep, buf, sizeof(buf), TAG_MAGIC << 40, MASK_MAGIC,
					 &req);
		if (err)
			return perf_err(p, err, "posting a receive");
		for (;;) {
			err = xw_request__wait(req, st, 200);
			if (err != -ETIMEDOUT)
				break;
			if (cli_stop || (deadline && xwu_now_ns() >= deadline)) {
				if (xw_request__cancel(req) == 0)
					xw_request__test(req, NULL);
				return 0;
			}
		}
		if (err)
			return perf_err(p, err, "waiting for a client");
		if (((st->match & MASK_TYPE) >> 16) != T_CONFIG || st->error ||
		    st->msg_len != sizeof(*cfg))
			continue; /* left over from an earlier session */
		memcpy(cfg, buf, sizeof(*cfg));
		if (be32toh(cfg->magic) != PERF_MAGIC)
			continue;
		nonce = be64toh(cfg->nonce);
		for (int i = 0; i < nrecent; i++)
			seen |= recent[i] == nonce;
		if (seen)
			continue; /* a repeated CONFIG of a client already served */
		memmove(recent + 1, recent, (size_t)(nrecent - 1) * sizeof(*recent));
		recent[0] = nonce;
		return 1;
	}
}

/* Serve one client: CONFIG already received. */
static int serve_client(struct perf *p, const struct wire_config *cfg,
			const struct xw_status *cst)
{
	static struct wire_phase ph;
	struct wire_ready rd;
	struct side sides[MAX_SIZES];
	__u64 sizes[MAX_SIZES];
	unsigned long batches[MAX_SIZES];
	XW_OPTS(xw_status, st);
	__u32 nsizes = be32toh(cfg->nsizes), pol = be32toh(cfg->policy);
	__u32 old_policy = POLICY_KEEP, tmo = be32toh(cfg->timeout_ms);
	unsigned int wait = be32toh(cfg->wait), mode = be32toh(cfg->mode);
	int err = 0, status = 0, done = 0;

	memset(&rd, 0, sizeof(rd));
	p->peer = cst->src;
	xw_addr_format(&p->peer, p->peer_text, sizeof(p->peer_text));
	p->sess = (__u16)((cst->match >> 24) & 0xFFFF);
	if (be32toh(cfg->version) != PERF_VERSION) {
		status = -EPROTO;
		snprintf(rd.msg, sizeof(rd.msg), "server speaks version %u, client %u",
			 PERF_VERSION, be32toh(cfg->version));
	} else if ((mode != MODE_PINGPONG && mode != MODE_STREAM) || wait >= XW_WAIT_MAX ||
		   (pol != POLICY_KEEP && !xw_policy_name(pol)) || !nsizes ||
		   nsizes > MAX_SIZES || tmo < 10 || tmo > 3600000 ||
		   be32toh(cfg->think_us) > 1000000 || be32toh(cfg->spin_us) > 1000000 ||
		   be32toh(cfg->pull_spin) > XW_PULL_SPIN_MAX + 1) {
		status = -EINVAL;
		snprintf(rd.msg, sizeof(rd.msg),
			 "bad CONFIG (mode %u, wait %u, policy %u, %u sizes, pull spin %u)", mode,
			 wait, pol, nsizes, be32toh(cfg->pull_spin));
	}
	p->mode = (enum perf_mode)mode;
	p->think_us = be32toh(cfg->think_us);
	p->spin_us = be32toh(cfg->spin_us);
	p->pull_spin = be32toh(cfg->pull_spin) ? (long)be32toh(cfg->pull_spin) - 1 : -1;
	p->wait = (int)wait;
	p->timeout_ms = (int)tmo;
	p->policy = pol;
	if (!status && pol != POLICY_KEEP) {
		xw_iface__get_knob(p->ifc, "policy", (__u32)p->o->ep, &old_policy);
		status = xw_iface__set_knob(p->ifc, "policy", (__u32)p->o->ep, pol);
		if (status)
			snprintf(rd.msg, sizeof(rd.msg), "cannot set the policy: %s",
				 xw_strerror(status));
	}
	if (!status) {
		status = xw_endpoint__set_wait(p->ep, (enum xw_wait_strategy)wait,
					       (__u64)p->spin_us * 1000ULL);
		if (!status)
			status = xw_endpoint__set_pull_spin(p->ep, p->pull_spin >= 0
								   ? (__u32)p->pull_spin
								   : XW_PULL_SPIN_DEFAULT);
		if (!status && wait == XW_WAIT_NOTIFY)
			status = xw_endpoint__set_notify(p->ep, perf_noop_notify, NULL);
		if (status)
			snprintf(rd.msg, sizeof(rd.msg), "cannot set the wait strategy: %s",
				 xw_strerror(status));
	}
	rd.magic = htobe32(PERF_MAGIC);
	rd.version = htobe32(PERF_VERSION);
	rd.nonce = cfg->nonce;
	rd.status = htobe32((__u32)status);
	rd.ncpus = htobe32((__u32)sysconf(_SC_NPROCESSORS_ONLN));
	rd.block_cost_ns = htobe64(xw_block_cost_ns());
	if (p->timeout_ms < 10)
		p->timeout_ms = 5000;
	err = perf_send_ctl(p, &rd, sizeof(rd), perf_tag(p, T_READY, 0));
	if (err) {
		err = perf_err(p, err, "client %s: sending READY", p->peer_text);
		goto out;
	}
	if (status) {
		err = perf_err(p, status, "client %s: %s", p->peer_text, rd.msg);
		goto out;
	}
	if (!cli_json)
		perf_report_session_start(p, nsizes);
	for (__u32 i = 0; i < nsizes; i++) {
		struct wire_result res;

		err = perf_recv_ctl(p, &ph, sizeof(ph), perf_tag(p, T_PHASE, 0), MASK_NOFLAGS, &st,
			       p->timeout_ms);
		if (err) {
			err = perf_err(p, err, "client %s: waiting for size %u of %u", p->peer_text,
				   i + 1, nsizes);
			goto out;
		}
		sizes[i] = be64toh(ph.size);
		batches[i] = be32toh(ph.batch);
		if (be32toh(ph.magic) != PERF_MAGIC || sizes[i] > MAX_MSG_SIZE || !batches[i] ||
		    batches[i] > MAX_BATCH) {
			struct wire_phase_ok ok = { .magic = htobe32(PERF_MAGIC),
						    .status = htobe32((__u32)-EINVAL) };

			perf_send_ctl(p, &ok, sizeof(ok), perf_tag(p, T_PHASE_OK, 0));
			err = perf_err(p, -EINVAL, "client %s: bad PHASE", p->peer_text);
			goto out;
		}
		memset(&sides[i], 0, sizeof(sides[i]));
		err = serve_phase(p, sizes[i], batches[i], &sides[i]);
		if (err) {
			/* perr already says what; name the client */
			char tmp[sizeof(p->err)];

			snprintf(tmp, sizeof(tmp), "%s", p->err);
			perf_err(p, 0, "client %s, size %llu: %s", p->peer_text,
			     (unsigned long long)sizes[i], tmp);
			goto out;
		}
		perf_result_encode(&res, &sides[i], 0);
		err = perf_send_ctl(p, &res, sizeof(res), perf_tag(p, T_RESULT, 0));
		if (err) {
			err = perf_err(p, err, "client %s: sending the result", p->peer_text);
			goto out;
		}
		done++;
		if (!cli_json)
			perf_report_server_size(sizes[i], &sides[i]);
	}
out:
	if (old_policy != POLICY_KEEP)
		xw_iface__set_knob(p->ifc, "policy", (__u32)p->o->ep, old_policy);
	if (cli_json)
		perf_report_session_json(p, err, sizes, batches, sides, done);
	return err;
}

int perf_run_server(struct perf *p)
{
	__u64 recent[16] = { 0 }, deadline = 0;
	bool first = true;
	int err = 0, served = 0, failed = 0;

	perf_install_signals();
	p->policy = POLICY_KEEP;
	p->wait = XW_WAIT_DEFAULT;
	p->timeout_ms = 5000;
	if (perf_iface_open(p))
		return cli_fail(EXIT_RUNTIME, -EIO, "%s", p->err);
	if (p->o->accept_timeout > 0)
		deadline = xwu_now_ns() + (__u64)(p->o->accept_timeout * 1e9);
	while (!cli_stop) {
		struct wire_config cfg = { 0 };
		XW_OPTS(xw_status, st);

		p->wait = XW_WAIT_DEFAULT;
		p->spin_us = 0;
		p->pull_spin = -1;
		err = perf_ep_open(p, false);
		if (err)
			break;
		if (first) {
			if (p->o->addr_file) {
				err = xwu_addr_file_write(p->o->addr_file, p->me_text);
				if (err) {
					perf_err(p, err, "cannot write %s", p->o->addr_file);
					break;
				}
			}
			perf_report_listening(p);
			first = false;
		}
		err = accept_config(p, &cfg, &st, recent, 16, deadline);
		if (err == 1) {
			served++;
			deadline = p->o->accept_timeout > 0 ?
				xwu_now_ns() + (__u64)(p->o->accept_timeout * 1e9) : 0;
			err = serve_client(p, &cfg, &st);
			if (err) {
				failed++;
				if (!cli_json)
					cli_note("%s", p->err);
			}
			err = 0;
		} else if (err == 0) {
			perf_ep_close(p);
			break; /* stopped, or no client in time */
		}
		/* A fresh endpoint for the next client: see perf_proto.c. */
		perf_ep_close(p);
		if (err < 0 || (p->o->once && served))
			break;
	}
	perf_ep_close(p);
	perf_iface_close(p);
	if (err < 0)
		return cli_fail(EXIT_RUNTIME, err, "%s", p->err);
	if (!served && p->o->accept_timeout > 0 && !cli_stop)
		return cli_fail(EXIT_RUNTIME, -ETIMEDOUT, "no client within %g s",
				p->o->accept_timeout);
	return p->o->once && failed ? EXIT_RUNTIME : EXIT_OK;
}
