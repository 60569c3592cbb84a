// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The endpoint's helper threads, each asleep on a BPF ring buffer: the
 * notify thread (the XW_WAIT_NOTIFY strategy and xw_endpoint__set_notify:
 * it does the receiving and tells waiters and the application) and the
 * polling watchdog (woken by the XDP program for frames left unread a
 * whole period).
 */
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/eventfd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "internal.h"
#include "port.h"
#include "endpoint_int.h"
#include "wait.h"

/* The watchdog thread's scheduler slice (the kernel's shortest). */
#define XWI_WD_SLICE_NS 100000
/* The watchdog's bounds: the knob's range, SCHED_FIFO's priorities. */
#define XWI_WD_MAX_USECS 10000000
#define XWI_WD_MAX_RT_PRIO 99

/* Start @fn; with @rt_prio > 0 under SCHED_FIFO at that priority where
 * the process may (else, or at 0, with the process's policy). */
static int helper_start(struct xwi_helper *h, int ring_epfd, void *(*fn)(void *), void *arg,
			__u32 rt_prio)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct sched_param sp = { .sched_priority = (int)rt_prio };
	pthread_attr_t attr;
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
	err = EPERM;
	if (rt_prio && !pthread_attr_init(&attr)) {
		if (!pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED) &&
		    !pthread_attr_setschedpolicy(&attr, SCHED_FIFO) &&
		    !pthread_attr_setschedparam(&attr, &sp))
			err = pthread_create(&h->thread, &attr, fn, arg);
		pthread_attr_destroy(&attr);
		if (err)
			xwi_info("watchdog thread: no SCHED_FIFO (%s): the normal policy",
				 strerror(err));
	}
	if (err)
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

static void helper_stop(struct xwi_helper *h)
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
	__u64 t = xwi_now_ns(), left;

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
	for (int i = 0; i < 64 && (n = xwi_ep_progress_locked(ep)) > 0; i++)
		total += n;
	xwi_port_unlock(ep->port);
	return total;
}

/* ---- notify ------------------------------------------------------------ */

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
		xwi_sleep_armed(ep, &ep->shared->armed, ep->notify.epfd,
				deadline_wait_ms(xwi_ep_deadline(ep, 0), 1000), true);
		ring_buffer__consume(ep->rb);
	}
	return NULL;
}

