// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * ep.c - the FI_EP_RDM endpoint object: one xdpwake endpoint
 * (xw_endpoint__open on the domain's interface, the FI_XDPWAKE_* settings),
 * binding to an AV, CQs and counters (through their completion-report
 * interface, with the endpoint's struct xwfi_epref), enable, operation
 * flags, fi_cancel of posted receives, its name, and fi_close, which
 * lingers until what was sent is acknowledged.  The operations are in
 * msg.c and tagged.c (nosys.c: the sets not offered), the posted
 * operations and their completions in op.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ep.h"

static ssize_t ep_cancel(fid_t fid, void *ctx)
{
	struct xwfi_ep *ep = container_of(fid, struct xwfi_ep, ep.fid);
	ssize_t ret = -FI_ENOENT;

	pthread_mutex_lock(&ep->dom->lock);
	for (struct xwfi_op *op = ep->ops.next; op != &ep->ops; op = op->next) {
		XW_OPTS(xw_status, st);

		if (op->kind != XWFI_OP_RECV || op->ctx != ctx || !op->ctx)
			continue;
		ret = 0;
		xwfi_ep_touched(ep);
		if (xw_request__cancel(op->req))
			break; /* matched already: it completes normally */
		xw_request__test(op->req, &st);
		xwfi_op_unlink(op);
		st.error = -ECANCELED;
		st.len = 0;
		st.msg_len = 0;
		xwfi_op_complete(ep, op, &st);
		xwfi_op_free(ep, op);
		break;
	}
	pthread_mutex_unlock(&ep->dom->lock);
	return ret;
}

static int ep_getopt(fid_t fid, int level, int optname, void *optval, size_t *optlen)
{
	(void)fid, (void)level, (void)optname, (void)optval, (void)optlen;
	return -FI_ENOPROTOOPT;
}

static int ep_setopt(fid_t fid, int level, int optname, const void *optval, size_t optlen)
{
	(void)fid, (void)level, (void)optname, (void)optval, (void)optlen;
	return -FI_ENOPROTOOPT;
}

static int no_ctx(struct fid_ep *sep, int index, void *attr, struct fid_ep **ep, void *context)
{
	(void)sep, (void)index, (void)attr, (void)ep, (void)context;
	return -FI_ENOSYS;
}

static int no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		     struct fid_ep **tx_ep, void *context)
{
	return no_ctx(sep, index, attr, tx_ep, context);
}

static int no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
		     struct fid_ep **rx_ep, void *context)
{
	return no_ctx(sep, index, attr, rx_ep, context);
}

static ssize_t size_left(struct fid_ep *ep)
{
	(void)ep;
	return 1024;
}

static struct fi_ops_ep ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = ep_cancel,
	.getopt = ep_getopt,
	.setopt = ep_setopt,
	.tx_ctx = no_tx_ctx,
	.rx_ctx = no_rx_ctx,
	.rx_size_left = size_left,
	.tx_size_left = size_left,
};

/* ---- connection management: only names --------------------------------------------- */

static int cm_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct xwfi_ep *ep = container_of(fid, struct xwfi_ep, ep.fid);
	size_t n = sizeof(ep->self);

	if (!addrlen)
		return -FI_EINVAL;
	if (*addrlen >= n && !addr)
		return -FI_EINVAL;
	if (*addrlen < n) {
		*addrlen = n;
		return -FI_ETOOSMALL;
	}
	memcpy(addr, &ep->self, n);
	*addrlen = n;
	return 0;
}

static int cm_setname(fid_t fid, void *addr, size_t addrlen)
{
	(void)fid, (void)addr, (void)addrlen;
	return -FI_ENOSYS;
}

static int cm_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	(void)ep, (void)addr, (void)addrlen;
	return -FI_ENOSYS;
}

static int cm_connect(struct fid_ep *ep, const void *addr, const void *param, size_t paramlen)
{
	(void)ep, (void)addr, (void)param, (void)paramlen;
	return -FI_ENOSYS;
}

static int cm_listen(struct fid_pep *pep)
{
	(void)pep;
	return -FI_ENOSYS;
}

static int cm_accept(struct fid_ep *ep, const void *param, size_t paramlen)
{
	(void)ep, (void)param, (void)paramlen;
	return -FI_ENOSYS;
}

