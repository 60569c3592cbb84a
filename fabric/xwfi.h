/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * xwfi.h - the xdpwake libfabric provider's objects, shared by its files.
 *
 * The provider sits on libxdpwake's public API only.  libfabric exports no
 * helper for external providers, so every object implements its own ops.
 * One file per libfabric object, as libfabric's own providers keep them:
 *
 *   init.c    fi_prov_ini: the FI_XDPWAKE_* parameters, the provider
 *   attr.c    fi_getinfo: usable interfaces, hints, the attributes granted
 *   fabric.c  the fabric, its (empty) event queue, fi_trywait
 *   domain.c  the domain (one interface), memory registration stub
 *   av.c      address vectors
 *   ep.c      the RDM endpoint object: open, bind, enable, cancel, close
 *             (lingering), names (its layout: ep.h, for the endpoint's files)
 *   msg.c     FI_MSG operations and the posting both sets share: sends,
 *             receives, directed receives, peek/claim/discard
 *   tagged.c  FI_TAGGED operations
 *   nosys.c   the operation sets not offered: RMA, atomics, collectives
 *   op.c      an endpoint's posted operations: progress, completions
 *   cq.c      completion queues (every format, error entries, idle sleep,
 *             blocking reads)
 *   cntr.c    counters
 *   wait.c    what CQs and counters wait on (one epoll fd per object over
 *             every bound endpoint's wake fd, an event fd, a timer fd),
 *             arming, blocking waits, the FI_PROGRESS_AUTO thread
 *   log.c     the library's messages into libfabric's log
 *
 * Calls go downwards only (docs/ARCHITECTURE.md, "The libfabric
 * provider"): a file calls only files on lines below its own.
 *
 *   init.c
 *   attr.c, fabric.c
 *   domain.c
 *   ep.c
 *   tagged.c, msg.c, nosys.c
 *   op.c
 *   av.c, cq.c, cntr.c
 *   wait.c, log.c
 *
 * An endpoint reports completions into its CQs and counters through their
 * completion-report interface (xwfi_cq_push, xwfi_cntr_inc, attach and
 * detach).  CQs, counters and the waiting layer never call into the
 * endpoint's files: they progress a bound endpoint through the struct
 * xwfi_epref it binds with (its library endpoint and its progress
 * function).
 *
 * Locking: one mutex per domain serialises every operation on its objects
 * (FI_THREAD_SAFE); the library has its own locks underneath.
 */
#ifndef XWFI_H
#define XWFI_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <rdma/providers/fi_prov.h>
#include <rdma/providers/fi_log.h>

#include <xdpwake.h>

#include "fi_xdpwake.h"

#define XWFI_NAME "xdpwake"
#define XWFI_VERSION FI_VERSION(0, 1)
#define XWFI_FI_VERSION FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION)

/* Untagged (FI_MSG) messages travel with this match value; tagged ones
 * with their tag.  With both FI_MSG and FI_TAGGED the tag format is 63
 * bits, so the two never match each other. */
#define XWFI_MSG_BIT (1ULL << 63)
#define XWFI_INJECT_SIZE 4096
#define XWFI_CAPS                                                                          \
	(FI_MSG | FI_TAGGED | FI_SEND | FI_RECV | FI_DIRECTED_RECV | FI_SOURCE |           \
	 FI_LOCAL_COMM | FI_REMOTE_COMM)
/* The operation flags the provider honours (tx_attr/rx_attr op_flags, the
 * flags of fi_sendmsg/fi_recvmsg, FI_SETOPSFLAG).  A send completes when
 * its buffer may be reused (FI_INJECT_COMPLETE, the default): an eager
 * message once copied, before the peer acknowledged it (fi_close lingers
 * until what was sent is acknowledged: ep.c).  With FI_TRANSMIT_COMPLETE
 * its completion waits until every peer of the endpoint has acknowledged
 * what was sent to it (the library counts peers, not messages, so a stream
 * of other sends can hold it back: coarse, never early).
 * FI_DELIVERY_COMPLETE, FI_MATCH_COMPLETE, FI_COMMIT_COMPLETE and FI_FENCE
 * are not offered. */
#define XWFI_TX_OP_FLAGS                                                                   \
	(FI_COMPLETION | FI_INJECT | FI_INJECT_COMPLETE | FI_TRANSMIT_COMPLETE | FI_MORE)
#define XWFI_RX_OP_FLAGS FI_COMPLETION
#define XWFI_NO_COMP_LEVELS                                                                \
	(FI_DELIVERY_COMPLETE | FI_MATCH_COMPLETE | FI_COMMIT_COMPLETE | FI_FENCE)
#define XWFI_MAX_MSG ((size_t)UINT32_MAX)
#define XWFI_CQ_EPS 8

extern struct fi_provider xwfi_prov; /* init.c */

/* FI_XDPWAKE_* settings, read once at fi_prov_ini. */
struct xwfi_params {
	char *iface;		/* only this interface (NULL: all usable)  */
	char *queue;		/* interface queue or "any" (default)      */
	int ep_id;		/* endpoint id (-1: first free from 1)     */
	char *encap;		/* "eth" (default) or "udp"                */
	char *policy;		/* wake policy (NULL: the interface's)     */
	char *wait;		/* wait strategy (NULL: spin-block)        */
	int spin_usecs;		/* spin time (0: calibrated)               */
	int idle_sleep_usecs;	/* longest sleep of an idle fi_cq_read (0:
				 * never sleep in non-blocking reads)      */
	int watchdog_usecs;	/* the endpoints' polling watchdog (0: off) */
	int idle_spin_usecs;	/* idle reads on a CPU of their own poll
				 * this long before they sleep             */
	int idle_crowd;		/* runnable tasks per CPU above which idle
				 * reads sleep at once (0: never)          */
	char *pin_root;		/* bpffs directory (NULL: library default) */
	int give_up_ms;		/* dead-peer detection (0: library's 5 s)  */
	int pull_spin;		/* B multiples polled on while pulling (-1:
				 * the library's default, 0: off)         */
};
extern struct xwfi_params xwfi_params; /* init.c */

struct xwfi_fabric {
	struct fid_fabric fab;
};

struct xwfi_progress;

/* Endpoints a domain (this process on one interface) opens at most: the
 * interface takes XW_MAX_ENDPOINTS, from all processes; one process
 * rarely has more than one.  Bounds the arrays of wait.c. */
#define XWFI_DOMAIN_EPS 64

/* Endpoints armed for sleeps (wait.c): an endpoint several sleepers armed
 * is disarmed by the last one. */
struct xwfi_arm {
	struct xw_endpoint *xep;
	int n;
};

struct xwfi_domain {
	struct fid_domain dom;
	struct xwfi_fabric *fab;
	char ifname[IF_NAMESIZE];
	pthread_mutex_t lock;
	int refs;		/* objects opened on it */
	bool auto_progress;	/* FI_PROGRESS_AUTO: a thread progresses */
	struct xwfi_progress *prog;
	int neps;		/* endpoints open (at most XWFI_DOMAIN_EPS) */
	struct xwfi_arm arms[XWFI_DOMAIN_EPS];
};

/* What a CQ or counter sleeps on (wait.c).  The epoll fd (FI_GETWAIT)
 * holds every bound endpoint's wake fd (manual progress), the event fd and
 * the timer fd. */
struct xwfi_wset {
	int epfd;
	int evfd;		/* completions no frame caused, signal, close */
	int tfd;		/* the bound endpoints' next protocol timer  */
	int sleepers;		/* threads asleep on it (domain lock)         */
	int users;		/* threads in a blocking read of the object   */
	bool fd_armed;		/* fi_trywait armed the endpoints for the
				 * application's sleep on epfd                */
	bool closing;
	bool eps_fds;		/* holds the endpoints' fds and arms them
				 * (not with FI_PROGRESS_AUTO: the thread's) */
	/* Lock-free readers of the bound endpoints (xwfi_eps_idle) and the
	 * attach or detach waiting them out: an endpoint is never freed
	 * under a reader (after Dekker: both sides sequentially consistent) */
	unsigned int fast_readers;
	bool eps_changing;
	struct fi_xdpwake_wait_stats st;
};

struct xwfi_av {
	struct fid_av av;
	struct xwfi_domain *dom;
	enum fi_av_type type;
	struct xw_addr *tab;
	bool *used;
	size_t n, cap;
	/* The reverse map (address -> index, for a completion's source): a
	 * hash of the valid entries' addresses (xw_addr_equal's fields),
	 * chained through hnext (index + 1; 0 ends a chain), nbucket a power
	 * of two kept >= n / 2 (av.c, av_index).  An O(1) lookup per receive
	 * instead of a scan of every rank's address. */
	size_t *hbucket, *hnext, nbucket;
	int refs;
};

/* One completion (success or error). */
struct xwfi_cqe {
	void *ctx;
	uint64_t flags;
	size_t len;
	void *buf;
	uint64_t data;
	uint64_t tag;
	fi_addr_t src;
	int err;		/* 0, or a positive FI_E* code */
	int prov_errno;
	size_t olen;
};

/* A bound endpoint as CQs, counters and the waiting layer see it (part of
 * the endpoint, filled in by ep.c at open): its library endpoint and one
 * progress pass over it (the frames handled, >= 0; caller holds the
 * domain lock). */
struct xwfi_epref {
	struct xw_endpoint *xep;
	int (*progress)(struct xwfi_epref *ref);
	/* Whether a progress pass would find nothing: no frame, no timer
	 * due, no completion to collect (the fast path of an empty read,
	 * cq.c).  Called without the domain lock. */
	bool (*idle)(struct xwfi_epref *ref);
};

struct xwfi_cq {
	struct fid_cq cq;
	struct xwfi_domain *dom;
	enum fi_cq_format fmt;
	enum fi_wait_obj wait;
	struct xwfi_cqe *ring;	/* completions, FIFO (grows) */
	size_t head, n, cap;
	struct xwfi_cqe *errs;	/* error completions, FIFO (grows) */
	size_t ehead, en, ecap;
	struct xwfi_epref *eps[XWFI_CQ_EPS];
	int neps;
	int refs;
	bool signaled;
	__u64 idle_since;	/* first of the reads finding nothing (ns) */
	__u64 probe_at;		/* idle this long: probe the CPU again (ns) */
	bool yielding;		/* the last probe ran another task: the idle
				 * reads yield the CPU (cq.c, cq_idle) */
	unsigned long seen_activity; /* the process's, when idle_since was set */
	unsigned int idle_reads;     /* reads finding nothing since idle_since */
	__u64 wire_at;		/* when cq_wire_rx last looked (ns)        */
	__u64 wire_rx;		/* the endpoints' frames from the wire then */
	__u64 wire_seen;	/* the last look that found new ones (ns)  */
	bool wire_active;	/* cq_wire_rx's last answer                */
	struct xwfi_wset ws;
};

struct xwfi_cntr {
	struct fid_cntr cntr;
	struct xwfi_domain *dom;
	uint64_t val, err;
	struct xwfi_epref *eps[XWFI_CQ_EPS];
	int neps;
	int refs;
	uint64_t seen_val, seen_err; /* as the last read returned them */
	enum fi_wait_obj wait;
	struct xwfi_wset ws;
};

/* attr.c */
int xwfi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
		 const struct fi_info *hints, struct fi_info **info);

/* fabric.c */
int xwfi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);

/* domain.c */
int xwfi_domain_open(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **dom,
		     void *context);

/* av.c */
int xwfi_av_open(struct fid_domain *domain, struct fi_av_attr *attr, struct fid_av **av,
		 void *context);
int xwfi_av_lookup_addr(struct xwfi_av *av, fi_addr_t fa, struct xw_addr *out);
/* An address as fi_av_insertsvc() and fi_getinfo() take it: node a MAC or
 * "IPv4:port", service the endpoint id; or node a whole address ("MAC/ep")
 * and service NULL.  -FI_EINVAL if it is not one. */
int xwfi_node_addr(const char *node, const char *service, struct xw_addr *a);
fi_addr_t xwfi_av_reverse(struct xwfi_av *av, const struct xw_addr *a);

/* ep.c */
int xwfi_ep_open(struct fid_domain *domain, struct fi_info *info, struct fid_ep **ep,
		 void *context);

/* cq.c: the CQ object, and the completion-report interface endpoints use
 * (caller holds the domain lock) */
int xwfi_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **cq,
		 void *context);
