/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * endpoint_int.h - what the files of the endpoint layer share (not
 * installed): the endpoint itself and the calls between its parts.
 *
 *   endpoint.c  open/close, the engine's callbacks, the sink the port and
 *               the local path hand received frames to, statistics
 *   ifref.c     this process's references to the program on an interface,
 *               the queue an endpoint opens on
 *   waitloop.c  the progress pass, the wait loop, xw_wait_any
 *   sleep.c     sleeping on the wake ring (the arm/recheck hand-over)
 *   request.c   the request API
 *   threads.c   the notify and watchdog threads
 *   calib.c     the block-and-wake cost
 *   check.c     check polls
 */
#ifndef XWI_ENDPOINT_INT_H
#define XWI_ENDPOINT_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <linux/types.h>

#include "xdpwake.h"
#include "engine.h"
#include "port.h"
#include "wait.h"

struct ring_buffer;
struct xwi_local;

/* Longest single sleep: a wait never relies on one wake alone. */
#define XWI_MAX_SLEEP_MS 100

/* A library thread sleeping on a ring buffer (notify, watchdog). */
struct xwi_helper {
	pthread_t thread;
	bool running;
	int stop_fd; /* eventfd: written to stop the thread */
	int epfd;    /* the ring's epoll fd + stop_fd */
};

struct xw_endpoint {
	__u16 id;
	struct xw_iface *ifc; /* shared with this process's other endpoints (ifref.c) */
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
	 * a spinning wait skips it (see xwi_wait_for). */
	bool quiet;
	__u64 pass_now; /* the time of the progress pass under way, else 0 */
	/* The latest time handed to the engine (port lock): a pass that
	 * takes a time read before it took the lock takes no earlier one,
	 * so no stamp the engine made goes backwards (see pass_rx). */
	__u64 eng_t;
	bool pass_early; /* the pass under way took such a time */
	/* Progress passes finished (any thread's; a request completes in a
	 * pass or in the call that posts or cancels it): xw_endpoint__passes */
	__u64 passes;
	__u64 last_pass; /* the time of the last pass's start */
	__u64 wake_lat; /* the last wake record's wake-up latency (xwi_wake_ring_cb) */

	/* waiting */
	struct xwi_waitpol wait;
	struct xw_wait_stats ws;

	/* notify strategy: a thread sleeps on the wake ring */
	xw_notify_fn notify_fn;
	void *notify_arg;
	struct xwi_helper notify;
	pthread_mutex_t nlock;
	pthread_cond_t ncond;
	__u64 nseq; /* bumped after every pass that handled frames */

	/* watchdog: a thread sleeps on the watchdog ring */
	struct xwi_helper wd;
	int wd_ring_fd;
	struct ring_buffer *wd_rb;
	__u32 wd_records;
};

static inline __u64 xwi_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/* The coarse monotonic clock (CLOCK_MONOTONIC_COARSE): a few
 * nanoseconds, no counter read; never ahead of xwi_now_ns(), behind it by
 * at most a tick while the kernel keeps time. */
static inline __u64 xwi_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/*
 * Release the port lock after changing @ep's engine outside a progress
 * pass (a call of the API): the next wait makes a full pass.
 */
static inline void xwi_ep_unlock(struct xw_endpoint *ep)
{
	__atomic_store_n(&ep->quiet, false, __ATOMIC_RELAXED);
	xwi_port_unlock(ep->port);
}

static inline void xwi_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static inline bool xwi_req_is_done(const struct xw_request *req)
{
	return __atomic_load_n(&req->state, __ATOMIC_ACQUIRE) == XWI_REQ_DONE;
}

/* endpoint.c */
/* The fd of the map @name of @ep's interface. */
int xwi_ep_map_fd(struct xw_endpoint *ep, const char *name);

/* ifref.c */
/* This process's handle of the program on @ifname (with o->pin_root,
 * o->mode), shared by its endpoints: opened (attached if need be) by the
 * first, reference counted. */
int xwi_ifref_get(const char *ifname, const struct xw_endpoint_opts *o, struct xw_iface **ifcp);
/* Drop a reference; the last one out detaches the program if it attached
 * it, unless an endpoint of another process is live or being opened. */