static int cm_reject(struct fid_pep *pep, fid_t handle, const void *param, size_t paramlen)
{
	(void)pep, (void)handle, (void)param, (void)paramlen;
	return -FI_ENOSYS;
}

static int cm_shutdown(struct fid_ep *ep, uint64_t flags)
{
	(void)ep, (void)flags;
	return -FI_ENOSYS;
}

static int cm_join(struct fid_ep *ep, const void *addr, uint64_t flags, struct fid_mc **mc,
		   void *context)
{
	(void)ep, (void)addr, (void)flags, (void)mc, (void)context;
	return -FI_ENOSYS;
}

static struct fi_ops_cm cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = cm_setname,
	.getname = cm_getname,
	.getpeer = cm_getpeer,
	.connect = cm_connect,
	.listen = cm_listen,
	.accept = cm_accept,
	.reject = cm_reject,
	.shutdown = cm_shutdown,
	.join = cm_join,
};

/* ---- fid: bind, control, close ---------------------------------------------------- */

static int ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct xwfi_ep *ep = container_of(fid, struct xwfi_ep, ep.fid);
	int err = 0;

	if (!bfid)
		return -FI_EINVAL;
	pthread_mutex_lock(&ep->dom->lock);
	switch (bfid->fclass) {
	case FI_CLASS_AV:
		if (ep->av) {
			err = -FI_EINVAL;
			break;
		}
		ep->av = container_of(bfid, struct xwfi_av, av.fid);
		ep->av->refs++;
		break;
	case FI_CLASS_CQ: {
		struct xwfi_cq *cq = container_of(bfid, struct xwfi_cq, cq.fid);

		if (!(flags & (FI_TRANSMIT | FI_RECV))) {
			err = -FI_EBADFLAGS;
			break;
		}
		if (((flags & FI_TRANSMIT) && ep->tcq) || ((flags & FI_RECV) && ep->rcq)) {
			err = -FI_EINVAL;
			break;
		}
		err = xwfi_cq_attach(cq, &ep->ref);
		if (err)
			break;
		if (flags & FI_TRANSMIT) {
			ep->tcq = cq;
			ep->tsel = flags & FI_SELECTIVE_COMPLETION;
		}
		if (flags & FI_RECV) {
			ep->rcq = cq;
			ep->rsel = flags & FI_SELECTIVE_COMPLETION;
		}
		break;
	}
	case FI_CLASS_CNTR: {
		struct xwfi_cntr *c = container_of(bfid, struct xwfi_cntr, cntr.fid);

		if (!(flags & (FI_SEND | FI_RECV | FI_TRANSMIT))) {
			err = -FI_EBADFLAGS;
			break;
		}
		/* a second counter would replace the first one, left attached */
		if (((flags & (FI_SEND | FI_TRANSMIT)) && ep->tcntr) ||
		    ((flags & FI_RECV) && ep->rcntr)) {
			err = -FI_EINVAL;
			break;
		}
		err = xwfi_cntr_attach(c, &ep->ref);
		if (err)
			break;
		if (flags & (FI_SEND | FI_TRANSMIT))
			ep->tcntr = c;
		if (flags & FI_RECV)
			ep->rcntr = c;
		break;
	}
	case FI_CLASS_EQ:
		break; /* nothing to report on RDM */
	default:
		err = -FI_EINVAL;
	}
	pthread_mutex_unlock(&ep->dom->lock);
	return err;
}