/* Queue a completion; -FI_ENOMEM. */
int xwfi_cq_push(struct xwfi_cq *cq, const struct xwfi_cqe *e);
int xwfi_cq_attach(struct xwfi_cq *cq, struct xwfi_epref *ep);
void xwfi_cq_detach(struct xwfi_cq *cq, struct xwfi_epref *ep);
/* fi_trywait() on a CQ: 0 when the caller may sleep on its fd. */
int xwfi_cq_trywait(struct xwfi_cq *cq);

/* cntr.c: the counter object and its completion-report interface */
int xwfi_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr, struct fid_cntr **cntr,
		   void *context);
void xwfi_cntr_inc(struct xwfi_cntr *c, bool err);
int xwfi_cntr_attach(struct xwfi_cntr *c, struct xwfi_epref *ep);
void xwfi_cntr_detach(struct xwfi_cntr *c, struct xwfi_epref *ep);
int xwfi_cntr_trywait(struct xwfi_cntr *c);

/* wait.c */
enum xwfi_wake { XWFI_WOKE_NONE, XWFI_WOKE_FRAME, XWFI_WOKE_EVENT, XWFI_WOKE_TIMER,
		 XWFI_WOKE_TIMEOUT, XWFI_WOKE_REFUSED, XWFI_WOKE_CLOSED };