/* The notify thread does the receiving: wait for its next pass. */
void xwi_notify_await(struct xw_endpoint *ep, __u64 seen, __u64 deadline)
{
	struct timespec ts;
	__u64 t = xwi_now_ns() + (__u64)XWI_MAX_SLEEP_MS * 1000000ULL;

	deadline = xwi_ep_deadline(ep, deadline);
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

void xwi_notify_stop(struct xw_endpoint *ep)
{
	helper_stop(&ep->notify);
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
	return helper_start(&ep->notify, ring_buffer__epoll_fd(ep->rb), notify_thread, ep, 0);
}

/* ---- watchdog ---------------------------------------------------------- */

/* The due time of the last watchdog record the thread consumed. */
static __thread __u64 wd_due;

static int wd_cb(void *ctx, void *data, size_t len)
{
	struct xw_endpoint *ep = ctx;
	const struct xw_wake_rec *r = data;

	if (len == sizeof(struct xw_wake_rec)) {
		ep->wd_records++;
		wd_due = r->ts_ns;
	}
	return 0;
}

/* sched_setattr(2)'s argument (glibc has no wrapper). */
struct wd_sched_attr {
	__u32 size, policy;
	__u64 flags;
	__s32 nice;
	__u32 priority;
	__u64 runtime, deadline, period;
};

/*
 * The watchdog thread runs for a few microseconds per wake, often while
 * the application computes on the other cores: with the fair scheduler's
 * default slice it may wait behind the computation for a whole slice
 * (milliseconds).  A short slice (sched_setattr's runtime for
 * SCHED_OTHER, EEVDF, Linux 6.12+; allowed without privileges) lets its
 * wake-up preempt at once.  Only for a thread of the normal policy, with
 * its nice value kept; an older kernel refuses it, and nothing changes.
 */
static void wd_sched(void)
{
	struct wd_sched_attr a = {
		.size = sizeof(a),
		.policy = SCHED_OTHER,
		.runtime = XWI_WD_SLICE_NS,
	};

	if (sched_getscheduler(0) != SCHED_OTHER)
		return;
	errno = 0;
	a.nice = getpriority(PRIO_PROCESS, 0);
	if (errno)
		return;
	(void)syscall(SYS_sched_setattr, 0, &a, 0);
}

static void *watchdog_thread(void *arg)
{
	struct xw_endpoint *ep = arg;
	struct xwi_waitpol lead;

	/* The lead: the median of the last record-to-pass-done times, as B
	 * follows the wake-ups of the receiving thread; B until then. */
	xwi_waitpol_init(&lead, XW_WAIT_BLOCK, ep->shared->wd_lead_ns, 0);
	lead.wake_cap = 0; /* the lead is what it is, however far from B */
	wd_sched();
	while (__atomic_load_n(&ep->wd.running, __ATOMIC_SEQ_CST)) {
		__u32 before = ep->wd_records;
		__u64 t;

		/* No recheck: the application may be consuming right now; the
		 * program wakes us only for frames left a whole period. */
		xwi_sleep_armed(ep, &ep->shared->wd_armed, ep->wd.epfd, 1000, false);
		ring_buffer__consume(ep->wd_rb);
		if (ep->wd_records == before)
			continue;
		ep->ws.watchdog_runs++;
		ep->ws.watchdog_frames += (__u64)drain(ep, true);
		t = xwi_now_ns();
		if (t > wd_due) {
			xwi_waitpol_wake(&lead, t - wd_due);
			__atomic_store_n(&ep->shared->wd_lead_ns, lead.block_cost, __ATOMIC_RELAXED);
			ep->ws.watchdog_lead_ns = lead.block_cost;
		}
	}
	return NULL;
}

void xwi_watchdog_stop(struct xw_endpoint *ep)
{
	__u32 key = ep->id;

	helper_stop(&ep->wd);
	if (ep->wd_ring_fd >= 0) {
		xw_iface__set_knob(ep->ifc, "watchdog_usecs", ep->id, 0);
		ep->shared->wd_lead_ns = 0;
		bpf_map_delete_elem(xwi_ep_map_fd(ep, "wd_rings"), &key);
		ring_buffer__free(ep->wd_rb);
		close(ep->wd_ring_fd);
		ep->wd_rb = NULL;
		ep->wd_ring_fd = -1;
	}
}

XW_API int xw_endpoint__set_watchdog_opts(struct xw_endpoint *ep, const struct xw_watchdog_opts *opts)
{
	__u32 key, period_usecs, rt_prio;
	int err;

	if (!ep || !opts || !XWI_OPTS_VALID(opts, xw_watchdog_opts))
		return -EINVAL;
	period_usecs = XWI_OPT(opts, period_usecs, 0);
	rt_prio = XWI_OPT(opts, rt_prio, 0);
	if (period_usecs > XWI_WD_MAX_USECS || rt_prio > XWI_WD_MAX_RT_PRIO)
		return -EINVAL;
	key = ep->id;
	xwi_watchdog_stop(ep);
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
	if (bpf_map_update_elem(xwi_ep_map_fd(ep, "wd_rings"), &key, &ep->wd_ring_fd, BPF_ANY)) {
		err = -errno;
		goto fail;
	}
	/* B until the thread has measured its own cost (see watchdog_thread) */
	ep->shared->wd_lead_ns = ep->wait.block_cost;
	ep->ws.watchdog_lead_ns = ep->wait.block_cost;
	err = xw_iface__set_knob(ep->ifc, "watchdog_usecs", ep->id, period_usecs);
	if (err)
		goto fail;
	err = helper_start(&ep->wd, ring_buffer__epoll_fd(ep->wd_rb), watchdog_thread, ep, rt_prio);
	if (err)
		goto fail;
	return 0;
fail:
	xwi_watchdog_stop(ep);
	return err;
}

XW_API int xw_endpoint__set_watchdog(struct xw_endpoint *ep, __u32 period_usecs)
{
	XW_OPTS(xw_watchdog_opts, o, .period_usecs = period_usecs);

	return xw_endpoint__set_watchdog_opts(ep, &o);
}
