// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Sleeping on the wake ring: the hand-over of DESIGN.md ("The wake
 * hand-over") between a thread that arms `armed`, rechecks and sleeps, and
 * the XDP program (or a local sender's xw_local run) that takes the flag
 * and wakes it; the wait for redirected frames to become visible in the
 * RX ring; the wake ring's records.
 */
#include <unistd.h>
#include <sys/epoll.h>
#include <bpf/libbpf.h>

#include "internal.h"
#include "local.h"
#include "port.h"
#include "wait.h"
#include "endpoint_int.h"

/* After a wake or a recheck that saw frames in flight: how long to spin for
 * them to become visible in the RX ring before resynchronising. */
#define XWI_VISIBLE_SPIN_NS 500000ULL

int xwi_wake_ring_cb(void *ctx, void *data, size_t len)
{
	struct xw_endpoint *ep = ctx;
	const struct xw_wake_rec *r = data;
	__u64 t;

	if (len != sizeof(*r))
		return 0;
	ep->wake_records++;
	/* How long the wake-up took on this path: the program stamped its
	 * decision (CLOCK_MONOTONIC, as xwi_now_ns()).  Handed to the waiting
	 * policy by the thread that sleeps (xwi_block_once). */
	if (r->kind == XW_REC_WAKE) {
		t = xwi_now_ns();
		ep->wake_lat = t > r->ts_ns ? t - r->ts_ns : 0;
	}
	return 0;
}

/* Frames redirected to this endpoint that it has not taken yet. */
static bool frames_in_flight(struct xw_endpoint *ep)
{
	return __atomic_load_n(&ep->shared->produced, __ATOMIC_SEQ_CST) !=
	       __atomic_load_n(&ep->consumed, __ATOMIC_RELAXED);
}

/* Frames waiting to be taken: in the RX ring or in our inbox.  Without the
 * port lock; writes nothing. */
bool xwi_ep_rx_ready(struct xw_endpoint *ep)
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
	__u64 end = xwi_now_ns() + XWI_VISIBLE_SPIN_NS;

	while (frames_in_flight(ep) && !xwi_ep_rx_ready(ep)) {
		if (xwi_now_ns() >= end) {
			xwi_port_lock(ep->port);
			if (!xwi_ep_rx_ready(ep)) {
				ep->consumed = __atomic_load_n(&ep->shared->produced,
							       __ATOMIC_SEQ_CST);
				__atomic_store_n(&ep->shared->consumed, ep->consumed,
						 __ATOMIC_RELEASE);
			}
			xwi_port_unlock(ep->port);
			break;
		}
		xwi_cpu_relax();
	}
}

/*
 * Arm @armed, recheck, sleep on @epfd up to @ms; the hand-over of
 * DESIGN.md: the XDP program increments produced before it takes armed with
 * an exchange, so after our store and full barrier either it sees armed or
 * we see the frame.  Returns true if the program took the flag (a wake).
 * Called without the port lock.
 */
bool xwi_sleep_armed(struct xw_endpoint *ep, __u32 *armed, int epfd, int ms, bool recheck)
{
	struct epoll_event ev[2];
	bool woken;

	__atomic_store_n(armed, 1, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (recheck && (frames_in_flight(ep) || xwi_ep_rx_ready(ep))) {
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
__u64 xwi_ep_deadline(struct xw_endpoint *ep, __u64 deadline)
{
	__u64 d = __atomic_load_n(&ep->eng_deadline, __ATOMIC_RELAXED);

	if (d == UINT64_MAX)
		return deadline;
	if (!d)
		d = 1; /* due now */
	return deadline && deadline < d ? deadline : d;
}

/* The application thread's sleep on the wake ring. */
void xwi_block_once(struct xw_endpoint *ep, __u64 deadline, int max_ms)
{
	__u64 t = xwi_now_ns(), before = ep->wake_records;
	int ms = max_ms;

	deadline = xwi_ep_deadline(ep, deadline);
	if (deadline) {
		__u64 left = deadline > t ? (deadline - t + 999999) / 1000000 : 0;

		if (left < (__u64)ms)
			ms = (int)left;
	}
	ep->ws.blocks++;
	xwi_sleep_armed(ep, &ep->shared->armed, ring_buffer__epoll_fd(ep->rb), ms, true);
	ep->wake_lat = 0;
	ring_buffer__consume(ep->rb);
	if (ep->wake_lat) {
		/* B follows what a wake costs on this path */
		xwi_waitpol_wake(&ep->wait, ep->wake_lat);
		ep->ws.block_cost_ns = ep->wait.block_cost;
	}
	if (ep->wake_records != before) {
		ep->ws.wakes += ep->wake_records - before;
		if (!frames_in_flight(ep) && !xwi_ep_rx_ready(ep))
			ep->ws.spurious_wakes++;
	}
	await_visible(ep);
	ep->ws.block_ns += xwi_now_ns() - t;
}

/* Sleep with several endpoints armed (wait_any over endpoints). */
void xwi_block_many(struct xw_endpoint **eps, int n, __u64 deadline)
{
	struct epoll_event ev = { .events = EPOLLIN }, out[8];
	__u64 t = xwi_now_ns();
	int epfd, ms = XWI_MAX_SLEEP_MS, armed = 0;

	for (int i = 0; i < n; i++)
		deadline = xwi_ep_deadline(eps[i], deadline);
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
		if (frames_in_flight(eps[i]) || xwi_ep_rx_ready(eps[i]))
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

XW_API int xw_endpoint__arm(struct xw_endpoint *ep)
{
	__u32 *armed;

	if (!ep)
		return -EINVAL;
	armed = &ep->shared->armed;
	ring_buffer__consume(ep->rb);
	__atomic_store_n(armed, 1, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (frames_in_flight(ep) || xwi_ep_rx_ready(ep)) {
		__atomic_exchange_n(armed, 0, __ATOMIC_SEQ_CST);
		return -EAGAIN;
	}
	return 0;
}

XW_API int xw_endpoint__disarm(struct xw_endpoint *ep)
{
	int woken;

	if (!ep)
		return -EINVAL;
	woken = __atomic_exchange_n(&ep->shared->armed, 0, __ATOMIC_SEQ_CST) == 0;
	ring_buffer__consume(ep->rb);
	return woken;
}

XW_API __u64 xw_endpoint__next_deadline(const struct xw_endpoint *ep)
{
	if (!ep)
		return 0;
	return __atomic_load_n(&ep->eng_deadline, __ATOMIC_RELAXED);
}