void xwi_ifref_put(struct xw_iface *ifc);
/* Whether process @pid lives (0: no process). */
bool xwi_pid_alive(__u32 pid);
/* The port of an endpoint on @queue of @ifc, or with XW_QUEUE_ANY on the
 * first queue this process has or can bind. */
int xwi_ifref_port(struct xw_iface *ifc, const char *ifname, int ifindex, __u32 queue,
		   __u32 umem, struct xwi_port **portp);

/* waitloop.c */
/* One progress pass: the RX ring, the inbox, the engine's transmit work
 * and timers.  Caller holds the port lock; returns the frames handled. */
int xwi_ep_progress_locked(struct xw_endpoint *ep);
/* The delayed ACKs now, before the calling thread sleeps (waitloop.c). */
void xwi_ep_ack_before_sleep(struct xw_endpoint *ep);
/* The same, only if it would find work (frames, transmit work, a timer
 * due); 0 otherwise. */
int xwi_ep_progress_if_due_locked(struct xw_endpoint *ep);
/* What xwi_wait_for() waits on. */
struct xwi_wait_target {
	struct xw_request *req;	    /* one request */
	struct xw_waitable *items;  /* or any of these */
	int n;
	const struct xw_wait_opts *opts;
	int ready;		    /* index found */
	bool keep_lock;		    /* a request's wait may return holding the port lock */
	bool locked;		    /* ...and does: the caller unlocks */
	int timeout_ms;		    /* with deadline XWI_WAIT_REL: from the wait's start */
};
/* A wait's deadline that is @w->timeout_ms (< 0: none) after the wait
 * starts, taken from the wait's first clock read: a wait that finds its
 * request done, or ready after one pass, reads the clock once (or never). */
#define XWI_WAIT_REL UINT64_MAX
/* The deadline @timeout_ms after @t (0: none, for @timeout_ms < 0). */
static inline __u64 xwi_deadline_after(__u64 t, int timeout_ms)
{
	return timeout_ms < 0 ? 0 : t + (__u64)timeout_ms * 1000000ULL;
}
/* Progress until @w is ready or @deadline (0: none) passes (-ETIMEDOUT),
 * waiting between passes as strategy @s (XW_WAIT_DEFAULT: the endpoint's)
 * and @spin (0: the endpoint's) say. */
int xwi_wait_for(struct xwi_wait_target *w, enum xw_wait_strategy s, __u64 spin, __u64 deadline);
/* Options of a wait (NULL: none) valid: sz, the strategy, and timeout_ms
 * non-zero only with timeout_set (a timeout the flag would ignore). */
bool xwi_wait_opts_valid(const struct xw_wait_opts *opts);

/* sleep.c */
/* The wake ring's record callback (counts records, the wake-up latency). */
int xwi_wake_ring_cb(void *ctx, void *data, size_t len);
/* Frames waiting to be taken: in the RX ring or in our inbox.  Without the
 * port lock; writes nothing. */
bool xwi_ep_rx_ready(struct xw_endpoint *ep);
/* The earlier of @deadline (0: none) and the engine's next timer. */
__u64 xwi_ep_deadline(struct xw_endpoint *ep, __u64 deadline);
/* Arm @armed, recheck (if @recheck), sleep on @epfd up to @ms; true if
 * the program took the flag (a wake).  Without the port lock. */
bool xwi_sleep_armed(struct xw_endpoint *ep, __u32 *armed, int epfd, int ms, bool recheck);
/* The application thread's sleep on @ep's wake ring, up to @max_ms. */
void xwi_block_once(struct xw_endpoint *ep, __u64 deadline, int max_ms);
/* Sleep with the @n endpoints @eps armed. */
void xwi_block_many(struct xw_endpoint **eps, int n, __u64 deadline);

/* threads.c */
/* While a notify thread runs: wait for its next pass after @seen. */
void xwi_notify_await(struct xw_endpoint *ep, __u64 seen, __u64 deadline);
void xwi_notify_stop(struct xw_endpoint *ep);
void xwi_watchdog_stop(struct xw_endpoint *ep);

#endif
