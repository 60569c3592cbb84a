// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Endpoints: the program on the interface (shared per process), an AF_XDP
 * port, the endpoint's entries in the program's maps, its wake ring, and
 * the protocol engine; the request calls and the spin-then-block wait with
 * the hand-over of DESIGN.md ("The wake hand-over").
 */
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "internal.h"
#include "engine.h"
#include "port.h"

#define XWI_DEFAULT_UMEM_FRAMES 4096
#define XWI_DEFAULT_SPIN_NS 20000ULL
/* Longest single sleep: a wait never relies on one wake alone. */
#define XWI_MAX_SLEEP_MS 100
/* After a wake or a recheck that saw frames in flight: how long to spin for
 * them to become visible in the RX ring before resynchronising. */
#define XWI_VISIBLE_SPIN_NS 500000ULL

/* ---- the program on an interface, shared by this process's endpoints -- */

struct iface_ref {
	struct iface_ref *next;
	struct xw_iface *ifc;
	char key[PATH_MAX];
	int refs;
};

static struct iface_ref *iface_refs;
static pthread_mutex_t iface_lock = PTHREAD_MUTEX_INITIALIZER;

struct xw_endpoint {
	__u16 id;
	struct iface_ref *iref;
	struct xwi_port *port;
	struct xwi_encap enc;
	struct xw_shared *shared;
	int ring_fd;
	struct ring_buffer *rb;
	struct xwi_engine *eng;
	__u64 consumed; /* frames for this endpoint taken from the RX ring */
	__u64 spin_ns;
	__u32 wake_records;
	bool registered; /* our entries are in the program's maps */
	struct xw_endpoint_stats st;
};

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static int iface_get(const char *ifname, const struct xw_endpoint_opts *o, struct iface_ref **out)
{
	const char *root = XWI_OPT(o, pin_root, NULL);
	struct iface_ref *r;
	char key[PATH_MAX];
	int err = 0;

	snprintf(key, sizeof(key), "%s|%s", root ? root : XW_DEFAULT_PIN_ROOT, ifname);
	pthread_mutex_lock(&iface_lock);
	for (r = iface_refs; r; r = r->next)
		if (!strcmp(r->key, key))
			break;
	if (r) {
		r->refs++;
		goto out;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		err = -ENOMEM;
		goto out;
	}
	XW_OPTS(xw_iface_opts, io, .pin_root = root, .mode = XWI_OPT(o, mode, XW_MODE_AUTO));
	err = xw_iface__open(ifname, &io, &r->ifc);
	if (err) {
		free(r);
		r = NULL;
		goto out;
	}
	/* Attached on the endpoints' behalf: goes away with the last one. */
	if (r->ifc->skel)
		xw_iface__set_knob(r->ifc, "auto_detach", 0, 1);
	snprintf(r->key, sizeof(r->key), "%s", key);
	r->refs = 1;
	r->next = iface_refs;
	iface_refs = r;
out:
	pthread_mutex_unlock(&iface_lock);
	*out = r;
	return err;
}

