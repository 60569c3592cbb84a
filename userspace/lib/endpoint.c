// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Endpoints: open and close (the program on the interface, shared per
 * process (ifref.c), an AF_XDP port, the endpoint's entries in the
 * program's maps, its wake ring, the local inbox and the protocol engine),
 * the engine's callbacks (clock, transmit: to the port, or to the local
 * path for a peer on this host), the sink the port and the local path hand
 * received frames to, statistics.  The other parts of the endpoint layer
 * are listed in endpoint_int.h.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <net/if.h>

#include "crc32c.h"
#include "internal.h"
#include "engine.h"
#include "local.h"
#include "port.h"
#include "wait.h"
#include "endpoint_int.h"
#include "testhook.h"

#define XWI_DEFAULT_UMEM_FRAMES 4096

/* ---- engine callbacks -------------------------------------------------- */

static int ep_send(void *ctx, const struct xw_addr *dst, const struct xw_hdr *h,
		   const void *payload, size_t len)
{
	struct xw_endpoint *ep = ctx;

	/* A peer on this host and interface: through its inbox. */
	if (xwi_local_is_local(ep->local, dst))
		return xwi_local_send(ep->local, dst, &ep->enc, h, payload, len);
	return xwi_port_tx(ep->port, &ep->enc, dst, h, payload, len, false);
}

/* The same, the frame's CRC32C computed while the port copies it. */
static int ep_send_crc(void *ctx, const struct xw_addr *dst, const struct xw_hdr *h,
		       const void *payload, size_t len)
{
	struct xw_endpoint *ep = ctx;

	if (xwi_local_is_local(ep->local, dst)) {
		struct xw_hdr hc = *h;

		hc.csum = htonl(xwi_crc32c(xwi_crc32c(0, &hc, sizeof(hc)), payload, len));
		return xwi_local_send(ep->local, dst, &ep->enc, &hc, payload, len);
	}
	return xwi_port_tx(ep->port, &ep->enc, dst, h, payload, len, true);
}

/* Is the peer endpoint alive?  Known here for a peer on this host (its
 * inbox open, its process there; a stopped process is alive); a peer on
 * another host is asked with a PROBE, which its XDP program answers. */
static int ep_alive(void *ctx, const struct xw_addr *peer)
{
	struct xw_endpoint *ep = ctx;

	if (xwi_local_is_local(ep->local, peer))
		return xwi_local_alive(ep->local, peer->ep);
	return -EOPNOTSUPP;
}

/* Frames of ours still in a local peer's inbox, unread? */
static int ep_unread(void *ctx, const struct xw_addr *peer)
{
	struct xw_endpoint *ep = ctx;

	return xwi_local_is_local(ep->local, peer) ? xwi_local_unread(ep->local, peer->ep) : 0;
}

/* A peer on this host is reached through its inbox: lossless. */
static bool ep_lossless(void *ctx, const struct xw_addr *peer)
{
	struct xw_endpoint *ep = ctx;

	return xwi_local_is_local(ep->local, peer);
}

/* A large message of a peer on this host, read from its buffer. */
static int ep_cma_read(void *ctx, const struct xw_addr *peer, __u64 addr, void *buf, size_t len)
{
	struct xw_endpoint *ep = ctx;

	return xwi_local_read(ep->local, peer->ep, addr, buf, len);
}

/* A large message of a peer on this host, read: a mark in its inbox. */
static int ep_cma_done(void *ctx, const struct xw_addr *peer, __u32 msg_id, __u32 session)
{
	struct xw_endpoint *ep = ctx;

	return xwi_local_done(ep->local, peer, &ep->enc, msg_id, session);
}

/* The engine's early kick of an application's one-frame message (under
 * the port lock, as every engine call). */
static void ep_kick(void *ctx)
{
	struct xw_endpoint *ep = ctx;

	xwi_port_flush(ep->port);
}

/* The engine's clock: one reading per progress pass (the pass is short
 * next to every timer), a fresh one outside passes. */
