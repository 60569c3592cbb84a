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

/* Kernels before 5.11 have no epoll_pwait2(): milliseconds then. */
static int no_pwait2;

/*
 * epoll_wait() on @epfd for up to @ns nanoseconds (< 0: no limit), to the
 * nanosecond where the kernel can (the callers choose the granularity).
 * 1 if something is ready, 0 on the timeout, < 0 on an error (a signal).
 */
static int sleep_fd(int epfd, __s64 ns)
{
	struct epoll_event ev[2];
	int r;

	if (ns >= 0 && !__atomic_load_n(&no_pwait2, __ATOMIC_RELAXED)) {
		struct timespec ts = { .tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL };

		r = epoll_pwait2(epfd, ev, 2, &ts, NULL);
		if (r >= 0 || errno != ENOSYS)
			return r;
		__atomic_store_n(&no_pwait2, 1, __ATOMIC_RELAXED);
	}
	return epoll_wait(epfd, ev, 2, ns < 0 ? -1 : (int)((ns + 999999) / 1000000));
}

/*
 * Arm @armed, recheck, sleep on @epfd up to @ns; the hand-over of
 * DESIGN.md: the XDP program increments produced before it takes armed with
 * an exchange, so after our store and full barrier either it sees armed or
 * we see the frame.  Returns true if the program took the flag (a wake);
 * *@timed_out (if given) says whether the sleep ran to its timeout.
 */
static bool sleep_armed(struct xw_endpoint *ep, __u32 *armed, int epfd, __s64 ns, bool recheck,
			bool *timed_out)
{
	bool woken;
	int r;

	if (timed_out)
		*timed_out = false;
	__atomic_store_n(armed, 1, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (recheck && (frames_in_flight(ep) || xwi_ep_rx_ready(ep))) {
		woken = __atomic_exchange_n(armed, 0, __ATOMIC_SEQ_CST) == 0;
		await_visible(ep);
		return woken;
	}
	r = sleep_fd(epfd, ns);
	if (timed_out)
		*timed_out = r == 0;
	woken = __atomic_exchange_n(armed, 0, __ATOMIC_SEQ_CST) == 0;
	return woken;
}

/* As sleep_armed(), up to @ms.  Called without the port lock. */
bool xwi_sleep_armed(struct xw_endpoint *ep, __u32 *armed, int epfd, int ms, bool recheck)
{
	return sleep_armed(ep, armed, epfd, ms < 0 ? -1 : (__s64)ms * 1000000LL, recheck, NULL);
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

/*
 * The application thread's sleep on the wake ring: until a wake, @deadline
 * (0: none) or the engine's next timer, at most @max_ms.  The time left is
 * rounded up to whole milliseconds: a wake ends the sleep whenever it comes
 * (the fast path), and only the engine's own timers (a delayed ACK, a
 * retransmission) fire up to a millisecond late.  To the nanosecond
 * instead, a blocked receiver would wake for every delayed ACK on its own
 * and be awake (unarmed) when the next frame comes: more wake-ups, and a
 * policy's wakes lost to the timer (tests/test_live_tuning saw 277 of 300
 * timeout-policy wakes).
 */
void xwi_block_once(struct xw_endpoint *ep, __u64 deadline, int max_ms)
{
	__u64 t = xwi_now_ns(), before = ep->wake_records;
	__s64 ns = (__s64)max_ms * 1000000LL;
	bool timed_out;

	deadline = xwi_ep_deadline(ep, deadline);
	if (deadline) {
		__u64 left = deadline > t ? (deadline - t + 999999) / 1000000 * 1000000 : 0;

		if (left < (__u64)ns)
			ns = (__s64)left;
	}
	ep->ws.blocks++;
	sleep_armed(ep, &ep->shared->armed, ring_buffer__epoll_fd(ep->rb), ns, true, &timed_out);
	ep->wake_lat = 0;
	ring_buffer__consume(ep->rb);
	if (ep->wake_lat) {
		/* B follows what a wake costs on this path (not what the
		 * woken thread waited for a CPU: a late wake) */
		if (!xwi_waitpol_wake(&ep->wait, ep->wake_lat))
			ep->ws.late_wakes++;
		ep->ws.block_cost_ns = ep->wait.block_cost;
	}
	if (ep->wake_records != before) {
		ep->ws.wakes += ep->wake_records - before;
		if (!frames_in_flight(ep) && !xwi_ep_rx_ready(ep))
			ep->ws.spurious_wakes++;
	} else if (timed_out && !frames_in_flight(ep) && !xwi_ep_rx_ready(ep)) {
		ep->ws.sleep_timeouts++;
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
	/* the application sleeps next: the delayed ACKs go now */
	xwi_ep_ack_before_sleep(ep);
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