static bool pid_alive(__u32 pid)
{
	return pid && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/* Live endpoints registered on the interface (any process). */
static int live_endpoints(struct xw_iface *ifc)
{
	struct xw_ep_entry e;
	int n = 0;

	for (__u32 i = 0; i < XW_MAX_ENDPOINTS; i++)
		if (!xw_iface__endpoint(ifc, i, &e) && (e.flags & XW_EPF_ACTIVE) &&
		    pid_alive(e.owner_pid))
			n++;
	return n;
}

static void iface_put(struct iface_ref *r)
{
	struct iface_ref **pp;
	__u32 auto_detach = 0;

	pthread_mutex_lock(&iface_lock);
	if (--r->refs == 0) {
		for (pp = &iface_refs; *pp; pp = &(*pp)->next)
			if (*pp == r) {
				*pp = r->next;
				break;
			}
		xw_iface__get_knob(r->ifc, "auto_detach", 0, &auto_detach);
		if (auto_detach && live_endpoints(r->ifc) == 0)
			xw_iface__detach(r->ifc);
		else
			xw_iface__close(r->ifc);
		free(r);
	}
	pthread_mutex_unlock(&iface_lock);
}

/* ---- engine callbacks ----------------------------------------------- */

static int ep_send(void *ctx, const struct xw_addr *dst, const struct xw_hdr *h,
		   const void *payload, size_t len)
{
	struct xw_endpoint *ep = ctx;

	return xwi_port_tx(ep->port, &ep->enc, dst, h, payload, len);
}

static __u64 ep_now(void *ctx)
{
	(void)ctx;
	return now_ns();
}

static const struct xwi_engine_ops engine_ops = {
	.send = ep_send,
	.now_ns = ep_now,
};

void xwi_endpoint_deliver(struct xw_endpoint *ep, const struct xw_addr *src,
			  const struct xw_hdr *h, const void *payload, size_t len)
{
	ep->consumed++;
	__atomic_store_n(&ep->shared->consumed, ep->consumed, __ATOMIC_RELEASE);
	ep->st.rx_frames++;
	if (xwi_engine_rx(ep->eng, src, h, payload, len) == -EPROTO)
		ep->st.rx_bad++;
}

const struct xwi_encap *xwi_endpoint_encap(const struct xw_endpoint *ep)
{
	return &ep->enc;
}

static int ring_cb(void *ctx, void *data, size_t len)
{
	struct xw_endpoint *ep = ctx;

	(void)data;
	if (len == sizeof(struct xw_wake_rec))
		ep->wake_records++;
	return 0;
}

/* ---- open / close --------------------------------------------------- */

static int map_fd(struct xw_endpoint *ep, const char *name)
{
	return xw_iface__map_fd(ep->iref->ifc, name);
}

static int setup_encap(struct xw_endpoint *ep, const struct xw_endpoint_opts *o)
{
	struct xw_iface *ifc = ep->iref->ifc;
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

static int engine_setup(struct xw_endpoint *ep, const struct xw_endpoint_opts *o)
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
	if (XWI_OPT(o, marks_set, false))
		cfg.marks = XWI_OPT(o, marks, XW_MARK_ALL) & XWI_MARK_ALL;
	cfg.mark_shift = XWI_OPT(o, mark_shift, 0);
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

	if (!ep->iref || !ep->registered)
		return;
	bpf_map_update_elem(map_fd(ep, "endpoints"), &key, &none, BPF_ANY);
	bpf_map_delete_elem(map_fd(ep, "xsks"), &key);
	bpf_map_delete_elem(map_fd(ep, "wake_rings"), &key);
}

static void ep_free(struct xw_endpoint *ep)
{
	if (ep->port) {
		pthread_mutex_lock(&ep->port->lock);
		if (ep->port->eps[ep->id] == ep)
			ep->port->eps[ep->id] = NULL;
		pthread_mutex_unlock(&ep->port->lock);
	}
	unregister(ep);
	if (ep->shared)
		__atomic_store_n(&ep->shared->armed, 0, __ATOMIC_SEQ_CST);
	ring_buffer__free(ep->rb);
	if (ep->ring_fd >= 0)
		close(ep->ring_fd);
	xwi_engine_free(ep->eng);
	xwi_port_put(ep->port);
	if (ep->iref)
		iface_put(ep->iref);
	free(ep);
}

XW_API int xw_endpoint__open(const char *ifname, __u16 id, const struct xw_endpoint_opts *o,
			     struct xw_endpoint **epp)
{
	struct xw_endpoint *ep;
	struct xw_ep_entry reg;
	struct xw_wake_state ws = {};
	__u32 key = id, umem, ifindex;
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
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -ENOMEM;
	ep->id = id;
	ep->ring_fd = -1;
	ep->spin_ns = XWI_OPT(o, spin_usecs, 0) ? XWI_OPT(o, spin_usecs, 0) * 1000ULL
						: XWI_DEFAULT_SPIN_NS;

	err = iface_get(ifname, o, &ep->iref);
	if (err)
		goto fail;
	err = xw_iface__endpoint(ep->iref->ifc, id, &reg);
	if (!err && (reg.flags & XW_EPF_ACTIVE) && pid_alive(reg.owner_pid)) {
		xwi_err("%s: endpoint %u is in use by process %u", ifname, id, reg.owner_pid);
		err = -EBUSY;
		goto fail;
	}
	err = setup_encap(ep, o);
	if (err)
		goto fail;
	ifindex = (__u32)xw_iface__ifindex(ep->iref->ifc);
	err = xwi_port_get(ifname, (int)ifindex, XWI_OPT(o, queue, 0), umem, &ep->port);
	if (err) {
		ep->port = NULL;
		goto fail;
	}
	if (ep->port->eps[id]) {
		xwi_err("%s: endpoint %u is already open in this process", ifname, id);
		err = -EBUSY;
		goto fail;
	}
	ep->shared = xwi_iface_shared(ep->iref->ifc, id);
	if (!ep->shared) {
		err = -errno;
		goto fail;
	}
	err = engine_setup(ep, o);
	if (err)
		goto fail;

	/* The wake ring, then the socket, then the endpoint goes live. */
	ep->ring_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "xw_wake", 0, 0, XW_RING_BYTES, NULL);
	if (ep->ring_fd < 0) {
		err = -errno;
		goto fail;
	}
	ep->rb = ring_buffer__new(ep->ring_fd, ring_cb, ep, NULL);
	if (!ep->rb) {
		err = -errno;
		goto fail;
	}
	ep->registered = true;
	if (bpf_map_update_elem(map_fd(ep, "wake_rings"), &key, &ep->ring_fd, BPF_ANY)) {
		err = -errno;
		goto fail;
	}
	fd = ep->port->fd;
	if (bpf_map_update_elem(map_fd(ep, "xsks"), &key, &fd, BPF_ANY)) {
		err = -errno;
		xwi_err("%s: cannot register the AF_XDP socket: %s", ifname, strerror(errno));
		goto fail;
	}
	/* A clean wake state (this also cancels a stale timer). */
	bpf_map_update_elem(map_fd(ep, "wake_state"), &key, &ws, BPF_ANY);
	if (XWI_OPT(o, policy_set, false)) {
		err = xw_iface__set_knob(ep->iref->ifc, "policy", id, XWI_OPT(o, policy, 0));
		if (err)
			goto fail;
	}
	ep->consumed = __atomic_load_n(&ep->shared->produced, __ATOMIC_SEQ_CST);
	__atomic_store_n(&ep->shared->consumed, ep->consumed, __ATOMIC_SEQ_CST);
	__atomic_store_n(&ep->shared->armed, 0, __ATOMIC_SEQ_CST);

	pthread_mutex_lock(&ep->port->lock);
	if (ep->port->eps[id]) {
		pthread_mutex_unlock(&ep->port->lock);
		err = -EBUSY;
		goto fail;
	}
	ep->port->eps[id] = ep;
	pthread_mutex_unlock(&ep->port->lock);

	memset(&reg, 0, sizeof(reg));
	reg.flags = XW_EPF_ACTIVE;
	reg.queue_id = ep->port->queue;
	reg.owner_pid = (__u32)getpid();
	if (bpf_map_update_elem(map_fd(ep, "endpoints"), &key, &reg, BPF_ANY)) {
		err = -errno;
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
	memcpy(a->mac, ep->port->mac, 6);
	if (ep->enc.encap == XW_ENCAP_UDP) {
		a->ip = ep->port->ip;
		a->port = htons(ep->enc.udp_port);
	}
	return 0;
}

XW_API struct xw_iface *xw_endpoint__iface(const struct xw_endpoint *ep)
{
	return ep ? ep->iref->ifc : NULL;
}

XW_API int xw_endpoint__fd(const struct xw_endpoint *ep)
{
	return ep ? ring_buffer__epoll_fd(ep->rb) : -EINVAL;
}

XW_API int xw_endpoint__frag_payload(const struct xw_endpoint *ep)
{
	return ep ? (int)xwi_port_frag_payload(ep->port, &ep->enc) : -EINVAL;
}

/* ---- progress and waiting ------------------------------------------- */

/* Caller holds the port lock. */
static int progress_locked(struct xw_endpoint *ep)
{
	int n = xwi_port_rx(ep->port, 64);

	n += xwi_engine_progress(ep->eng, 256);
	xwi_port_flush(ep->port);
	return n;
}

XW_API int xw_endpoint__progress(struct xw_endpoint *ep)
{
	int n;

	if (!ep)
		return -EINVAL;
	pthread_mutex_lock(&ep->port->lock);
	n = progress_locked(ep);
	pthread_mutex_unlock(&ep->port->lock);
	return n;
}

/* Frames redirected to this endpoint that it has not taken yet. */
static bool frames_in_flight(struct xw_endpoint *ep)
{
	return __atomic_load_n(&ep->shared->produced, __ATOMIC_SEQ_CST) != ep->consumed;
}

/*
 * Frames the program redirected may not be visible in the RX ring yet (it
 * is flushed at the end of the NAPI poll).  Spin, bounded, until they are;
 * if they never show up (dropped by the kernel after the redirect), take
 * the program's count so the next sleep is not refused forever.
 */
static void await_visible(struct xw_endpoint *ep)
{
	__u64 end = now_ns() + XWI_VISIBLE_SPIN_NS;

	while (frames_in_flight(ep) && !xwi_port_rx_ready(ep->port)) {
		if (now_ns() >= end) {
			ep->consumed = __atomic_load_n(&ep->shared->produced, __ATOMIC_SEQ_CST);
			__atomic_store_n(&ep->shared->consumed, ep->consumed, __ATOMIC_RELEASE);
			break;
		}
		cpu_relax();
	}
}

/* Sleep until a wake, @max_ms, or the deadline (0: none).  The hand-over:
 * store armed, full barrier, recheck, sleep; the XDP program increments
 * produced before it takes armed with an exchange. */
static void block_once(struct xw_endpoint *ep, __u64 deadline, int max_ms)
{
	struct xw_shared *sh = ep->shared;
	__u64 t = now_ns();
	__u32 before;
	int ms = max_ms;

	if (deadline) {
		__u64 left = deadline > t ? (deadline - t + 999999) / 1000000 : 0;

		if (left < (__u64)ms)
			ms = (int)left;
	}
	__atomic_store_n(&sh->armed, 1, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (frames_in_flight(ep) || xwi_port_rx_ready(ep->port)) {
		__atomic_exchange_n(&sh->armed, 0, __ATOMIC_SEQ_CST);
		await_visible(ep);
		return;
	}
	ep->st.blocks++;
	before = ep->wake_records;
	ring_buffer__poll(ep->rb, ms);
	/* Disarm; 0 means the program took the flag (a wake is on its way). */
	if (__atomic_exchange_n(&sh->armed, 0, __ATOMIC_SEQ_CST) == 0 &&
	    ep->wake_records == before)
		ring_buffer__poll(ep->rb, 0);
	if (ep->wake_records != before) {
		ep->st.wakes += ep->wake_records - before;
		if (!frames_in_flight(ep) && !xwi_port_rx_ready(ep->port))
			ep->st.spurious_wakes++;
	}
	await_visible(ep);
}

static bool req_done(const struct xw_request *req)
{
	return __atomic_load_n(&req->state, __ATOMIC_ACQUIRE) == XWI_REQ_DONE;
}

/* Progress until @req completes or the deadline (0: none) passes. */
static int wait_req(struct xw_endpoint *ep, struct xw_request *req, __u64 deadline)
{
	__u64 spin_start = now_ns(), t;
	int n;

	for (;;) {
		pthread_mutex_lock(&ep->port->lock);
		n = progress_locked(ep);
		if (req_done(req)) {
			pthread_mutex_unlock(&ep->port->lock);
			return 0;
		}
		t = now_ns();
		if (deadline && t >= deadline) {
			pthread_mutex_unlock(&ep->port->lock);
			return -ETIMEDOUT;
		}
		if (n > 0) {
			spin_start = t;
		} else if (t - spin_start < ep->spin_ns) {
			ep->st.spins++;
			cpu_relax();
		} else {
			/* Transmit work waiting for ring space or a neighbour:
			 * nap briefly instead of waiting for a wake. */
			block_once(ep, deadline,
				   xwi_engine_tx_pending(ep->eng) ? 1 : XWI_MAX_SLEEP_MS);
			spin_start = now_ns();
		}
		pthread_mutex_unlock(&ep->port->lock);
	}
}

/* ---- requests ------------------------------------------------------- */

XW_API int xw_endpoint__isend(struct xw_endpoint *ep, const struct xw_addr *dst,
			      const void *buf, size_t len, __u64 match, struct xw_request **reqp)
{
	int err;

	if (!ep || !dst || !reqp || (len && !buf))
		return -EINVAL;
	if (dst->encap != ep->enc.encap) {
		xwi_err("endpoint %u: destination encapsulation differs from the endpoint's", ep->id);
		return -EINVAL;
	}
	if (dst->ep >= XW_MAX_ENDPOINTS)
		return -ERANGE;
	pthread_mutex_lock(&ep->port->lock);
	err = xwi_engine_isend(ep->eng, dst, buf, len, match, reqp);
	xwi_port_flush(ep->port);
	pthread_mutex_unlock(&ep->port->lock);
	return err;
}

XW_API int xw_endpoint__irecv(struct xw_endpoint *ep, void *buf, size_t len, __u64 match,
			      __u64 mask, struct xw_request **reqp)
{
	int err;

	if (!ep || !reqp || (len && !buf))
		return -EINVAL;
	pthread_mutex_lock(&ep->port->lock);
	err = xwi_engine_irecv(ep->eng, buf, len, match, mask, reqp);
	xwi_port_flush(ep->port);
	pthread_mutex_unlock(&ep->port->lock);
	return err;
}

static struct xw_endpoint *req_ep(struct xw_request *req)
{
	return xwi_engine_ctx(req->eng);
}

static int collect(struct xw_endpoint *ep, struct xw_request *req, struct xw_status *st)
{
	pthread_mutex_lock(&ep->port->lock);
	if (st)
		*st = req->status;
	xwi_request_free(req);
	pthread_mutex_unlock(&ep->port->lock);
	return 1;
}

XW_API int xw_request__test(struct xw_request *req, struct xw_status *st)
{
	struct xw_endpoint *ep;

	if (!req)
		return -EINVAL;
	ep = req_ep(req);
	if (!req_done(req))
		xw_endpoint__progress(ep);
	if (!req_done(req))
		return 0;
	return collect(ep, req, st);
}

XW_API int xw_request__wait(struct xw_request *req, struct xw_status *st, int timeout_ms)
{
	struct xw_endpoint *ep;
	int err;

	if (!req)
		return -EINVAL;
	ep = req_ep(req);
	err = wait_req(ep, req, timeout_ms < 0 ? 0 : now_ns() + (__u64)timeout_ms * 1000000ULL);
	if (err)
		return err;
	collect(ep, req, st);
	return 0;
}

XW_API int xw_request__cancel(struct xw_request *req)
{
	struct xw_endpoint *ep;
	int err;

	if (!req)
		return -EINVAL;
	ep = req_ep(req);
	pthread_mutex_lock(&ep->port->lock);
	err = xwi_engine_cancel(req->eng, req);
	pthread_mutex_unlock(&ep->port->lock);
	return err;
}

/* A blocking call's request after its timeout: cancelled if nothing of it
 * went out yet, otherwise aborted (the protocol forgets it and stops using
 * the buffer), unless it completed in the meantime. */
static int timed_out(struct xw_endpoint *ep, struct xw_request *req, struct xw_status *st)
{
	int err;

	pthread_mutex_lock(&ep->port->lock);
	err = xwi_engine_cancel(req->eng, req);
	if (err)
		err = xwi_engine_abort(req->eng, req, -ETIMEDOUT);
	pthread_mutex_unlock(&ep->port->lock);
	collect(ep, req, st);
	if (err == -EALREADY) /* completed after all */
		return st ? st->error : 0;
	if (st)
		st->error = -ETIMEDOUT;
	return -ETIMEDOUT;
}

XW_API int xw_endpoint__send(struct xw_endpoint *ep, const struct xw_addr *dst, const void *buf,
			     size_t len, __u64 match, int timeout_ms)
{
	struct xw_request *req;
	struct xw_status st = {};
	__u64 deadline = timeout_ms < 0 ? 0 : now_ns() + (__u64)timeout_ms * 1000000ULL;
	int err;

	for (;;) {
		err = xw_endpoint__isend(ep, dst, buf, len, match, &req);
		if (err != -EAGAIN)
			break;
		if (deadline && now_ns() >= deadline)
			return -ETIMEDOUT;
		xw_endpoint__progress(ep);
	}
	if (err)
		return err;
	err = wait_req(ep, req, deadline);
	if (err == -ETIMEDOUT)
		return timed_out(ep, req, &st);
	collect(ep, req, &st);
	return st.error;
}

XW_API int xw_endpoint__recv(struct xw_endpoint *ep, void *buf, size_t len, __u64 match,
			     __u64 mask, struct xw_status *st, int timeout_ms)
{
	struct xw_request *req;
	struct xw_status s = {};
	int err;

	err = xw_endpoint__irecv(ep, buf, len, match, mask, &req);
	if (err)
		return err;
	err = wait_req(ep, req, timeout_ms < 0 ? 0 : now_ns() + (__u64)timeout_ms * 1000000ULL);
	if (err == -ETIMEDOUT)
		err = timed_out(ep, req, &s);
	else
		collect(ep, req, &s);
	if (st)
		*st = s;
	return err ? err : (s.error == -EMSGSIZE ? 0 : s.error);
}

XW_API int xw_endpoint__stats(const struct xw_endpoint *ep, struct xw_endpoint_stats *st)
{
	struct xwi_engine_stats es;
	struct xwi_port *p;

	if (!ep || !st)
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
	st->tx_kicks = p->tx_kicks;
	st->tx_full = p->tx_full;
	st->umem_frames_total = p->nframes;
	st->umem_frames_free_tx = p->nfree;
	st->umem_frames_fill = p->fill_posted;
	st->umem_frames_tx_inflight = p->tx_inflight;
	st->umem_invariant_violations = p->invariant_violations;
	return 0;
}