static __u64 ep_now(void *ctx)
{
	struct xw_endpoint *ep = ctx;

	if (ep->pass_now)
		return ep->pass_now;
	ep->eng_t = xwi_now_ns();
	return ep->eng_t;
}

/* The peer's session goes into the XDP program's `conns` map, so frames
 * with another session are dropped there already. */
static void ep_conn_event(void *ctx, const struct xw_addr *peer, __u32 session)
{
	struct xw_endpoint *ep = ctx;
	struct xw_conn_key k = {};
	int fd;

	if (!ep->registered || !ep->ifc)
		return;
	fd = xw_iface__map_fd(ep->ifc, "conns");
	if (fd < 0)
		return;
	if (peer->encap == XW_ENCAP_UDP)
		k.peer_ip = peer->ip;
	else
		memcpy(k.peer_mac, peer->mac, sizeof(k.peer_mac));
	k.src_ep = peer->ep;
	k.dst_ep = ep->id;
	/* Best effort: without the entry the library checks alone. */
	if (session)
		bpf_map_update_elem(fd, &k, &session, BPF_ANY);
	else
		bpf_map_delete_elem(fd, &k);
	/* The XDP program's copy of its last lookup is stale now. */
	__atomic_fetch_add(&ep->shared->conns_gen, 1, __ATOMIC_SEQ_CST);
}

/* A peer given up fails the application's requests with it: said once,
 * with why (what the engine waited for and how long, or how it knows the
 * peer is gone). */
static void ep_gave_up(void *ctx, const struct xw_addr *peer, int err, const char *why,
		       __u64 silent_ns, __u64 probing_ns)
{
	struct xw_endpoint *ep = ctx;
	char a[XW_ADDR_STRLEN];

	if (xw_addr_format(peer, a, sizeof(a)) < 0)
		snprintf(a, sizeof(a), "(unprintable address)");
	if (err == -ETIMEDOUT)
		xwi_warn("endpoint %u: peer %s given up, its requests fail with -ETIMEDOUT: %s "
			 "for %llu ms, our liveness probes unanswered for %llu ms (the bound: "
			 "give_up_ms, FI_XDPWAKE_GIVE_UP_MS in the provider)",
			 ep->id, a, why, (unsigned long long)(silent_ns / 1000000),
			 (unsigned long long)(probing_ns / 1000000));
	else
		xwi_warn("endpoint %u: peer %s is gone, its requests fail with %d (%s): %s, "
			 "silent for %llu ms",
			 ep->id, a, err, xw_strerror(err), why,
			 (unsigned long long)(silent_ns / 1000000));
}

static const struct xwi_engine_ops engine_ops = {
	.send = ep_send,
	.send_crc = ep_send_crc,
	.alive = ep_alive,
	.unread = ep_unread,
	.now_ns = ep_now,
	.conn_event = ep_conn_event,
	.kick = ep_kick,
	.lossless = ep_lossless,
	.cma_read = ep_cma_read,
	.cma_done = ep_cma_done,
	.gave_up = ep_gave_up,
};

/* One received frame for the endpoint went to its engine (@rc), from the
 * port or (@local) from the local path, under the port lock.  -ENOBUFS: the
 * engine refused a local frame (it stays in the inbox, taken again later:
 * not counted now). */
static int delivered(struct xw_endpoint *ep, int rc, bool local)
{
	__atomic_store_n(&ep->quiet, false, __ATOMIC_RELAXED);
	if (rc == -ENOBUFS && local)
		return rc;
	ep->consumed++;
	__atomic_store_n(&ep->shared->consumed, ep->consumed, __ATOMIC_RELEASE);
	ep->st.rx_frames++;
	if (rc == -EPROTO)
		ep->st.rx_bad++;
	return rc;
}

/* The endpoint's sink for the port. */
static void ep_deliver(void *ctx, const struct xw_addr *src, const struct xw_hdr *h,
		       const struct iovec *iov, unsigned int n, size_t len)
{
	struct xw_endpoint *ep = ctx;

	delivered(ep, xwi_engine_rx_iov(ep->eng, src, h, iov, n, len), false);
}

