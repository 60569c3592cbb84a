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

#include <poll.h>
#include <sched.h>
#include <net/if.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include "internal.h"
#include "engine.h"
#include "local.h"
#include "port.h"
#include "wait.h"
#include "calib.skel.h"

#define XWI_DEFAULT_UMEM_FRAMES 4096
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

/* A library thread sleeping on a ring buffer (notify, watchdog). */
struct helper {
	pthread_t thread;
	bool running;
	int stop_fd; /* eventfd: written to stop the thread */
	int epfd;    /* the ring's epoll fd + stop_fd */
};

struct xw_endpoint {
	__u16 id;
	struct iface_ref *iref;
	struct xwi_port *port;
	struct xwi_local *local; /* our inbox and our local peers' (local.c) */
	struct xwi_encap enc;
	struct xw_shared *shared;
	int ring_fd;
	int claim_fd; /* our claim of the id on this host (xwi_local_claim) */
	int ifindex;
	struct ring_buffer *rb;
	struct xwi_engine *eng;
	__u64 consumed; /* frames for this endpoint taken from the RX ring */
	__u32 wake_records;
	bool registered; /* our entries are in the program's maps */
	struct xw_endpoint_stats st;
	__u64 eng_deadline; /* the engine's next timer (xwi_engine_next_deadline) */
	/* Set by a spinning wait's progress pass that left the engine with
	 * nothing to transmit; cleared by anything else that changes the
	 * engine under the port lock (a call of the API, a frame delivered
	 * by another endpoint's pass).  While set, and until a frame is in the RX ring
	 * or the engine's next timer is due, another pass would do nothing:
	 * a spinning wait skips it (see wait_for). */
	bool quiet;
	__u64 pass_now; /* the time of the progress pass under way, else 0 */
	__u64 wake_lat; /* the last wake record's wake-up latency (ring_cb) */

	/* waiting */
	struct xwi_waitpol wait;
	struct xw_wait_stats ws;

	/* notify strategy: a thread sleeps on the wake ring */
	xw_notify_fn notify_fn;
	void *notify_arg;
	struct helper notify;
	pthread_mutex_t nlock;
	pthread_cond_t ncond;
	__u64 nseq; /* bumped after every pass that handled frames */

	/* watchdog: a thread sleeps on the watchdog ring */
	struct helper wd;
	int wd_ring_fd;
	struct ring_buffer *wd_rb;
	__u32 wd_records;
};

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/*
 * Release the port lock after changing @ep's engine outside a progress
 * pass (a call of the API): the next wait makes a full pass.
 */