static int ep_control(struct fid *fid, int command, void *arg)
{
	struct xwfi_ep *ep = container_of(fid, struct xwfi_ep, ep.fid);
	int err = 0;

	pthread_mutex_lock(&ep->dom->lock);
	switch (command) {
	case FI_ENABLE:
		if (!ep->av || (!ep->tcq && !ep->tcntr) || (!ep->rcq && !ep->rcntr))
			err = -FI_ENOCQ;
		if (!ep->av)
			err = -FI_ENOAV;
		if (!err)
			ep->enabled = true;
		break;
	case FI_GETOPSFLAG: {
		uint64_t *f = arg;

		if (!f || !(*f & (FI_TRANSMIT | FI_RECV))) {
			err = -FI_EINVAL;
			break;
		}
		*f = (*f & FI_TRANSMIT) ? ep->tx_flags : ep->rx_flags;
		break;
	}
	case FI_SETOPSFLAG: {
		uint64_t *f = arg, v;

		if (!f || !(*f & (FI_TRANSMIT | FI_RECV))) {
			err = -FI_EINVAL;
			break;
		}
		/* only what the provider honours (xwfi.h) */
		v = *f & ~(FI_TRANSMIT | FI_RECV);
		if (v & ~((*f & FI_TRANSMIT) ? XWFI_TX_OP_FLAGS : XWFI_RX_OP_FLAGS)) {
			err = -FI_EBADFLAGS;
			break;
		}
		if (*f & FI_TRANSMIT)
			ep->tx_flags = v;
		else
			ep->rx_flags = v;
		break;
	}
	default:
		err = -FI_ENOSYS;
	}
	pthread_mutex_unlock(&ep->dom->lock);
	return err;
}

/* What the reliability layer and the local path did for this endpoint, at
 * FI_LOG_LEVEL=info: how a job learns that its messages crossed a lossy
 * network, or waited for a full local ring or went through the fallback of
 * the single copy. */