/* The endpoint's sink for the local path. */
static int ep_deliver_local(void *ctx, const struct xw_addr *src, const struct xw_hdr *h,
			    const void *payload, size_t len)
{
	struct xw_endpoint *ep = ctx;

	return delivered(ep, xwi_engine_rx_local(ep->eng, src, h, payload, len), true);
}

/* A local peer's mark in our inbox: it read our large message (not a
 * frame: not counted in `consumed`, as its mark is not in `produced`). */
static void ep_done_local(void *ctx, const struct xw_addr *src, __u32 msg_id, __u32 session)
{
	struct xw_endpoint *ep = ctx;

	__atomic_store_n(&ep->quiet, false, __ATOMIC_RELAXED);
	xwi_engine_cma_done(ep->eng, src, msg_id, session);
}

/* ---- open / close ------------------------------------------------------ */

int xwi_ep_map_fd(struct xw_endpoint *ep, const char *name)
{
	return xw_iface__map_fd(ep->ifc, name);
}

static int setup_encap(struct xw_endpoint *ep, const struct xw_endpoint_opts *o)
{
	struct xw_iface *ifc = ep->ifc;
	__u32 cur_encap = 0, cur_et = 0, cur_port = 0;
	__u32 want = XWI_OPT(o, encap, 0) ? XWI_OPT(o, encap, 0) : XW_ENCAP_ETH;
	__u32 et = XWI_OPT(o, ethertype, 0), port = XWI_OPT(o, udp_port, 0);
	int err;

	if (want != XW_ENCAP_ETH && want != XW_ENCAP_UDP)
		return -EINVAL;
	xw_iface__get_knob(ifc, "encap", 0, &cur_encap);
	xw_iface__get_knob(ifc, "ethertype", 0, &cur_et);
	xw_iface__get_knob(ifc, "udp_port", 0, &cur_port);
	if (want == XW_ENCAP_ETH && et && et != cur_et) {
		xwi_err("%s uses EtherType %#x; an endpoint cannot ask for %#x",
			xw_iface__name(ifc), cur_et, et);
		return -EBUSY;
	}
	if (want == XW_ENCAP_UDP && port && port != cur_port) {
		xwi_err("%s uses UDP port %u; an endpoint cannot ask for %u", xw_iface__name(ifc),
			cur_port, port);
		return -EBUSY;
	}
	if (!(cur_encap & want)) {
		err = xw_iface__set_knob(ifc, "encap", 0, cur_encap | want);
		if (err)
			return err;
	}
	ep->enc.encap = want;
	ep->enc.ethertype = (__u16)cur_et;
	ep->enc.udp_port = (__u16)cur_port;
	return 0;
}

static int engine_setup(struct xw_endpoint *ep, const struct xw_endpoint_opts *o,
			const struct xwi_test_opts *t)
{
	struct xwi_engine_cfg cfg;

	xwi_engine_cfg_default(&cfg, ep->id, xwi_port_frag_payload(ep->port, &ep->enc));
	/* Options left 0 keep the engine's default. */
#define OPT_NZ(field, dst)                       \
	do {                                     \
		if (XWI_OPT(o, field, 0))        \
			dst = XWI_OPT(o, field, 0); \
	} while (0)
	OPT_NZ(eager_max, cfg.eager_max);
	OPT_NZ(btp1, cfg.btp1);
	OPT_NZ(btp2, cfg.btp2);
	OPT_NZ(pull_block, cfg.pull_block);
	OPT_NZ(pull_inflight, cfg.pull_inflight);
	OPT_NZ(unexpected_max, cfg.unexpected_max);
	OPT_NZ(pushed_max, cfg.pushed_max);
	OPT_NZ(tx_backlog_max, cfg.tx_backlog_max);
#undef OPT_NZ
	if (XWI_OPT(o, give_up_ms, 0))
		cfg.give_up_ns = (__u64)XWI_OPT(o, give_up_ms, 0) * 1000000ULL;
	if (XWI_OPT(o, marks_set, false))
		cfg.marks = XWI_OPT(o, marks, XW_MARK_ALL) & XWI_MARK_ALL;
	if (t) {
		cfg.crc = !t->crc_off;
		cfg.mark_shift = t->mark_shift;
	}
	if (cfg.pull_block < 1 || cfg.pull_block > 32 || cfg.pull_inflight < 1 ||
	    cfg.eager_max < cfg.frag_payload) {
		xwi_err("endpoint %u: bad framing options (pull_block 1..32, pull_inflight >= 1, "
			"eager_max >= one frame)", ep->id);
		return -EINVAL;
	}
	ep->eng = xwi_engine_new(&cfg, &engine_ops, ep);
	return ep->eng ? 0 : -ENOMEM;
}