int xwfi_wset_init(struct xwfi_wset *ws);
/* Wake the sleepers and wait for them to leave (at most 10 s: then
 * -FI_EBUSY and nothing freed), then close the fds; caller does not hold
 * the domain lock. */
int xwfi_wset_fini(struct xwfi_domain *dom, struct xwfi_wset *ws);
/* A CQ's or counter's wait set: opened with a reference on the domain
 * (its endpoints' fds unless FI_PROGRESS_AUTO: the thread's); closed once
 * no endpoint is bound to the object (*refs 0, else -FI_EBUSY) and its
 * sleepers left (xwfi_wset_fini), the reference dropped.  Caller does not
 * hold the domain lock. */
int xwfi_wset_open(struct xwfi_domain *dom, struct xwfi_wset *ws);
int xwfi_wset_close(struct xwfi_domain *dom, struct xwfi_wset *ws, const int *refs);
int xwfi_wset_add(struct xwfi_domain *dom, struct xwfi_wset *ws, struct xwfi_epref *ep);
void xwfi_wset_del(struct xwfi_domain *dom, struct xwfi_wset *ws, struct xwfi_epref *ep);
/* Wake whoever sleeps on @ws (caller holds the domain lock). */
void xwfi_wset_kick(struct xwfi_wset *ws);
/* The earliest protocol timer of @eps (UINT64_MAX: none, 0: due). */
__u64 xwfi_eps_deadline(struct xwfi_epref **eps, int n);
/* One progress pass over each of @eps: the frames handled. */
int xwfi_eps_progress(struct xwfi_epref **eps, int n);
/* Whether a pass over each of @ws's bound endpoints @eps (@n of them)
 * would find nothing (ref->idle); without the domain lock: an attach or
 * detach waits until no such reader looks (xwfi_wset_attach/detach).  A
 * reader that finds one under way answers false (take the locked path). */