static void log_stats(struct xwfi_ep *ep)
{
	struct xw_endpoint_stats s = { .sz = sizeof(s) };
	char a[64];

	if (!fi_log_enabled(&xwfi_prov, FI_LOG_INFO, FI_LOG_EP_CTRL) ||
	    xw_endpoint__stats(ep->ref.xep, &s) || xw_addr_format(&ep->self, a, sizeof(a)) < 0)
		return;
	FI_INFO(&xwfi_prov, FI_LOG_EP_CTRL,
		"endpoint %s closed: tx_frames %llu rx_frames %llu retransmits %llu "
		"rx_out_of_order %llu rx_dup_frames %llu crc_failures %llu sessions %llu "
		"conn_timeouts %llu peer_resets %llu peer_closes %llu live_probes %llu live_replies %llu "
		"live_local %llu peers_gone %llu rto_timeouts %llu sack_rtx %llu tail_probes %llu lost_rtx %llu "
		"spurious_rtx %llu rto_us %llu srtt_us %llu local_tx_frames %llu "
		"local_rx_frames %llu local_lost %llu local_rx_bad %llu local_wake_runs %llu "
		"local_ring_full %llu local_rx_held %llu local_cma_reads %llu local_cma_bytes %llu "
		"local_cma_fallbacks %llu local_cma_marks %llu local_cma_done %llu "
		"sock_rx_ring_full %llu sock_rx_fill_empty %llu sock_rx_dropped %llu\n",
		a, (unsigned long long)s.tx_frames, (unsigned long long)s.rx_frames,
		(unsigned long long)s.retransmits, (unsigned long long)s.rx_out_of_order,
		(unsigned long long)s.rx_dup_frames, (unsigned long long)s.crc_failures,
		(unsigned long long)s.sessions, (unsigned long long)s.conn_timeouts,
		(unsigned long long)s.peer_resets, (unsigned long long)s.peer_closes,
		(unsigned long long)s.live_probes,
		(unsigned long long)s.live_replies, (unsigned long long)s.live_local,
		(unsigned long long)s.peers_gone, (unsigned long long)s.rto_timeouts, (unsigned long long)s.sack_rtx,
		(unsigned long long)s.tail_probes, (unsigned long long)s.lost_rtx,
		(unsigned long long)s.spurious_rtx, (unsigned long long)(s.rto_ns / 1000),
		(unsigned long long)(s.srtt_ns / 1000), (unsigned long long)s.local_tx_frames,
		(unsigned long long)s.local_rx_frames, (unsigned long long)s.local_lost,
		(unsigned long long)s.local_rx_bad, (unsigned long long)s.local_wake_runs,
		(unsigned long long)s.local_ring_full, (unsigned long long)s.local_rx_held,
		(unsigned long long)s.local_cma_reads, (unsigned long long)s.local_cma_bytes,
		(unsigned long long)s.local_cma_fallbacks, (unsigned long long)s.local_cma_marks,
		(unsigned long long)s.local_cma_done, (unsigned long long)s.sock_rx_ring_full,
		(unsigned long long)s.sock_rx_fill_empty, (unsigned long long)s.sock_rx_dropped);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * fi_close lingers, as a TCP close with SO_LINGER: a send completes once
 * its buffer may be reused (FI_INJECT_COMPLETE), before its peer
 * acknowledged it, and the library drops what is unacknowledged when the
 * endpoint closes - an application that closes right after its last send
 * (MPI_Finalize) would lose it.  So progress runs until every peer has
 * acknowledged what was sent to it (peers_unacked 0) or was given up: the
 * library gives a peer whose endpoint closed or whose process died up
 * within about a second (its liveness probe's answer); one that answers
 * nothing takes its give-up time (60 s), longer than a close should wait:
 * the wait is bounded at 6 s, and what is still unacknowledged then is
 * dropped, with a warning.  Then the acks we owe go out: the library
 * delays an ack up to 200 us after a frame and drops it with the endpoint,
 * which would leave a peer lingering on its own close (MPI_Finalize on both
 * sides) until it gives us up.
 */
#define XWFI_LINGER_MS 6000
#define XWFI_ACK_FLUSH_MS 2

static void ep_linger(struct xwfi_ep *ep)
{
	struct xw_waitable it = { .ep = ep->ref.xep };
	XW_OPTS(xw_wait_opts, wo, .timeout_set = true, .timeout_ms = 1, .eps_no_unexpected = true);
	XW_OPTS(xw_wait_opts, fo, .timeout_set = true, .timeout_ms = XWFI_ACK_FLUSH_MS,
		.eps_no_unexpected = true);
	uint64_t start = mono_ms();

	for (int i = 0; i < 4 * XWFI_LINGER_MS; i++) {
		XW_OPTS(xw_endpoint_stats, st);

		if (xw_endpoint__stats(ep->ref.xep, &st) || !st.peers_unacked)
			break;
		if (mono_ms() - start >= XWFI_LINGER_MS) {
			FI_WARN(&xwfi_prov, FI_LOG_EP_CTRL,
				"closing with data to %llu peer(s) unacknowledged after %d ms\n",
				(unsigned long long)st.peers_unacked, XWFI_LINGER_MS);
			break;
		}
		/* a pass, then asleep until a frame or 1 ms (timers run) */
		int r = xw_wait_any(&it, 1, &wo);

		if (r < 0 && r != -ETIMEDOUT) {
			struct timespec ts = { .tv_nsec = 250000 };

			xw_endpoint__progress(ep->ref.xep);
			nanosleep(&ts, NULL);
		}
	}
	/* past every delayed ack's deadline, then a pass that sends them */
	xw_wait_any(&it, 1, &fo);
	xw_endpoint__progress(ep->ref.xep);
}

static int ep_close(struct fid *fid)
{
	struct xwfi_ep *ep = container_of(fid, struct xwfi_ep, ep.fid);
	struct xwfi_domain *dom = ep->dom;

	/* No new operation; then linger without the domain lock (the other
	 * endpoints of the domain go on meanwhile). */
	pthread_mutex_lock(&dom->lock);
	ep->enabled = false;
	pthread_mutex_unlock(&dom->lock);
	if (ep->ref.xep)
		ep_linger(ep);
	pthread_mutex_lock(&dom->lock);
	/* The library drops pending requests with the endpoint. */
	while (ep->ops.next != &ep->ops) {
		struct xwfi_op *op = ep->ops.next;

		xwfi_op_unlink(op);
		xwfi_op_free(ep, op);
	}
	while (ep->spare) {
		struct xwfi_op *op = ep->spare;

		ep->spare = op->next;
		free(op);
	}
	while (ep->claims) {
		struct xwfi_claim *c = ep->claims;

		ep->claims = c->next;
		free(c);
	}
	if (ep->tcq)
		xwfi_cq_detach(ep->tcq, &ep->ref);
	if (ep->rcq && ep->rcq != ep->tcq)
		xwfi_cq_detach(ep->rcq, &ep->ref);
	if (ep->tcntr)
		xwfi_cntr_detach(ep->tcntr, &ep->ref);
	if (ep->rcntr && ep->rcntr != ep->tcntr)
		xwfi_cntr_detach(ep->rcntr, &ep->ref);
	if (ep->av)
		ep->av->refs--;
	if (ep->ref.xep) {
		log_stats(ep);
		xw_endpoint__close(ep->ref.xep);
	}
	dom->refs--;
	dom->neps--;
	pthread_mutex_unlock(&dom->lock);
	free(ep);
	return 0;
}

static struct fi_ops ep_fi_ops = XWFI_FI_OPS(ep_close, ep_bind, ep_control);

/* ---- open ----------------------------------------------------------------------------- */

static int xep_open(struct xwfi_ep *ep, const struct fi_info *info)
{
	XW_OPTS(xw_endpoint_opts, o, .queue = XW_QUEUE_ANY,
		.pin_root = xwfi_params.pin_root && *xwfi_params.pin_root ? xwfi_params.pin_root
									   : NULL);
	int first = 1, last = XW_MAX_ENDPOINTS - 1, err = -EBUSY;
	const char *q = xwfi_params.queue;

	if (q && *q && strcmp(q, "any")) {
		char *end;
		unsigned long v = strtoul(q, &end, 10);

		if (*end || end == q || v > 4095) {
			FI_WARN(&xwfi_prov, FI_LOG_EP_CTRL,
				"FI_XDPWAKE_QUEUE: '%s' is neither a queue number nor any\n", q);
			return -FI_EINVAL;
		}
		o.queue = (__u32)v;
	}

	if (xwfi_params.encap && !strcmp(xwfi_params.encap, "udp"))
		o.encap = XW_ENCAP_UDP;
	else if (xwfi_params.encap && *xwfi_params.encap && strcmp(xwfi_params.encap, "eth")) {
		FI_WARN(&xwfi_prov, FI_LOG_EP_CTRL, "FI_XDPWAKE_ENCAP: unknown '%s'\n",
			xwfi_params.encap);
		return -FI_EINVAL;
	}
	if (xwfi_params.policy && *xwfi_params.policy) {
		int p = xw_policy_parse(xwfi_params.policy);

		if (p < 0) {
			FI_WARN(&xwfi_prov, FI_LOG_EP_CTRL, "FI_XDPWAKE_POLICY: unknown '%s'\n",
				xwfi_params.policy);
			return -FI_EINVAL;
		}
		o.policy_set = true;
		o.policy = (__u32)p;
	}
	if (xwfi_params.wait && *xwfi_params.wait) {
		int s = xw_wait_strategy_parse(xwfi_params.wait);

		if (s < 0) {
			FI_WARN(&xwfi_prov, FI_LOG_EP_CTRL, "FI_XDPWAKE_WAIT: unknown '%s'\n",
				xwfi_params.wait);
			return -FI_EINVAL;
		}
		o.wait_strategy = (__u32)s;
	}
	if (xwfi_params.spin_usecs > 0)
		o.spin_ns = (__u64)xwfi_params.spin_usecs * 1000; /* the parameter is in usecs */
	if (xwfi_params.pull_spin >= 0) {
		if ((unsigned int)xwfi_params.pull_spin > XW_PULL_SPIN_MAX) {
			FI_WARN(&xwfi_prov, FI_LOG_EP_CTRL,
				"FI_XDPWAKE_PULL_SPIN: %d above %u\n", xwfi_params.pull_spin,
				XW_PULL_SPIN_MAX);
			return -FI_EINVAL;
		}
		o.pull_spin_set = true;
		o.pull_spin = (__u32)xwfi_params.pull_spin;
	}
	if (xwfi_params.give_up_ms > 0)
		o.give_up_ms = (__u32)xwfi_params.give_up_ms;
	/* The id of the info's source address (FI_SOURCE node/service, the
	 * hints' src_addr, FI_XDPWAKE_EP_ID) is the one opened, except the
	 * default 1, from which the first free id is taken. */
	if (info->src_addr && info->src_addrlen == sizeof(struct xw_addr)) {
		struct xw_addr src; /* the info's bytes, of any alignment */

		memcpy(&src, info->src_addr, sizeof(src));
		if (src.ep != 1)
			first = last = src.ep;
	}
	if (xwfi_params.ep_id >= 0)
		first = last = xwfi_params.ep_id;
	/* An id found busy on the way is not worth a warning (only the last
	 * one tried, if every id is). */
	for (int id = first; id <= last && err == -EBUSY; id++) {
		xwfi_log_hold();
		err = xw_endpoint__open(ep->dom->ifname, (__u16)id, &o, &ep->ref.xep);
		xwfi_log_release(err == -EBUSY && id < last);
	}
	if (err) {
		FI_WARN(&xwfi_prov, FI_LOG_EP_CTRL, "cannot open an xdpwake endpoint on %s: %s\n",
			ep->dom->ifname, xw_strerror(err));
		ep->ref.xep = NULL;
		return xwfi_err(err);
	}
	err = xw_endpoint__addr(ep->ref.xep, &ep->self);
	if (err) {
		xw_endpoint__close(ep->ref.xep);
		ep->ref.xep = NULL;
		return xwfi_err(err);
	}
	/* FI_XDPWAKE_WATCHDOG_USECS: a rank that computes still answers */
	if (xwfi_params.watchdog_usecs > 0) {
		err = xw_endpoint__set_watchdog(ep->ref.xep, (__u32)xwfi_params.watchdog_usecs);
		if (err)
			FI_WARN(&xwfi_prov, FI_LOG_EP_CTRL,
				"FI_XDPWAKE_WATCHDOG_USECS=%d: no watchdog: %s\n",
				xwfi_params.watchdog_usecs, xw_strerror(err));
	}
	return 0;
}

int xwfi_ep_open(struct fid_domain *domain, struct fi_info *info, struct fid_ep **epp,
		 void *context)
{
	struct xwfi_domain *dom = container_of(domain, struct xwfi_domain, dom);
	struct xwfi_ep *ep;
	int err;

	if (!info || !info->ep_attr || info->ep_attr->type != FI_EP_RDM || !epp)
		return -FI_EINVAL;
	/* an info changed after fi_getinfo: nothing it does not grant */
	if (info->caps & ~(XWFI_CAPS | FI_REMOTE_CQ_DATA))
		return -FI_EINVAL;
	if ((info->tx_attr && (info->tx_attr->op_flags & ~XWFI_TX_OP_FLAGS)) ||
	    (info->rx_attr && (info->rx_attr->op_flags & ~XWFI_RX_OP_FLAGS)))
		return -FI_EBADFLAGS;
	if (info->domain_attr && info->domain_attr->name &&
	    strcmp(info->domain_attr->name, dom->ifname))
		return -FI_EINVAL;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	ep->dom = dom;
	ep->caps = info->caps ? info->caps : (FI_MSG | FI_TAGGED | FI_DIRECTED_RECV);
	ep->tx_flags = info->tx_attr ? info->tx_attr->op_flags : 0;
	ep->rx_flags = info->rx_attr ? info->rx_attr->op_flags : 0;
	ep->ops.next = ep->ops.prev = &ep->ops;
	ep->ep.fid.fclass = FI_CLASS_EP;
	ep->ep.fid.context = context;
	ep->ep.fid.ops = &ep_fi_ops;
	ep->ep.ops = &ep_ops;
	ep->ep.cm = &cm_ops;
	ep->ep.msg = &xwfi_msg_ops;
	ep->ep.tagged = &xwfi_tagged_ops;
	ep->ep.rma = &xwfi_rma_ops;
	ep->ep.atomic = &xwfi_atomic_ops;
	ep->ep.collective = &xwfi_collective_ops;
	ep->ref.progress = xwfi_ep_ref_progress;
	ep->ref.idle = xwfi_ep_ref_idle;
	pthread_mutex_lock(&dom->lock);
	if (dom->neps == XWFI_DOMAIN_EPS) {
		pthread_mutex_unlock(&dom->lock);
		FI_WARN(&xwfi_prov, FI_LOG_EP_CTRL,
			"%s: this process has %d endpoints open on it, the most a domain takes\n",
			dom->ifname, XWFI_DOMAIN_EPS);
		free(ep);
		return -FI_ENOSPC;
	}
	dom->neps++; /* held while it opens */
	pthread_mutex_unlock(&dom->lock);
	err = xep_open(ep, info);
	pthread_mutex_lock(&dom->lock);
	if (err) {
		dom->neps--;
		pthread_mutex_unlock(&dom->lock);
		free(ep);
		return err;
	}
	dom->refs++;
	pthread_mutex_unlock(&dom->lock);
	*epp = &ep->ep;
	return 0;
}