static void unregister(struct xw_endpoint *ep)
{
	struct xw_ep_entry none = {};
	__u32 key = ep->id;

	if (!ep->ifc || !ep->registered)
		return;
	bpf_map_update_elem(xwi_ep_map_fd(ep, "endpoints"), &key, &none, BPF_ANY);
	bpf_map_delete_elem(xwi_ep_map_fd(ep, "xsks"), &key);
	bpf_map_delete_elem(xwi_ep_map_fd(ep, "wake_rings"), &key);
}

static void ep_free(struct xw_endpoint *ep)
{
	xwi_notify_stop(ep);
	if (ep->ifc)
		xwi_watchdog_stop(ep);
	if (ep->eng && ep->port) {
		/* Our sessions out of the `conns` map, and a CLOSE to every
		 * connected peer: it carries our last ack, so a peer whose
		 * frames we took but whose final ACK was lost is not left
		 * resending to a closed endpoint until it gives us up. */
		xwi_port_lock(ep->port);
		xwi_engine_shutdown(ep->eng, true);
		xwi_port_flush(ep->port);
		xwi_ep_unlock(ep);
	}
	if (ep->port) {
		xwi_port_lock(ep->port);
		xwi_port_detach(ep->port, ep->id, ep);
		xwi_ep_unlock(ep);
	}
	unregister(ep);
	xwi_local_close(ep->local);
	if (ep->shared)
		__atomic_store_n(&ep->shared->armed, 0, __ATOMIC_SEQ_CST);
	ring_buffer__free(ep->rb);
	if (ep->ring_fd >= 0)
		close(ep->ring_fd);
	xwi_engine_free(ep->eng);
	xwi_port_put(ep->port);
	xwi_local_unclaim(ep->claim_fd, ep->ifindex, ep->id);
	if (ep->ifc)
		xwi_ifref_put(ep->ifc);
	pthread_mutex_destroy(&ep->nlock);
	pthread_cond_destroy(&ep->ncond);
	free(ep);
}