bool xwfi_eps_idle(struct xwfi_wset *ws, struct xwfi_epref **eps, const int *n);
/*
 * Sleep until an endpoint of @eps is woken, @ws is kicked, a protocol
 * timer of theirs is due or @until (CLOCK_MONOTONIC ns); ready(arg) is
 * checked (with the lock) after arming, before sleeping.  Caller holds the
 * domain lock (once); it is released while asleep, so @eps must be re-read
 * by the caller afterwards.  Returns why it woke.
 */
enum xwfi_wake xwfi_wset_sleep(struct xwfi_domain *dom, struct xwfi_wset *ws,
			       struct xwfi_epref **eps, int n, __u64 until,
			       bool (*ready)(void *arg), void *arg);
/* fi_trywait: arm @eps and the timer for the application's sleep on epfd
 * (-FI_EAGAIN: frames wait or a timer is due); undo it. */
int xwfi_wset_fd_arm(struct xwfi_domain *dom, struct xwfi_wset *ws, struct xwfi_epref **eps,
		     int n);
void xwfi_wset_fd_disarm(struct xwfi_domain *dom, struct xwfi_wset *ws, struct xwfi_epref **eps,
			 int n);
/* The end of a CQ's or counter's fi_trywait: -FI_EAGAIN when @ready, else
 * the arming of xwfi_wset_fd_arm, counted; releases the domain lock. */
int xwfi_wset_trywait(struct xwfi_domain *dom, struct xwfi_wset *ws, struct xwfi_epref **eps,
		      int n, bool ready);
/* A CQ's or counter's endpoints (caller holds the domain lock: endpoint
 * bind and close): watched by its wait set and the progress thread. */
int xwfi_wset_attach(struct xwfi_domain *dom, struct xwfi_wset *ws, struct xwfi_epref **eps,
		     int *n, int *refs, struct xwfi_epref *ep);