static inline void port_unlock(struct xw_endpoint *ep)
{
	__atomic_store_n(&ep->quiet, false, __ATOMIC_RELAXED);
	xwi_port_unlock(ep->port);
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

/* Whether a live endpoint of another process is registered on @queue: a
 * bind to it that fails is final; otherwise the queue may only be on its
 * way out of a closed socket (xwi_port_get waits for that). */
static bool queue_held_elsewhere(struct xw_iface *ifc, __u32 queue)
{
	struct xw_ep_entry e;

	for (__u32 id = 0; id < XW_MAX_ENDPOINTS; id++)
		if (xw_iface__endpoint(ifc, id, &e) == 0 && (e.flags & XW_EPF_ACTIVE) &&
		    e.queue_id == queue && e.owner_pid != (__u32)getpid() &&
		    pid_alive(e.owner_pid))
			return true;
	return false;
}

/*
 * The endpoint's port: on @queue, or with XW_QUEUE_ANY on the first queue
 * of the interface that this process has already or that it can bind.  A
 * queue a live endpoint of another process holds is skipped at once; a
 * first pass takes only queues that bind right away, a second one waits
 * for queues on their way out of a closed socket (a process restarting).
 */
static int open_port(struct xw_endpoint *ep, const char *ifname, int ifindex, __u32 queue,
		     __u32 umem)
{
	struct xw_iface *ifc = ep->iref->ifc;
	int qfd = xw_iface__map_fd(ifc, "udp_queues");
	bool busy = false;
	__u32 n;
	int err;

	if (queue != XW_QUEUE_ANY)
		return xwi_port_get(ifname, ifindex, queue, umem,
				    queue_held_elsewhere(ifc, queue) ? 0 : XWI_PORT_WAIT, qfd,
				    &ep->port);
	n = xwi_rx_queues(ifname);
	for (int pass = 0; pass < 2; pass++) {
		for (__u32 q = 0; q < n; q++) {
			if (!xwi_port_have(ifindex, q) && queue_held_elsewhere(ifc, q)) {
				busy = true;
				continue;
			}
			err = xwi_port_get(ifname, ifindex, q, umem,
					   XWI_PORT_QUIET | (pass ? XWI_PORT_WAIT : 0), qfd,
					   &ep->port);
			if (err != -EBUSY && err != -EINVAL)
				return err;
			busy |= err == -EBUSY;
		}
	}
	if (!busy) {
		xwi_err("%s: none of its %u RX queues takes an AF_XDP socket", ifname, n);
		return -EINVAL;
	}
	xwi_err("%s: no free queue (%u RX queues, each bound by another process)", ifname, n);
	return -EBUSY;
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

static bool iface_in_use(struct xw_iface *ifc)
{
	if (live_endpoints(ifc))
		return true;
	for (__u16 id = 0; id < XW_MAX_ENDPOINTS; id++)
		if (xwi_local_claimed(xw_iface__ifindex(ifc), id))
			return true;
	return false;
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
		/* The last one out detaches, unless an endpoint of another
		 * process is live or being opened (its id claimed): decided
		 * under the interface's lock, which an opener holds while it
		 * finds the program. */
		if (auto_detach)
			xwi_iface_detach_unused(r->ifc, iface_in_use);
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

	/* A peer on this host and interface: through its inbox. */
	if (xwi_local_is_local(ep->local, dst))
		return xwi_local_send(ep->local, dst, &ep->enc, h, payload, len);
	return xwi_port_tx(ep->port, &ep->enc, dst, h, payload, len);
}

/* The engine's clock: one reading per progress pass (the pass is short
 * next to every timer), a fresh one outside passes. */
static __u64 ep_now(void *ctx)
{
	struct xw_endpoint *ep = ctx;

	return ep->pass_now ? ep->pass_now : now_ns();
}

/* The peer's session goes into the XDP program's `conns` map, so frames
 * with another session are dropped there already. */
static void ep_conn_event(void *ctx, const struct xw_addr *peer, __u32 session)
{
	struct xw_endpoint *ep = ctx;
	struct xw_conn_key k = {};
	int fd;

	if (!ep->registered || !ep->iref)
		return;
	fd = xw_iface__map_fd(ep->iref->ifc, "conns");
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
}

static const struct xwi_engine_ops engine_ops = {
	.send = ep_send,
	.now_ns = ep_now,
	.conn_event = ep_conn_event,
};

/* The endpoint's sink: one received frame for it, from the port or from
 * the local path, under the port lock. */
static void ep_deliver(void *ctx, const struct xw_addr *src, const struct xw_hdr *h,
		       const void *payload, size_t len)
{
	struct xw_endpoint *ep = ctx;

	ep->consumed++;
	__atomic_store_n(&ep->shared->consumed, ep->consumed, __ATOMIC_RELEASE);
	__atomic_store_n(&ep->quiet, false, __ATOMIC_RELAXED);
	ep->st.rx_frames++;
	if (xwi_engine_rx(ep->eng, src, h, payload, len) == -EPROTO)
		ep->st.rx_bad++;
}

static int ring_cb(void *ctx, void *data, size_t len)
{
	struct xw_endpoint *ep = ctx;
	const struct xw_wake_rec *r = data;
	__u64 t;

	if (len != sizeof(*r))
		return 0;
	ep->wake_records++;
	/* How long the wake-up took on this path: the program stamped its
	 * decision (CLOCK_MONOTONIC, as now_ns()).  Handed to the waiting
	 * policy by the thread that sleeps (block_once). */
	if (r->kind == XW_REC_WAKE) {
		t = now_ns();
		ep->wake_lat = t > r->ts_ns ? t - r->ts_ns : 0;
	}
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
	if (XWI_OPT(o, give_up_ms, 0))
		cfg.give_up_ns = (__u64)XWI_OPT(o, give_up_ms, 0) * 1000000ULL;
	cfg.crc = !XWI_OPT(o, crc_off, false);
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

static void helper_stop(struct helper *h);
static void watchdog_stop(struct xw_endpoint *ep);

static void ep_free(struct xw_endpoint *ep)
{
	helper_stop(&ep->notify);
	if (ep->iref)
		watchdog_stop(ep);
	if (ep->eng && ep->port) {
		/* Our sessions out of the `conns` map.  No CLOSE: peers learn
		 * of a reopened endpoint from its CONNECT. */
		xwi_port_lock(ep->port);
		xwi_engine_shutdown(ep->eng, false);
		xwi_port_flush(ep->port);
		port_unlock(ep);
	}
	if (ep->port) {
		xwi_port_lock(ep->port);
		xwi_port_detach(ep->port, ep->id, ep);
		port_unlock(ep);
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
	if (ep->iref)
		iface_put(ep->iref);
	pthread_mutex_destroy(&ep->nlock);
	pthread_cond_destroy(&ep->ncond);
	free(ep);
}

XW_API int xw_endpoint__open(const char *ifname, __u16 id, const struct xw_endpoint_opts *o,
			     struct xw_endpoint **epp)
{
	struct xw_endpoint *ep;
	struct xwi_sink sink;
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
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -ENOMEM;
	sink.deliver = ep_deliver;
	sink.ctx = ep;
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
			      (__u64)XWI_OPT(o, spin_usecs, 0) * 1000ULL);

	/* The id is ours once claimed: two processes opening it at once
	 * cannot both pass the registry check below (it is read, then
	 * written only at the end).  Claimed before the interface is taken:
	 * a process closing the last endpoint on it sees the claim and leaves
	 * the program attached (iface_put). */
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
	err = iface_get(ifname, o, &ep->iref);
	if (err)
		goto fail;
	err = xw_iface__endpoint(ep->iref->ifc, id, &reg);
	if (busy || (!err && (reg.flags & XW_EPF_ACTIVE) && pid_alive(reg.owner_pid))) {
		if (err || !(reg.flags & XW_EPF_ACTIVE) || !pid_alive(reg.owner_pid))
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
	ifindex = (__u32)xw_iface__ifindex(ep->iref->ifc);
	err = open_port(ep, ifname, (int)ifindex, XWI_OPT(o, queue, 0), umem);
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
	/* The inbox after the count is in step: a local frame counted from
	 * here on is one we take.  Without one (no /dev/shm), peers on this
	 * host cannot reach us and we send to them through the interface. */
	if (xwi_local_open(ep->iref->ifc, id, ep->port->mac, ep->port->ip, &sink, &ep->local))
		xwi_warn("%s: endpoint %u: no local inbox: no shared-memory path to peers on "
			 "this host", ifname, id);

	xwi_port_lock(ep->port);
	err = xwi_port_attach(ep->port, id, &sink);
	port_unlock(ep);
	if (err)
		goto fail;

	memset(&reg, 0, sizeof(reg));
	reg.flags = XW_EPF_ACTIVE | XW_EPF_CONNS;
	reg.queue_id = ep->port->queue;
	reg.owner_pid = (__u32)getpid();
	if (bpf_map_update_elem(map_fd(ep, "endpoints"), &key, &reg, BPF_ANY)) {
		err = -errno;
		goto fail;
	}
	if (XWI_OPT(o, watchdog_usecs, 0)) {
		err = xw_endpoint__set_watchdog(ep, XWI_OPT(o, watchdog_usecs, 0));
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

XW_API int xw_endpoint__queue(const struct xw_endpoint *ep)
{
	return ep ? (int)ep->port->queue : -EINVAL;
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

/* ---- progress -------------------------------------------------------- */

/* Caller holds the port lock. */
static int progress_locked(struct xw_endpoint *ep)
{
	int n;

	ep->pass_now = now_ns();
	n = xwi_port_rx(ep->port, 64);
	n += xwi_local_rx(ep->local, 64);
	n += xwi_engine_progress(ep->eng, 256);
	xwi_port_flush(ep->port);
	ep->pass_now = 0;
	__atomic_store_n(&ep->eng_deadline, xwi_engine_next_deadline(ep->eng), __ATOMIC_RELAXED);
	/* A pass may leave work (a full TX ring): only a spinning wait that
	 * checked says otherwise. */
	__atomic_store_n(&ep->quiet, false, __ATOMIC_RELAXED);
	return n;
}

XW_API int xw_endpoint__progress(struct xw_endpoint *ep)
{
	int n;

	if (!ep)
		return -EINVAL;
	xwi_port_lock(ep->port);
	n = progress_locked(ep);
	xwi_port_unlock(ep->port);
	return n;
}

/* ---- the block-and-wake cost ----------------------------------------- */

static __u64 block_cost;
static pthread_once_t block_cost_once = PTHREAD_ONCE_INIT;

struct pingpong {
	int a, b;
	int rounds;
};

static void *calib_peer(void *arg)
{
	struct pingpong *pp = arg;
	struct pollfd pfd = { .fd = pp->a, .events = POLLIN };
	__u64 v;

	for (int i = 0; i < pp->rounds; i++) {
		if (poll(&pfd, 1, 1000) <= 0 || read(pp->a, &v, sizeof(v)) != sizeof(v))
			break;
		v = 1;
		if (write(pp->b, &v, sizeof(v)) != sizeof(v))
			break;
	}
	return NULL;
}

static int cmp_u64(const void *x, const void *y)
{
	__u64 a = *(const __u64 *)x, b = *(const __u64 *)y;

	return a < b ? -1 : a > b;
}

/*
 * Calibration on the real wake path: a thread sleeps in epoll on a BPF ring
 * buffer; another runs calib.bpf.c with BPF_PROG_TEST_RUN, which submits a
 * record with BPF_RB_FORCE_WAKEUP stamped with the submit time; the sleeper's
 * delay from that stamp to running again is one block-and-wake as the XDP
 * program causes it.  Median of ROUNDS.  Needs CAP_BPF (endpoints do).
 */
enum { CALIB_ROUNDS = 200 };

struct calib_run {
	int prog_fd;
	int rounds;
	volatile int stop;
};

static void *calib_kicker(void *arg)
{
	struct calib_run *c = arg;
	unsigned char frame[64] = { 0 };

	for (int i = 0; i < c->rounds && !c->stop; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = sizeof(frame),
			    .repeat = 1);

		usleep(300); /* the other thread is asleep by now */
		if (bpf_prog_test_run_opts(c->prog_fd, &o))
			break;
	}
	return NULL;
}

struct calib_sample {
	__u64 lat[CALIB_ROUNDS];
	int n;
};

static int calib_cb(void *ctx, void *data, size_t len)
{
	struct calib_sample *s = ctx;
	__u64 t, now = now_ns();

	if (len != sizeof(t) || s->n >= CALIB_ROUNDS)
		return 0;
	memcpy(&t, data, sizeof(t));
	if (now > t)
		s->lat[s->n++] = now - t;
	return 0;
}

static int calibrate_bpf(__u64 *cost)
{
	struct calib_run run = { .rounds = CALIB_ROUNDS };
	struct calib_sample *s = calloc(1, sizeof(*s));
	struct ring_buffer *rb = NULL;
	struct calib_bpf *skel;
	pthread_t t;
	int err = -EINVAL;

	if (!s)
		return -ENOMEM;
	skel = calib_bpf__open_and_load();
	if (!skel) {
		free(s);
		return -errno;
	}
	rb = ring_buffer__new(bpf_map__fd(skel->maps.calib_ring), calib_cb, s, NULL);
	run.prog_fd = bpf_program__fd(skel->progs.xw_calib);
	if (rb && !pthread_create(&t, NULL, calib_kicker, &run)) {
		__u64 end = now_ns() + 2000000000ULL;

		while (s->n < CALIB_ROUNDS && now_ns() < end)
			if (ring_buffer__poll(rb, 100) < 0)
				break;
		run.stop = 1;
		pthread_join(t, NULL);
		if (s->n >= CALIB_ROUNDS / 2) {
			qsort(s->lat, s->n, sizeof(s->lat[0]), cmp_u64);
			*cost = s->lat[s->n / 2];
			err = 0;
		}
	}
	ring_buffer__free(rb);
	calib_bpf__destroy(skel);
	free(s);
	return err;
}

/*
 * Fallback without BPF privileges: two threads bounce an eventfd token, each
 * sleeping in poll() until the other writes; half the median round trip is
 * the cost of putting a thread to sleep and waking it (a lower bound for the
 * XDP path, which adds the ring buffer's irq_work).
 */
static void calibrate(void)
{
	enum { ROUNDS = 200 };
	struct pingpong pp = { .rounds = ROUNDS };
	struct pollfd pfd;
	__u64 rt[ROUNDS], v = 1;
	const char *env = getenv("XDPWAKE_BLOCK_COST_NS");
	pthread_t t;
	int n = 0;

	block_cost = 20000; /* fallback */
	xwi_hook_lib_logs(); /* libbpf prints nothing unless the application asked */
	if (env && atoll(env) > 0) {
		block_cost = (__u64)atoll(env);
		return;
	}
	if (calibrate_bpf(&block_cost) == 0) {
		xwi_dbg("block-and-wake cost (BPF ring buffer wake): %llu ns",
			(unsigned long long)block_cost);
		return;
	}
	pp.a = eventfd(0, EFD_CLOEXEC);
	pp.b = eventfd(0, EFD_CLOEXEC);
	if (pp.a < 0 || pp.b < 0 || pthread_create(&t, NULL, calib_peer, &pp)) {
		if (pp.a >= 0)
			close(pp.a);
		if (pp.b >= 0)
			close(pp.b);
		return;
	}
	pfd.fd = pp.b;
	pfd.events = POLLIN;
	for (int i = 0; i < ROUNDS; i++) {
		__u64 t0 = now_ns();

		if (write(pp.a, &v, sizeof(v)) != sizeof(v) || poll(&pfd, 1, 1000) <= 0 ||
		    read(pp.b, &v, sizeof(v)) != sizeof(v))
			break;
		rt[n++] = now_ns() - t0;
	}
	pthread_join(t, NULL);
	close(pp.a);
	close(pp.b);
	if (n >= ROUNDS / 2) {
		qsort(rt, n, sizeof(rt[0]), cmp_u64);
		block_cost = rt[n / 2] / 2;
	}
	xwi_dbg("block-and-wake cost (eventfd): %llu ns", (unsigned long long)block_cost);
}

XW_API __u64 xw_block_cost_ns(void)
{
	pthread_once(&block_cost_once, calibrate);
	return block_cost;
}

/* ---- sleeping -------------------------------------------------------- */

/* Frames redirected to this endpoint that it has not taken yet. */
static bool frames_in_flight(struct xw_endpoint *ep)
{
	return __atomic_load_n(&ep->shared->produced, __ATOMIC_SEQ_CST) !=
	       __atomic_load_n(&ep->consumed, __ATOMIC_RELAXED);
}

/* Frames waiting to be taken: in the RX ring or in our inbox.  Without the
 * port lock; writes nothing. */
static bool rx_ready(struct xw_endpoint *ep)
{
	return xwi_port_rx_ready(ep->port) || xwi_local_ready(ep->local);
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

	while (frames_in_flight(ep) && !rx_ready(ep)) {
		if (now_ns() >= end) {
			xwi_port_lock(ep->port);
			if (!rx_ready(ep)) {
				ep->consumed = __atomic_load_n(&ep->shared->produced,
							       __ATOMIC_SEQ_CST);
				__atomic_store_n(&ep->shared->consumed, ep->consumed,
						 __ATOMIC_RELEASE);
			}
			xwi_port_unlock(ep->port);
			break;
		}
		cpu_relax();
	}
}

/*
 * Arm @armed, recheck, sleep on @epfd up to @ms; the hand-over of
 * DESIGN.md: the XDP program increments produced before it takes armed with
 * an exchange, so after our store and full barrier either it sees armed or
 * we see the frame.  Returns true if the program took the flag (a wake).
 * Called without the port lock.
 */
static bool sleep_armed(struct xw_endpoint *ep, __u32 *armed, int epfd, int ms, bool recheck)
{
	struct epoll_event ev[2];
	bool woken;

	__atomic_store_n(armed, 1, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (recheck && (frames_in_flight(ep) || rx_ready(ep))) {
		woken = __atomic_exchange_n(armed, 0, __ATOMIC_SEQ_CST) == 0;
		await_visible(ep);
		return woken;
	}
	epoll_wait(epfd, ev, 2, ms);
	woken = __atomic_exchange_n(armed, 0, __ATOMIC_SEQ_CST) == 0;
	return woken;
}

/* The earlier of @deadline (0: none) and the engine's next timer: no sleep
 * outlasts a retransmission, a delayed ACK or a give-up. */
static __u64 with_engine_deadline(struct xw_endpoint *ep, __u64 deadline)
{
	__u64 d = __atomic_load_n(&ep->eng_deadline, __ATOMIC_RELAXED);

	if (d == UINT64_MAX)
		return deadline;
	if (!d)
		d = 1; /* due now */
	return deadline && deadline < d ? deadline : d;
}

/* The application thread's sleep on the wake ring. */
static void block_once(struct xw_endpoint *ep, __u64 deadline, int max_ms)
{
	__u64 t = now_ns(), before = ep->wake_records;
	int ms = max_ms;

	deadline = with_engine_deadline(ep, deadline);
	if (deadline) {
		__u64 left = deadline > t ? (deadline - t + 999999) / 1000000 : 0;

		if (left < (__u64)ms)
			ms = (int)left;
	}
	ep->ws.blocks++;
	sleep_armed(ep, &ep->shared->armed, ring_buffer__epoll_fd(ep->rb), ms, true);
	ep->wake_lat = 0;
	ring_buffer__consume(ep->rb);
	if (ep->wake_lat) {
		/* B follows what a wake costs on this path */
		xwi_waitpol_wake(&ep->wait, ep->wake_lat);
		ep->ws.block_cost_ns = ep->wait.block_cost;
	}
	if (ep->wake_records != before) {
		ep->ws.wakes += ep->wake_records - before;
		if (!frames_in_flight(ep) && !rx_ready(ep))
			ep->ws.spurious_wakes++;
	}
	await_visible(ep);
	ep->ws.block_ns += now_ns() - t;
}

/* ---- waiting --------------------------------------------------------- */

static bool req_done(const struct xw_request *req)
{
	return __atomic_load_n(&req->state, __ATOMIC_ACQUIRE) == XWI_REQ_DONE;
}

/* What wait_for() waits on. */
struct wait_target {
	struct xw_request *req;	    /* one request */
	struct xw_waitable *items;  /* or any of these */
	int n;
	const struct xw_wait_opts *opts;
	int ready;		    /* index found */
};

static bool unexpected_waiting(struct xw_endpoint *ep)
{
	bool r;

	xwi_port_lock(ep->port);
	r = xwi_engine_has_unexpected(ep->eng);
	xwi_port_unlock(ep->port);
	return r;
}

static bool target_ready(struct wait_target *w)
{
	if (w->req)
		return req_done(w->req);
	for (int i = 0; i < w->n; i++) {
		struct xw_waitable *it = &w->items[i];

		if ((it->req && req_done(it->req)) ||
		    (!it->req && it->ep && !XWI_OPT(w->opts, eps_no_unexpected, false) &&
		     unexpected_waiting(it->ep))) {
			w->ready = i;
			return true;
		}
	}
	if (w->opts && w->opts->cond && w->opts->cond(w->opts->cond_arg)) {
		w->ready = w->n;
		return true;
	}
	return false;
}

/* The endpoints a wait progresses. */
static int target_eps(struct wait_target *w, struct xw_endpoint **eps, int max)
{
	int n = 0;

	if (w->req) {
		eps[n++] = w->req->ep;
		return n;
	}
	for (int i = 0; i < w->n && n < max; i++) {
		struct xw_endpoint *ep = w->items[i].req ? w->items[i].req->ep : w->items[i].ep;
		bool seen = false;

		for (int j = 0; j < n; j++)
			seen |= eps[j] == ep;
		if (ep && !seen)
			eps[n++] = ep;
	}
	return n;
}

/* The notify thread does the receiving: wait for its next pass. */
static void await_notify(struct xw_endpoint *ep, __u64 seen, __u64 deadline)
{
	struct timespec ts;
	__u64 t = now_ns() + (__u64)XWI_MAX_SLEEP_MS * 1000000ULL;

	deadline = with_engine_deadline(ep, deadline);
	if (deadline && deadline < t)
		t = deadline;
	ts.tv_sec = (time_t)(t / 1000000000ULL);
	ts.tv_nsec = (long)(t % 1000000000ULL);
	pthread_mutex_lock(&ep->nlock);
	while (ep->nseq == seen && ep->notify.running)
		if (pthread_cond_timedwait(&ep->ncond, &ep->nlock, &ts))
			break;
	pthread_mutex_unlock(&ep->nlock);
}

/* Sleep with several endpoints armed (wait_any over endpoints). */
static void block_many(struct xw_endpoint **eps, int n, __u64 deadline)
{
	struct epoll_event ev = { .events = EPOLLIN }, out[8];
	__u64 t = now_ns();
	int epfd, ms = XWI_MAX_SLEEP_MS, armed = 0;

	for (int i = 0; i < n; i++)
		deadline = with_engine_deadline(eps[i], deadline);
	if (deadline) {
		__u64 left = deadline > t ? (deadline - t + 999999) / 1000000 : 0;

		if (left < (__u64)ms)
			ms = (int)left;
	}
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0)
		return;
	for (int i = 0; i < n; i++) {
		ev.data.u32 = (__u32)i;
		epoll_ctl(epfd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(eps[i]->rb), &ev);
		__atomic_store_n(&eps[i]->shared->armed, 1, __ATOMIC_SEQ_CST);
		armed++;
	}
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (int i = 0; i < n; i++)
		if (frames_in_flight(eps[i]) || rx_ready(eps[i]))
			ms = 0;
	for (int i = 0; i < n; i++)
		eps[i]->ws.blocks += ms > 0;
	if (ms > 0)
		epoll_wait(epfd, out, 8, ms);
	for (int i = 0; i < armed; i++) {
		__u64 before = eps[i]->wake_records;

		__atomic_exchange_n(&eps[i]->shared->armed, 0, __ATOMIC_SEQ_CST);
		ring_buffer__consume(eps[i]->rb);
		eps[i]->ws.wakes += eps[i]->wake_records - before;
		await_visible(eps[i]);
	}
	close(epfd);
}

/*
 * Whether a progress pass of @ep at time @now would find nothing to do: the
 * last pass left nothing to transmit (quiet), nothing changed the engine
 * since, no frame is in the RX ring and no engine timer is due.  Read
 * without the port lock, as hints: a frame or change that races this check
 * is seen on the next spin, which follows at once.  Spinning then costs a
 * few loads instead of a locked pass over the engine.
 */
static bool pass_idle(struct xw_endpoint *ep, __u64 now)
{
	return __atomic_load_n(&ep->quiet, __ATOMIC_ACQUIRE) && !rx_ready(ep) &&
	       now < __atomic_load_n(&ep->eng_deadline, __ATOMIC_RELAXED);
}

/*
 * Progress until the target is ready or the deadline (0: none) passes,
 * waiting between passes as the strategy says.  The port lock is held only
 * around progress passes, never while asleep.
 */
static int wait_for(struct wait_target *w, enum xw_wait_strategy s, __u64 spin, __u64 deadline)
{
	struct xw_endpoint *eps[16];
	int neps = target_eps(w, eps, 16), n;
	struct xw_endpoint *ep;
	struct xwi_waitpol *pol, tmp;
	__u64 start = now_ns(), spin_start = start, t, seen = 0, spun = 0;
	bool notify;

	if (!neps)
		return -EINVAL;
	ep = eps[0];
	pol = &ep->wait;
	if (s != XW_WAIT_DEFAULT || spin) {
		xwi_waitpol_init(&tmp, s != XW_WAIT_DEFAULT ? s : ep->wait.strategy, ep->wait.block_cost,
				 spin ? spin : ep->wait.spin_ns);
		/* An adaptive call learns from the endpoint's history. */
		if (tmp.strategy == XW_WAIT_ADAPTIVE)
			tmp.adaptive_spin = xwi_waitpol_adaptive(&ep->wait);
		pol = &tmp;
	}
	/* While a notify thread runs, it owns the wake ring. */
	notify = ep->notify.running && neps == 1;
	ep->ws.waits++;
	t = start;
	for (;;) {
		n = 0;
		if (notify)
			seen = __atomic_load_n(&ep->nseq, __ATOMIC_ACQUIRE);
		for (int i = 0; i < neps; i++) {
			if (spun && pass_idle(eps[i], t))
				continue;
			xwi_port_lock(eps[i]->port);
			n += progress_locked(eps[i]);
			/* Spinning: may the next spins skip the pass? */
			if (spun)
				__atomic_store_n(&eps[i]->quiet, !xwi_engine_tx_pending(eps[i]->eng),
						 __ATOMIC_RELEASE);
			xwi_port_unlock(eps[i]->port);
		}
		if (target_ready(w))
			break;
		t = now_ns();
		if (spun) {
			/* One clock read per spin: the time since the last. */
			ep->ws.spin_ns += t - spun;
			spun = 0;
		}
		if (deadline && t >= deadline)
			return -ETIMEDOUT;
		if (n > 0) {
			spin_start = t;
			continue;
		}
		switch (notify ? XWI_ACT_BLOCK : xwi_waitpol_next(pol, t - spin_start)) {
		case XWI_ACT_SPIN:
			ep->ws.spins++;
			cpu_relax();
			spun = t;
			break;
		case XWI_ACT_YIELD:
			ep->ws.yields++;
			sched_yield();
			break;
		case XWI_ACT_BLOCK:
			if (notify)
				await_notify(ep, seen, deadline);
			else if (neps > 1)
				block_many(eps, neps, deadline);
			else
				/* Transmit work waiting for ring space or a
				 * neighbour: nap briefly instead. */
				block_once(ep, deadline,
					   xwi_engine_tx_pending(ep->eng) ||
							   xwi_port_tx_busy(ep->port)
						   ? 1
						   : XWI_MAX_SLEEP_MS);
			spin_start = now_ns();
			break;
		}
	}
	/* The adaptive strategy learns how long waits take. */
	xwi_waitpol_done(&ep->wait, now_ns() - start);
	return 0;
}

static int wait_req(struct xw_endpoint *ep, struct xw_request *req, __u64 deadline)
{
	struct wait_target w = { .req = req };

	(void)ep;
	return wait_for(&w, XW_WAIT_DEFAULT, 0, deadline);
}

static __u64 deadline_ms(int timeout_ms)
{
	return timeout_ms < 0 ? 0 : now_ns() + (__u64)timeout_ms * 1000000ULL;
}

/* ---- requests -------------------------------------------------------- */

XW_API int xw_endpoint__isend(struct xw_endpoint *ep, const struct xw_addr *dst,
			      const void *buf, size_t len, __u64 match, struct xw_request **reqp)
{
	return xw_endpoint__isend_opts(ep, dst, buf, len, match, NULL, reqp);
}

XW_API int xw_endpoint__isend_opts(struct xw_endpoint *ep, const struct xw_addr *dst,
				   const void *buf, size_t len, __u64 match,
				   const struct xw_send_opts *opts, struct xw_request **reqp)
{
	__u32 flags;
	int err;

	if (!ep || !dst || !reqp || (len && !buf) || !XWI_OPTS_VALID(opts, xw_send_opts))
		return -EINVAL;
	flags = XWI_OPT(opts, flags, 0);
	if (flags & ~(XW_SEND_MORE | XW_SEND_DATA)) {
		xwi_err("xw_endpoint__isend_opts: unknown flags %#x",
			flags & ~(XW_SEND_MORE | XW_SEND_DATA));
		return -EINVAL;
	}
	if (dst->encap != ep->enc.encap) {
		xwi_err("endpoint %u: destination encapsulation differs from the endpoint's", ep->id);
		return -EINVAL;
	}
	if (dst->ep >= XW_MAX_ENDPOINTS)
		return -ERANGE;
	xwi_port_lock(ep->port);
	err = xwi_engine_isend_data(ep->eng, dst, buf, len, match,
				    (flags & XW_SEND_MORE ? XWI_SEND_MORE : 0) |
					    (flags & XW_SEND_DATA ? XWI_SEND_DATA : 0),
				    XWI_OPT(opts, data, 0), reqp);
	if (!err)
		(*reqp)->ep = ep;
	xwi_port_flush(ep->port);
	port_unlock(ep);
	return err;
}

XW_API int xw_endpoint__irecv(struct xw_endpoint *ep, void *buf, size_t len, __u64 match,
			      __u64 mask, struct xw_request **reqp)
{
	return xw_endpoint__irecv_opts(ep, buf, len, match, mask, NULL, reqp);
}

XW_API int xw_endpoint__irecv_opts(struct xw_endpoint *ep, void *buf, size_t len, __u64 match,
				   __u64 mask, const struct xw_recv_opts *opts,
				   struct xw_request **reqp)
{
	const struct xw_addr *src;
	int err;

	if (!ep || !reqp || (len && !buf) || !XWI_OPTS_VALID(opts, xw_recv_opts))
		return -EINVAL;
	src = XWI_OPT(opts, src, NULL);
	xwi_port_lock(ep->port);
	err = xwi_engine_irecv_from(ep->eng, buf, len, match, mask, src, reqp);
	if (!err)
		(*reqp)->ep = ep;
	xwi_port_flush(ep->port);
	port_unlock(ep);
	return err;
}

XW_API int xw_endpoint__peek(struct xw_endpoint *ep, __u64 match, __u64 mask,
			     const struct xw_peek_opts *opts, struct xw_status *st, __u64 *claim)
{
	__u32 flags;
	int err;

	if (!ep || !XWI_OPTS_VALID(opts, xw_peek_opts))
		return -EINVAL;
	flags = XWI_OPT(opts, flags, 0);
	if ((flags & ~XW_PEEK_CLAIM) || ((flags & XW_PEEK_CLAIM) && !claim))
		return -EINVAL;
	xwi_port_lock(ep->port);
	progress_locked(ep);
	err = xwi_engine_peek(ep->eng, match, mask, XWI_OPT(opts, src, NULL),
			      flags & XW_PEEK_CLAIM, st, claim);
	port_unlock(ep);
	return err;
}

XW_API int xw_endpoint__irecv_claimed(struct xw_endpoint *ep, __u64 claim, void *buf, size_t len,
				      struct xw_request **reqp)
{
	int err;

	if (!ep || !reqp || (len && !buf))
		return -EINVAL;
	xwi_port_lock(ep->port);
	err = xwi_engine_irecv_claimed(ep->eng, claim, buf, len, reqp);
	if (!err)
		(*reqp)->ep = ep;
	xwi_port_flush(ep->port);
	port_unlock(ep);
	return err;
}

XW_API int xw_endpoint__arm(struct xw_endpoint *ep)
{
	__u32 *armed;

	if (!ep)
		return -EINVAL;
	armed = &ep->shared->armed;
	ring_buffer__consume(ep->rb);
	__atomic_store_n(armed, 1, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (frames_in_flight(ep) || rx_ready(ep)) {
		__atomic_exchange_n(armed, 0, __ATOMIC_SEQ_CST);
		return -EAGAIN;
	}
	return 0;
}

static int collect(struct xw_endpoint *ep, struct xw_request *req, struct xw_status *st)
{
	xwi_port_lock(ep->port);
	/* What completing it queued (a large receive's NOTIFY, an ACK) goes
	 * out now, not at the application's next call: the peer waits on it. */
	if (xwi_engine_tx_pending(ep->eng))
		progress_locked(ep);
	if (st)
		*st = req->status;
	xwi_request_free(req);
	port_unlock(ep);
	return 1;
}

XW_API int xw_request__test(struct xw_request *req, struct xw_status *st)
{
	struct xw_endpoint *ep;

	if (!req)
		return -EINVAL;
	ep = req->ep;
	if (!req_done(req))
		xw_endpoint__progress(ep);
	if (!req_done(req))
		return 0;
	return collect(ep, req, st);
}

XW_API int xw_request__done(const struct xw_request *req)
{
	return req ? req_done(req) : -EINVAL;
}

XW_API int xw_request__wait(struct xw_request *req, struct xw_status *st, int timeout_ms)
{
	struct xw_endpoint *ep;
	int err;

	if (!req)
		return -EINVAL;
	ep = req->ep;
	err = wait_req(ep, req, deadline_ms(timeout_ms));
	if (err)
		return err;
	collect(ep, req, st);
	return 0;
}

XW_API int xw_request__wait_opts(struct xw_request *req, struct xw_status *st,
				 const struct xw_wait_opts *opts)
{
	struct wait_target w = { .req = req };
	struct xw_endpoint *ep;
	int err, tmo;

	if (!req || !XWI_OPTS_VALID(opts, xw_wait_opts))
		return -EINVAL;
	if ((unsigned int)XWI_OPT(opts, strategy, XW_WAIT_DEFAULT) >= XW_WAIT_MAX)
		return -EINVAL;
	ep = req->ep;
	tmo = XWI_OPT(opts, timeout_ms, 0);
	err = wait_for(&w, XWI_OPT(opts, strategy, XW_WAIT_DEFAULT), XWI_OPT(opts, spin_ns, 0),
		       tmo > 0 ? deadline_ms(tmo) : 0);
	if (err)
		return err;
	collect(ep, req, st);
	return 0;
}

XW_API int xw_wait_any(struct xw_waitable *items, int n, const struct xw_wait_opts *opts)
{
	struct wait_target w = { .items = items, .n = n, .opts = opts, .ready = -1 };
	int err, tmo;

	if (!items || n <= 0 || n > 16 || !XWI_OPTS_VALID(opts, xw_wait_opts))
		return -EINVAL;
	for (int i = 0; i < n; i++)
		if (!items[i].req && !items[i].ep)
			return -EINVAL;
	if ((unsigned int)XWI_OPT(opts, strategy, XW_WAIT_DEFAULT) >= XW_WAIT_MAX)
		return -EINVAL;
	tmo = XWI_OPT(opts, timeout_ms, 0);
	err = wait_for(&w, XWI_OPT(opts, strategy, XW_WAIT_DEFAULT), XWI_OPT(opts, spin_ns, 0),
		       tmo > 0 ? deadline_ms(tmo) : 0);
	return err ? err : w.ready;
}

XW_API int xw_request__cancel(struct xw_request *req)
{
	struct xw_endpoint *ep;
	int err;

	if (!req)
		return -EINVAL;
	ep = req->ep;
	xwi_port_lock(ep->port);
	err = xwi_engine_cancel(ep->eng, req);
	port_unlock(ep);
	return err;
}

/* A blocking call's request after its timeout: cancelled if nothing of it
 * went out yet, otherwise aborted (the protocol forgets it and stops using
 * the buffer), unless it completed in the meantime. */
static int timed_out(struct xw_endpoint *ep, struct xw_request *req, struct xw_status *st)
{
	int err;

	xwi_port_lock(ep->port);
	err = xwi_engine_cancel(ep->eng, req);
	if (err)
		err = xwi_engine_abort(ep->eng, req, -ETIMEDOUT);
	port_unlock(ep);
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
	__u64 deadline = deadline_ms(timeout_ms);
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
	err = wait_req(ep, req, deadline_ms(timeout_ms));
	if (err == -ETIMEDOUT)
		err = timed_out(ep, req, &s);
	else
		collect(ep, req, &s);
	if (st)
		*st = s;
	return err ? err : (s.error == -EMSGSIZE ? 0 : s.error);
}

/* ---- strategy, notify and watchdog threads --------------------------- */

XW_API int xw_endpoint__set_wait(struct xw_endpoint *ep, enum xw_wait_strategy s,
				 __u64 spin_ns)
{
	if (!ep || (unsigned int)s >= XW_WAIT_MAX)
		return -EINVAL;
	xwi_waitpol_init(&ep->wait, s, xw_block_cost_ns(), spin_ns);
	ep->ws.block_cost_ns = ep->wait.block_cost;
	ep->ws.adaptive_spin_ns = ep->wait.adaptive_spin;
	return 0;
}

static int helper_start(struct helper *h, int ring_epfd, void *(*fn)(void *), void *arg)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int err;

	h->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	h->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (h->stop_fd < 0 || h->epfd < 0)
		goto fail;
	ev.data.u32 = 0;
	if (epoll_ctl(h->epfd, EPOLL_CTL_ADD, ring_epfd, &ev))
		goto fail;
	ev.data.u32 = 1;
	if (epoll_ctl(h->epfd, EPOLL_CTL_ADD, h->stop_fd, &ev))
		goto fail;
	h->running = true;
	err = pthread_create(&h->thread, NULL, fn, arg);
	if (err) {
		h->running = false;
		errno = err;
		goto fail;
	}
	return 0;
fail:
	err = -errno;
	if (h->stop_fd >= 0)
		close(h->stop_fd);
	if (h->epfd >= 0)
		close(h->epfd);
	h->stop_fd = h->epfd = -1;
	return err;
}

static void helper_stop(struct helper *h)
{
	__u64 one = 1;

	if (!h->running)
		return;
	__atomic_store_n(&h->running, false, __ATOMIC_SEQ_CST);
	if (write(h->stop_fd, &one, sizeof(one)) != sizeof(one)) {
		/* the thread also checks `running` at least every second */
	}
	pthread_join(h->thread, NULL);
	close(h->stop_fd);
	close(h->epfd);
	h->stop_fd = h->epfd = -1;
}

/* Milliseconds from now until @deadline (0: none), at most @max_ms. */
static int deadline_wait_ms(__u64 deadline, int max_ms)
{
	__u64 t = now_ns(), left;

	if (!deadline)
		return max_ms;
	left = deadline > t ? (deadline - t + 999999) / 1000000 : 0;
	return left < (__u64)max_ms ? (int)left : max_ms;
}

/* Progress passes until nothing is left (bounded); returns frames handled. */
static int drain(struct xw_endpoint *ep, bool try)
{
	int total = 0, n;

	if (try) {
		if (!xwi_port_trylock(ep->port))
			return 0; /* the application is in the library: it handles them */
	} else {
		xwi_port_lock(ep->port);
	}
	for (int i = 0; i < 64 && (n = progress_locked(ep)) > 0; i++)
		total += n;
	xwi_port_unlock(ep->port);
	return total;
}

static void *notify_thread(void *arg)
{
	struct xw_endpoint *ep = arg;

	while (__atomic_load_n(&ep->notify.running, __ATOMIC_SEQ_CST)) {
		int n = drain(ep, false);

		if (n > 0) {
			ep->ws.notify_runs++;
			if (ep->notify_fn)
				ep->notify_fn(ep, ep->notify_arg);
		}
		pthread_mutex_lock(&ep->nlock);
		ep->nseq++;
		pthread_cond_broadcast(&ep->ncond);
		pthread_mutex_unlock(&ep->nlock);
		if (n > 0)
			continue;
		/* Sleep until a wake, the engine's next timer, or 1 s (a
		 * safety net, not a poll). */
		sleep_armed(ep, &ep->shared->armed, ep->notify.epfd,
			    deadline_wait_ms(with_engine_deadline(ep, 0), 1000), true);
		ring_buffer__consume(ep->rb);
	}
	return NULL;
}

XW_API int xw_endpoint__set_notify(struct xw_endpoint *ep, xw_notify_fn fn, void *arg)
{
	if (!ep)
		return -EINVAL;
	helper_stop(&ep->notify);
	ep->notify_fn = fn;
	ep->notify_arg = arg;
	if (!fn)
		return 0;
	return helper_start(&ep->notify, ring_buffer__epoll_fd(ep->rb), notify_thread, ep);
}

static int wd_cb(void *ctx, void *data, size_t len)
{
	struct xw_endpoint *ep = ctx;

	(void)data;
	if (len == sizeof(struct xw_wake_rec))
		ep->wd_records++;
	return 0;
}

static void *watchdog_thread(void *arg)
{
	struct xw_endpoint *ep = arg;

	while (__atomic_load_n(&ep->wd.running, __ATOMIC_SEQ_CST)) {
		__u32 before = ep->wd_records;

		/* No recheck: the application may be consuming right now; the
		 * program wakes us only for frames left a whole period. */
		sleep_armed(ep, &ep->shared->wd_armed, ep->wd.epfd, 1000, false);
		ring_buffer__consume(ep->wd_rb);
		if (ep->wd_records != before) {
			ep->ws.watchdog_runs++;
			ep->ws.watchdog_frames += (__u64)drain(ep, true);
		}
	}
	return NULL;
}

static void watchdog_stop(struct xw_endpoint *ep)
{
	__u32 key = ep->id;

	helper_stop(&ep->wd);
	if (ep->wd_ring_fd >= 0) {
		xw_iface__set_knob(ep->iref->ifc, "watchdog_usecs", ep->id, 0);
		bpf_map_delete_elem(map_fd(ep, "wd_rings"), &key);
		ring_buffer__free(ep->wd_rb);
		close(ep->wd_ring_fd);
		ep->wd_rb = NULL;
		ep->wd_ring_fd = -1;
	}
}

XW_API int xw_endpoint__set_watchdog(struct xw_endpoint *ep, __u32 period_usecs)
{
	__u32 key;
	int err;

	if (!ep)
		return -EINVAL;
	key = ep->id;
	watchdog_stop(ep);
	if (!period_usecs)
		return 0;
	ep->wd_ring_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "xw_wd", 0, 0, XW_RING_BYTES, NULL);
	if (ep->wd_ring_fd < 0)
		return -errno;
	ep->wd_rb = ring_buffer__new(ep->wd_ring_fd, wd_cb, ep, NULL);
	if (!ep->wd_rb) {
		err = -errno;
		goto fail;
	}
	if (bpf_map_update_elem(map_fd(ep, "wd_rings"), &key, &ep->wd_ring_fd, BPF_ANY)) {
		err = -errno;
		goto fail;
	}
	err = xw_iface__set_knob(ep->iref->ifc, "watchdog_usecs", ep->id, period_usecs);
	if (err)
		goto fail;
	err = helper_start(&ep->wd, ring_buffer__epoll_fd(ep->wd_rb), watchdog_thread, ep);
	if (err)
		goto fail;
	return 0;
fail:
	watchdog_stop(ep);
	return err;
}

XW_API int xw_endpoint__wait_stats(const struct xw_endpoint *ep, struct xw_wait_stats *st)
{
	struct xwi_waitpol w;

	if (!ep || !st)
		return -EINVAL;
	w = ep->wait; /* the estimate is worked out on a copy: @ep is const */
	*st = ep->ws;
	st->block_cost_ns = w.block_cost;
	st->adaptive_spin_ns = xwi_waitpol_adaptive(&w);
	return 0;
}

/* ---- check polls ----------------------------------------------------- */

static double cycles_per_ns;
static pthread_once_t cycles_once = PTHREAD_ONCE_INIT;

static void calibrate_cycles(void)
{
	__u64 t0 = now_ns(), c0 = xw__cycles(), t1, c1;

	do {
		t1 = now_ns();
	} while (t1 - t0 < 2000000); /* 2 ms */
	c1 = xw__cycles();
	cycles_per_ns = c1 > c0 ? (double)(c1 - c0) / (double)(t1 - t0) : 0;
}

XW_API int xw_check_init(struct xw_check *c, struct xw_endpoint *ep, __u32 interval_usecs)
{
	if (!c || !ep || !interval_usecs)
		return -EINVAL;
	pthread_once(&cycles_once, calibrate_cycles);
	c->ep = ep;
	/* Without a cycle counter every check polls (interval 0). */
	c->interval = (__u64)(cycles_per_ns * interval_usecs * 1000.0);
	c->next = xw__cycles() + c->interval;
	return 0;
}

XW_API int xw_check__poll(struct xw_check *c)
{
	int n = xw_endpoint__progress(c->ep);

	c->next = xw__cycles() + c->interval;
	return n;
}

_Static_assert(XW_PKT_TYPE_MAX <= 16, "xw_endpoint_stats.rtx_by_type");

XW_API int xw_endpoint__stats(const struct xw_endpoint *ep, struct xw_endpoint_stats *st)
{
	struct xwi_local_stats ls;
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
	st->retransmits = 0;
	for (int i = 0; i < XW_PKT_TYPE_MAX; i++)
		st->retransmits += es.rtx_frames[i];
	st->crc_failures = es.crc_failures;
	st->session_rejects = es.session_rejects + es.no_session;
	st->rx_out_of_order = es.rx_ooo;
	st->rx_dup_frames = es.rx_dup_frames;
	st->conn_timeouts = es.timeouts;
	st->peer_resets = es.peer_restarts + es.peer_closes;
	st->sessions = es.sessions;
	st->rx_ctrl_frames = es.rx_frames[XW_PKT_ACK] + es.rx_frames[XW_PKT_CONNECT] +
			     es.rx_frames[XW_PKT_CONNECT_REPLY] + es.rx_frames[XW_PKT_CLOSE];
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
	xwi_local_stats(ep->local, &ls);
	st->local_tx_frames = ls.tx;
	st->local_rx_frames = ls.rx;
	st->local_lost = ls.lost;
	st->local_rx_bad = ls.rx_bad;
	st->local_wake_runs = ls.wake_runs;
	return 0;
}