int xwi_endpoint_open_test(const char *ifname, __u16 id, const struct xw_endpoint_opts *o,
			   const struct xwi_test_opts *t, struct xw_endpoint **epp)
{
	struct xw_endpoint *ep;
	struct xwi_sink sink;
	struct xwi_local_sink lsink;
	struct xw_ep_entry reg;
	struct xw_wake_state ws = {};
	__u32 key = id, umem, ifindex;
	bool busy;
	int err, fd;

	xwi_hook_lib_logs();
	if (!epp || !ifname)
		return -EINVAL;
	*epp = NULL;
	if (!XWI_OPTS_VALID(o, xw_endpoint_opts))
		return -EINVAL;
	if (id >= XW_MAX_ENDPOINTS) {
		xwi_err("endpoint id %u out of range (0..%d)", id, XW_MAX_ENDPOINTS - 1);
		return -ERANGE;
	}
	umem = XWI_OPT(o, umem_frames, 0) ? XWI_OPT(o, umem_frames, 0) : XWI_DEFAULT_UMEM_FRAMES;
	if (umem < 64 || (umem & (umem - 1))) {
		xwi_err("umem_frames must be a power of two >= 64");
		return -EINVAL;
	}
	if (XWI_OPT(o, pull_spin, 0) > XW_PULL_SPIN_MAX) {
		xwi_err("xw_endpoint_opts: pull_spin %u above %u", o->pull_spin, XW_PULL_SPIN_MAX);
		return -EINVAL;
	}
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -ENOMEM;
	sink.deliver = ep_deliver;
	sink.ctx = ep;
	lsink.deliver = ep_deliver_local;
	lsink.done = ep_done_local;
	lsink.ctx = ep;
	ep->id = id;
	ep->ring_fd = -1;
	ep->claim_fd = -1;
	ep->wd_ring_fd = -1;
	ep->notify.stop_fd = ep->notify.epfd = -1;
	ep->wd.stop_fd = ep->wd.epfd = -1;
	pthread_mutex_init(&ep->nlock, NULL);
	pthread_cond_init(&ep->ncond, NULL);
	if ((unsigned int)XWI_OPT(o, wait_strategy, XW_WAIT_DEFAULT) >= XW_WAIT_MAX) {
		free(ep);
		return -EINVAL;
	}
	xw_endpoint__set_wait(ep, XWI_OPT(o, wait_strategy, XW_WAIT_DEFAULT),
			      XWI_OPT(o, spin_ns, 0));
	xw_endpoint__set_pull_spin(ep, XWI_OPT(o, pull_spin_set, false) ? o->pull_spin
									: XW_PULL_SPIN_DEFAULT);

	/* The id is ours once claimed: two processes opening it at once
	 * cannot both pass the registry check below (it is read, then
	 * written only at the end).  Claimed before the interface is taken:
	 * a process closing the last endpoint on it sees the claim and leaves
	 * the program attached (xwi_ifref_put). */
	ep->ifindex = (int)if_nametoindex(ifname);
	ep->claim_fd = ep->ifindex ? xwi_local_claim(ep->ifindex, id) : -ENODEV;
	busy = ep->claim_fd == -EBUSY;
	if (busy) {
		ep->claim_fd = -1;
	} else if (ep->claim_fd < 0) {
		if (ep->ifindex)
			xwi_warn("%s: endpoint %u: no claim file (%s): two processes opening "
				 "this id at the same moment are not kept apart", ifname, id,
				 strerror(-ep->claim_fd));
		ep->claim_fd = -1;
	}
	/* An id another process holds: said without taking the interface
	 * (its open, the leftovers' scan, the detach check of its release;
	 * a libfabric rank looking for a free id tries them one by one). */
	if (busy) {
		err = xwi_iface_peek_endpoint(ifname, XWI_OPT(o, pin_root, NULL), id, &reg);
		goto check_busy;
	}
	err = xwi_ifref_get(ifname, o, &ep->ifc);
	if (err)
		goto fail;
	if (id >= xw_iface__max_endpoints(ep->ifc)) {
		xwi_err("%s: endpoint id %u beyond the interface's %u endpoint ids (0-%u): its "
			"program was attached with max_endpoints %u; detach and reattach it with a "
			"larger one (xdpwake attach --max-endpoints N, XDPWAKE_MAX_ENDPOINTS)",
			ifname, id, xw_iface__max_endpoints(ep->ifc),
			xw_iface__max_endpoints(ep->ifc) - 1, xw_iface__max_endpoints(ep->ifc));
		err = -ERANGE;
		goto fail;
	}
	err = xw_iface__endpoint(ep->ifc, id, &reg);
check_busy:
	if (busy || (!err && (reg.flags & XW_EPF_ACTIVE) && xwi_pid_alive(reg.owner_pid))) {
		if (err || !(reg.flags & XW_EPF_ACTIVE) || !xwi_pid_alive(reg.owner_pid))
			xwi_err("%s: endpoint %u is being opened by another process", ifname, id);
		else if (reg.owner_pid == (__u32)getpid())
			xwi_err("%s: endpoint %u is already open in this process", ifname, id);
		else
			xwi_err("%s: endpoint %u is in use by process %u", ifname, id,
				reg.owner_pid);
		err = -EBUSY;
		goto fail;
	}
	err = setup_encap(ep, o);
	if (err)
		goto fail;
	ifindex = (__u32)xw_iface__ifindex(ep->ifc);
	err = xwi_ifref_port(ep->ifc, ifname, (int)ifindex, XWI_OPT(o, queue, 0), umem,
			     &ep->port);
	if (err) {
		ep->port = NULL;
		goto fail;
	}
	if (ep->enc.encap == XW_ENCAP_UDP) {
		/* The queue's own port (proto.h, "Per-queue UDP ports"). */
		if (ep->port->queue >= XW_MAX_QUEUES ||
		    ep->enc.udp_port + ep->port->queue > 0xFFFF) {
			xwi_err("%s: queue %u cannot carry UDP encapsulation (port %u + queue "
				"beyond %s)", ifname, ep->port->queue, ep->enc.udp_port,
				ep->port->queue >= XW_MAX_QUEUES ? "the queue map" : "65535");
			err = -ERANGE;
			goto fail;
		}
		ep->enc.udp_port = (__u16)(ep->enc.udp_port + ep->port->queue);
	} else if (XWI_OPT(o, queue, 0) == XW_QUEUE_ANY && ep->port->queue) {
		xwi_warn("%s: endpoint %u took queue %u with Ethernet encapsulation: a NIC "
			 "cannot steer its frames there (use UDP and xdpwake steer)", ifname, id,
			 ep->port->queue);
	}
	if (xwi_port_attached(ep->port, id)) {
		xwi_err("%s: endpoint %u is already open in this process", ifname, id);
		err = -EBUSY;
		goto fail;
	}
	ep->shared = xwi_iface_shared(ep->ifc, id);
	if (!ep->shared) {
		err = -errno;
		goto fail;
	}
	err = engine_setup(ep, o, t);
	if (err)
		goto fail;

	/* The wake ring, then the socket, then the endpoint goes live. */
	ep->ring_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "xw_wake", 0, 0, XW_RING_BYTES, NULL);
	if (ep->ring_fd < 0) {
		err = -errno;
		goto fail;
	}
	ep->rb = ring_buffer__new(ep->ring_fd, xwi_wake_ring_cb, ep, NULL);
	if (!ep->rb) {
		err = -errno;
		goto fail;
	}
	ep->registered = true;
	if (bpf_map_update_elem(xwi_ep_map_fd(ep, "wake_rings"), &key, &ep->ring_fd, BPF_ANY)) {
		err = -errno;
		goto fail;
	}
	fd = ep->port->fd;
	if (bpf_map_update_elem(xwi_ep_map_fd(ep, "xsks"), &key, &fd, BPF_ANY)) {
		err = -errno;
		xwi_err("%s: cannot register the AF_XDP socket: %s", ifname, strerror(errno));
		goto fail;
	}
	/* A clean wake state (this also cancels a stale timer). */
	bpf_map_update_elem(xwi_ep_map_fd(ep, "wake_state"), &key, &ws, BPF_ANY);
	if (XWI_OPT(o, policy_set, false)) {
		err = xw_iface__set_knob(ep->ifc, "policy", id, XWI_OPT(o, policy, 0));
		if (err)
			goto fail;
	}
	ep->consumed = __atomic_load_n(&ep->shared->produced, __ATOMIC_SEQ_CST);
	__atomic_store_n(&ep->shared->consumed, ep->consumed, __ATOMIC_SEQ_CST);
	__atomic_store_n(&ep->shared->armed, 0, __ATOMIC_SEQ_CST);
	/* The inbox after the count is in step: a local frame counted from
	 * here on is one we take.  Without one (no /dev/shm), peers on this
	 * host cannot reach us and we send to them through the interface. */
	if (xwi_local_open(ep->ifc, id, ep->port->mac, ep->port->ip, &lsink, &ep->local))
		xwi_warn("%s: endpoint %u: no local inbox: no shared-memory path to peers on "
			 "this host", ifname, id);
	if (t && t->cma_off)
		xwi_local_set_cma(ep->local, false);

	xwi_port_lock(ep->port);
	err = xwi_port_attach(ep->port, id, &sink);
	xwi_ep_unlock(ep);
	if (err)
		goto fail;

	memset(&reg, 0, sizeof(reg));
	reg.flags = XW_EPF_ACTIVE | XW_EPF_CONNS;
	reg.queue_id = ep->port->queue;
	reg.owner_pid = (__u32)getpid();
	if (bpf_map_update_elem(xwi_ep_map_fd(ep, "endpoints"), &key, &reg, BPF_ANY)) {
		err = -errno;
		goto fail;
	}
	if (XWI_OPT(o, watchdog_usecs, 0)) {
		XW_OPTS(xw_watchdog_opts, wdo, .period_usecs = XWI_OPT(o, watchdog_usecs, 0),
			.rt_prio = XWI_OPT(o, watchdog_rt_prio, 0));

		err = xw_endpoint__set_watchdog_opts(ep, &wdo);
		if (err)
			goto fail;
	}
	xwi_info("%s: endpoint %u open on queue %u (%s, %u payload bytes per frame)", ifname, id,
		 ep->port->queue, ep->enc.encap == XW_ENCAP_UDP ? "UDP" : "Ethernet",
		 xwi_port_frag_payload(ep->port, &ep->enc));
	*epp = ep;
	return 0;