void xwfi_wset_detach(struct xwfi_domain *dom, struct xwfi_wset *ws, struct xwfi_epref **eps,
		      int *n, int *refs, struct xwfi_epref *ep);
/* fi_control() on a CQ or counter: FI_GETWAIT, FI_GETWAITOBJ and
 * FI_XDPWAKE_GET_WAIT_STATS. */
int xwfi_wset_control(struct xwfi_domain *dom, struct xwfi_wset *ws, enum fi_wait_obj wait,
		      int command, void *arg);
/* What FI_XDPWAKE_WAIT asks of waits (parsed once), and how long polls
 * find nothing before a sleep. */
enum xwfi_idle_mode { XWFI_IDLE_SPIN, XWFI_IDLE_YIELD, XWFI_IDLE_SLEEP };
enum xwfi_idle_mode xwfi_wait_mode(void);
__u64 xwfi_spin_ns(void);
bool xwfi_host_crowded(__u64 now);
/*
 * Wait until ready(arg) or @timeout ms (< 0: no limit): 0, -FI_EAGAIN
 * (timed out) or -FI_ECANCELED (the object is being closed: the caller
 * touches nothing of it any more).  Polls for the spin time, then sleeps
 * on @ws.  Called with the domain lock held once; returns with it held,
 * except for -FI_ECANCELED (released).  *neps is re-read after each sleep.
 */
int xwfi_wait_ready(struct xwfi_domain *dom, struct xwfi_wset *ws, struct xwfi_epref **eps,
		    int *neps, bool (*ready)(void *arg), void *arg, int timeout);
__u64 xwfi_now_ns(void);
/* FI_PROGRESS_AUTO: the domain's thread progresses the endpoints bound to
 * its CQs and counters (added at bind, removed at close); stopped by
 * domain close. */
int xwfi_progress_add(struct xwfi_domain *dom, struct xwfi_epref *ep);
void xwfi_progress_del(struct xwfi_domain *dom, struct xwfi_epref *ep);
void xwfi_progress_stop(struct xwfi_domain *dom);
void xwfi_progress_stats(struct xwfi_domain *dom, struct fi_xdpwake_wait_stats *st);

/* log.c: the library's log callback (xw_set_log).  While an endpoint
 * tries ids in turn the library's messages of one attempt are held
 * (xwfi_log_hold) and then given to libfabric's log at their level, or at
 * debug level when that id was only busy (xwfi_log_release). */
void xwfi_log_cb(enum xw_log_level level, const char *msg, void *ctx);
void xwfi_log_hold(void);
void xwfi_log_release(bool busy);

/* Stubs for operations an object does not support. */
static inline int xwfi_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid, (void)bfid, (void)flags;
	return -FI_ENOSYS;
}

static inline int xwfi_no_control(struct fid *fid, int command, void *arg)
{
	(void)fid, (void)command, (void)arg;
	return -FI_ENOSYS;
}

static inline int xwfi_no_ops_open(struct fid *fid, const char *name, uint64_t flags, void **ops,
				   void *context)
{
	(void)fid, (void)name, (void)flags, (void)ops, (void)context;
	return -FI_ENOSYS;
}

static inline int xwfi_no_tostr(const struct fid *fid, char *buf, size_t len)
{
	(void)fid, (void)buf, (void)len;
	return -FI_ENOSYS;
}

static inline int xwfi_no_ops_set(struct fid *fid, const char *name, uint64_t flags, void *ops,
				  void *context)
{
	(void)fid, (void)name, (void)flags, (void)ops, (void)context;
	return -FI_ENOSYS;
}

/* The fid operations of an object: close, bind and control are its own. */
#define XWFI_FI_OPS(close_fn, bind_fn, control_fn)                                         \
	{                                                                                  \
		.size = sizeof(struct fi_ops),                                             \
		.close = (close_fn),                                                       \
		.bind = (bind_fn),                                                         \
		.control = (control_fn),                                                   \
		.ops_open = xwfi_no_ops_open,                                              \
		.tostr = xwfi_no_tostr,                                                    \
		.ops_set = xwfi_no_ops_set,                                                \
	}

/* errno (positive or negative) to a negative FI_E* code. */
static inline int xwfi_err(int e)
{
	if (e < 0)
		e = -e;
	switch (e) {
	case 0:
		return 0;
	case EMSGSIZE:
		return -FI_ETRUNC;
	default:
		return -e; /* FI_E* equal errno values for the errno range */
	}
}

#endif