fail:
	ep_free(ep);
	return err;
}

XW_API int xw_endpoint__open(const char *ifname, __u16 id, const struct xw_endpoint_opts *o,
			     struct xw_endpoint **epp)
{
	return xwi_endpoint_open_test(ifname, id, o, NULL, epp);
}

XW_API void xw_endpoint__close(struct xw_endpoint *ep)
{
	if (ep)
		ep_free(ep);
}

XW_API int xw_endpoint__addr(const struct xw_endpoint *ep, struct xw_addr *a)
{
	if (!ep || !a)
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	a->encap = (__u8)ep->enc.encap;
	a->ep = ep->id;
	a->nonce = xwi_engine_nonce(ep->eng);
	memcpy(a->mac, ep->port->mac, 6);
	if (ep->enc.encap == XW_ENCAP_UDP) {
		a->ip = ep->port->ip;
		a->port = htons(ep->enc.udp_port);
	}
	return 0;
}

XW_API int xw_endpoint__queue(const struct xw_endpoint *ep)
{
	return ep ? (int)ep->port->queue : -EINVAL;
}

XW_API struct xw_iface *xw_endpoint__iface(const struct xw_endpoint *ep)
{
	return ep ? ep->ifc : NULL;
}

XW_API int xw_endpoint__fd(const struct xw_endpoint *ep)
{
	return ep ? ring_buffer__epoll_fd(ep->rb) : -EINVAL;
}

XW_API int xw_endpoint__frag_payload(const struct xw_endpoint *ep)
{
	return ep ? (int)xwi_port_frag_payload(ep->port, &ep->enc) : -EINVAL;
}

/* ---- statistics -------------------------------------------------------- */

_Static_assert(XW_PKT_TYPE_MAX <= 16, "xw_endpoint_stats.rtx_by_type");

XW_API int xw_endpoint__stats(const struct xw_endpoint *ep, struct xw_endpoint_stats *out)
{
	struct xw_endpoint_stats all, *st = &all;
	struct xwi_local_stats ls;
	struct xwi_engine_stats es;
	struct xwi_port *p;

	if (!ep || !out)
		return -EINVAL;
	p = ep->port;
	*st = ep->st;
	xwi_engine_stats(ep->eng, &es);
	st->tx_frames = 0;
	for (int i = 0; i < XW_PKT_TYPE_MAX; i++)
		st->tx_frames += es.tx_frames[i];
	st->rx_bad += es.rx_bad;
	st->rx_dropped = es.rx_dropped_nomem;
	st->rx_dup = es.rx_dup;
	st->unexpected_msgs = es.unexpected_msgs;
	st->spins = ep->ws.spins;
	st->blocks = ep->ws.blocks;
	st->wakes = ep->ws.wakes;
	st->spurious_wakes = ep->ws.spurious_wakes;
	st->tx_kicks = p->tx_kicks;
	st->tx_full = p->tx_full;
	st->umem_frames_total = p->nframes;
	st->umem_frames_free_tx = p->nfree;
	st->umem_frames_fill = p->fill_posted;
	st->umem_frames_tx_inflight = p->tx_inflight;
	st->umem_invariant_violations = p->invariant_violations;
	st->umem_rx_warmed = p->rx_warmed;
	st->retransmits = 0;
	for (int i = 0; i < XW_PKT_TYPE_MAX; i++)
		st->retransmits += es.rtx_frames[i];
	st->crc_failures = es.crc_failures;
	st->session_rejects = es.session_rejects + es.no_session;
	st->rx_out_of_order = es.rx_ooo;
	st->rx_dup_frames = es.rx_dup_frames;
	st->conn_timeouts = es.timeouts;
	st->live_probes = es.live_probes;
	st->live_replies = es.live_replies;
	st->live_local = es.live_local;
	st->peers_gone = es.live_gone;
	st->peer_resets = es.peer_restarts + es.peer_closes_cut;
	st->peer_closes = es.peer_closes;
	st->sessions = es.sessions;
	st->rx_ctrl_frames = es.rx_frames[XW_PKT_ACK] + es.rx_frames[XW_PKT_CONNECT] +
			     es.rx_frames[XW_PKT_CONNECT_REPLY] + es.rx_frames[XW_PKT_CLOSE] +
			     es.rx_frames[XW_PKT_PROBE] + es.rx_frames[XW_PKT_PROBE_REPLY];
	for (int i = 0; i < XW_PKT_TYPE_MAX; i++)
		st->tx_by_type[i] = es.tx_frames[i], st->rtx_by_type[i] = es.rtx_frames[i];
	st->rx_refused = es.rx_nobufs;
	st->unexpected_bytes = es.unexpected_bytes;
	st->pushed_bytes = es.pushed_bytes;
	st->peers = es.peers;
	st->peers_evicted = es.peers_evicted;
	st->reconnects = es.reconnects;
	st->carried = es.carried;
	st->sends_lost = es.sends_lost;
	st->abandoned = es.abandoned;
	st->rto_timeouts = es.rtx_timeouts;
	st->fast_rtx = es.fast_rtx;
	st->sack_rtx = es.sack_rtx;
	st->tail_probes = es.tail_probes;
	st->lost_rtx = es.lost_rtx;
	st->spurious_rtx = es.spurious_rtx;
	st->rtt_samples = es.rtt_samples;
	st->rtt_skipped = es.rtt_skipped;
	st->sack_ignored = es.bad_sacks;
	st->rto_ns = es.rto_ns;
	st->srtt_ns = es.srtt_ns;
	st->nonce_rejects = es.nonce_rejects;
	xwi_local_stats(ep->local, &ls);
	st->local_tx_frames = ls.tx;
	st->local_rx_frames = ls.rx;
	st->local_lost = ls.lost;
	st->local_rx_bad = ls.rx_bad;
	st->local_wake_runs = ls.wake_runs;
	st->local_ring_full = ls.full;
	st->local_rx_held = ls.rx_held;
	st->local_cma_reads = es.cma_reads;
	st->local_cma_bytes = es.cma_bytes;
	st->local_cma_fallbacks = es.cma_fallbacks;
	st->local_cma_marks = es.cma_marks;
	st->local_cma_done = es.cma_done;
	{
		struct xwi_sock_stats ss;

		if (!xwi_port_sock_stats(p, &ss)) {
			st->sock_rx_ring_full = ss.rx_ring_full;
			st->sock_rx_fill_empty = ss.rx_fill_empty;
			st->sock_rx_dropped = ss.rx_dropped;
			st->sock_invalid_descs = ss.rx_invalid + ss.tx_invalid;
		}
	}
	xwi_port_lock(p);
	st->peers_unacked = xwi_engine_peers_unacked(ep->eng);
	xwi_port_unlock(p);
	return XWI_OUT_COPY(out, st, xw_endpoint_stats);
}
