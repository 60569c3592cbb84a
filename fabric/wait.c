// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * wait.c - what completion queues and counters sleep on, and the
 * FI_PROGRESS_AUTO thread.
 *
 * Every CQ and counter owns a wait set: an epoll fd (what FI_GETWAIT hands
 * out) holding the wake fd (xw_endpoint__fd) of every endpoint bound to it,
 * an event fd and a timer fd.  A sleeper arms every bound endpoint
 * (xw_endpoint__arm: the XDP program, or a local sender through the
 * endpoint's inbox, wakes it on the frames it waits for), and sleeps on
 * the epoll fd bounded by the endpoints' next protocol timer
 * (xw_endpoint__next_deadline) and its own limit.  Completions that no
 * frame causes (a send to self, a cancel, a peek finding nothing,
 * fi_cq_signal, another thread's progress or post, a close) write the event
 * fd when someone sleeps (xwfi_wset_kick).  fi_trywait arms the endpoints
 * and sets the timer fd to their next protocol timer, so that an
 * application sleeping on the fd with its own timeout still comes back for
 * retransmissions.
 *
 * An endpoint bound to several CQs and counters can be armed by several
 * sleepers: the domain counts its arms, and only the last sleeper to leave
 * disarms it.
 *
 * FI_PROGRESS_AUTO: one thread per domain sleeps the same way on every
 * endpoint bound to the domain's CQs and counters and progresses them; the
 * completions it queues wake the application's sleepers through their event
 * fds (their wait sets then hold no endpoint fds).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>

#include "xwfi.h"

#define EV_EP 0u
#define EV_KICK 1u
#define EV_TIMER 2u

/* The progress thread's longest sleep (a stop is also a kick). */
#define XWFI_PROGRESS_SLEEP_NS 100000000ULL

__u64 xwfi_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/* ---- arming, counted per domain ------------------------------------------- */

static struct xwfi_arm *arm_slot(struct xwfi_domain *dom, struct xw_endpoint *xep, bool create)
{
	struct xwfi_arm *free_slot = NULL;

	for (int i = 0; i < XW_MAX_ENDPOINTS; i++) {
		if (dom->arms[i].xep == xep)
			return &dom->arms[i];
		if (!dom->arms[i].xep && !free_slot)
			free_slot = &dom->arms[i];
	}
	if (create && free_slot) {
		free_slot->xep = xep;
		free_slot->n = 0;
	}
	return create ? free_slot : NULL;
}

/* 0 armed; -EAGAIN frames wait (not armed). */
static int arm_ep(struct xwfi_domain *dom, struct xw_endpoint *xep)
{
	struct xwfi_arm *a = arm_slot(dom, xep, true);
	int err = xw_endpoint__arm(xep);

	if (err) {
		/* another sleeper's arm is gone with it: it was woken (frames
		 * wait), the completions they make kick it */
		return err;
	}
	if (a)
		a->n++;
	return 0;
}

static void disarm_ep(struct xwfi_domain *dom, struct xw_endpoint *xep)
{
	struct xwfi_arm *a = arm_slot(dom, xep, false);

	/* not found: the endpoint was closed meanwhile (its slot cleared) */
	if (!a || a->n <= 0)
		return;
	if (--a->n == 0) {
		xw_endpoint__disarm(xep);
		a->xep = NULL;
	}
}

/* The endpoint goes away: forget its arms. */
static void forget_ep(struct xwfi_domain *dom, struct xw_endpoint *xep)
{
	struct xwfi_arm *a = arm_slot(dom, xep, false);

	if (a) {
		a->xep = NULL;
		a->n = 0;
	}
}

/* ---- wait sets -------------------------------------------------------------- */

static void drain(int fd)
{
	uint64_t v;

	while (read(fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
		;
}

static int ep_add(int epfd, int fd, __u32 tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = tag };

	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) && errno != EEXIST)
		return -errno;
	return 0;
}

int xwfi_wset_init(struct xwfi_wset *ws)
{
	int err;

	memset(ws, 0, sizeof(*ws));
	ws->epfd = epoll_create1(EPOLL_CLOEXEC);
	ws->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ws->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (ws->epfd < 0 || ws->evfd < 0 || ws->tfd < 0) {
		err = -errno;
		goto fail;
	}
	err = ep_add(ws->epfd, ws->evfd, EV_KICK);
	if (!err)
		err = ep_add(ws->epfd, ws->tfd, EV_TIMER);
	if (!err)
		return 0;
fail:
	FI_WARN(&xwfi_prov, FI_LOG_CQ, "cannot create a wait object: %s\n", strerror(-err));
	if (ws->epfd >= 0)
		close(ws->epfd);
	if (ws->evfd >= 0)
		close(ws->evfd);
	if (ws->tfd >= 0)
		close(ws->tfd);
	ws->epfd = ws->evfd = ws->tfd = -1;
	return err == -EMFILE || err == -ENFILE ? -FI_EMFILE : -FI_ENOMEM;
}

void xwfi_wset_kick(struct xwfi_wset *ws)
{
	uint64_t one = 1;

	if (!ws->sleepers && !ws->fd_armed)
		return;
	ws->st.kicks++;
	if (write(ws->evfd, &one, sizeof(one)) < 0) {
		/* the counter is full: readable anyway */
	}
}

int xwfi_wset_fini(struct xwfi_domain *dom, struct xwfi_wset *ws)
{
	struct timespec ms = { .tv_nsec = 1000000 };

	pthread_mutex_lock(&dom->lock);
	ws->closing = true;
	/* wake and wait out the sleepers (they touch nothing of the object
	 * once they see closing): 10 s at most */
	for (int i = 0; (ws->sleepers || ws->users) && i < 10000; i++) {
		uint64_t one = 1;

		if (write(ws->evfd, &one, sizeof(one)) < 0) {
			/* readable anyway */
		}
		pthread_mutex_unlock(&dom->lock);
		nanosleep(&ms, NULL);
		pthread_mutex_lock(&dom->lock);
	}
	if (ws->sleepers || ws->users) {
		ws->closing = false;
		pthread_mutex_unlock(&dom->lock);
		return -FI_EBUSY;
	}
	pthread_mutex_unlock(&dom->lock);
	close(ws->epfd);
	close(ws->evfd);
	close(ws->tfd);
	ws->epfd = ws->evfd = ws->tfd = -1;
	return 0;
}

int xwfi_wset_add(struct xwfi_domain *dom, struct xwfi_wset *ws, struct xwfi_ep *ep)
{
	struct xw_endpoint *xep = xwfi_ep_xw(ep);
	int err;

	if (!xep || !ws->eps_fds)
		return 0;
	err = ep_add(ws->epfd, xw_endpoint__fd(xep), EV_EP);
	if (err) {
		FI_WARN(&xwfi_prov, FI_LOG_CQ, "cannot watch an endpoint's wake fd: %s\n",
			strerror(-err));
		return err == -ENOMEM ? -FI_ENOMEM : -FI_EINVAL;
	}
	/* the application sleeps on the fd already: arm this one too, or
	 * wake it when frames wait */
	if (ws->fd_armed && arm_ep(dom, xep))
		xwfi_wset_kick(ws);
	/* a sleeper re-reads its endpoints */
	xwfi_wset_kick(ws);
	return 0;
}

void xwfi_wset_del(struct xwfi_domain *dom, struct xwfi_wset *ws, struct xwfi_ep *ep)
{
	struct xw_endpoint *xep = xwfi_ep_xw(ep);

	if (!xep || !ws->eps_fds)
		return;
	epoll_ctl(ws->epfd, EPOLL_CTL_DEL, xw_endpoint__fd(xep), NULL);
	/* only endpoint close detaches: the endpoint goes away */
	forget_ep(dom, xep);
	xwfi_wset_kick(ws);
}

__u64 xwfi_eps_deadline(struct xwfi_ep **eps, int n)
{
	__u64 d = UINT64_MAX;

	for (int i = 0; i < n; i++) {
		struct xw_endpoint *xep = xwfi_ep_xw(eps[i]);
		__u64 e = xep ? xw_endpoint__next_deadline(xep) : UINT64_MAX;

		if (e < d)
			d = e;
	}
	return d;
}

/* Arm every endpoint of @eps into @armed; -FI_EAGAIN (none left armed)
 * when frames wait on one. */
static int arm_all(struct xwfi_domain *dom, struct xwfi_ep **eps, int n,
		   struct xw_endpoint **armed, int *na)
{
	*na = 0;
	for (int i = 0; i < n; i++) {
		struct xw_endpoint *xep = xwfi_ep_xw(eps[i]);

		if (!xep)
			continue;
		if (arm_ep(dom, xep)) {
			for (int k = 0; k < *na; k++)
				disarm_ep(dom, armed[k]);
			*na = 0;
			return -FI_EAGAIN;
		}
		armed[(*na)++] = xep;
	}
	return 0;
}

enum xwfi_wake xwfi_wset_sleep(struct xwfi_domain *dom, struct xwfi_wset *ws,
			       struct xwfi_ep **eps, int n, __u64 until,
			       bool (*ready)(void *arg), void *arg)
{
	struct xw_endpoint *armed[XW_MAX_ENDPOINTS];
	struct epoll_event ev[8];
	enum xwfi_wake why = XWFI_WOKE_TIMEOUT;
	bool timer_bound = false;
	int na = 0, nev, ms;
	__u64 now, t1;

	if (ws->closing)
		return XWFI_WOKE_CLOSED;
	drain(ws->evfd);
	if (ready && ready(arg))
		return XWFI_WOKE_NONE;
	if (n > XW_MAX_ENDPOINTS)
		n = XW_MAX_ENDPOINTS;
	now = xwfi_now_ns();
	if (ws->eps_fds) {
		__u64 d = xwfi_eps_deadline(eps, n);

		if (d <= now)
			return XWFI_WOKE_TIMER; /* due: progress, no sleep */
		if (d < until) {
			until = d;
			timer_bound = true;
		}
		if (arm_all(dom, eps, n, armed, &na)) {
			ws->st.arm_refused++;
			return XWFI_WOKE_REFUSED;
		}
	}
	if (until <= now) {
		ms = 0;
	} else if (until == UINT64_MAX) {
		ms = -1;
	} else {
		__u64 left = (until - now + 999999) / 1000000;

		ms = left > 3600000 ? 3600000 : (int)left;
	}
	ws->sleepers++;
	ws->st.sleeps++;
	pthread_mutex_unlock(&dom->lock);
	nev = epoll_wait(ws->epfd, ev, 8, ms);
	t1 = xwfi_now_ns();
	pthread_mutex_lock(&dom->lock);
	ws->sleepers--;
	ws->st.sleep_ns += t1 - now;
	for (int i = 0; i < na; i++)
		disarm_ep(dom, armed[i]);
	for (int i = 0; i < nev; i++) {
		enum xwfi_wake w = ev[i].data.u32 == EV_EP     ? XWFI_WOKE_FRAME
				   : ev[i].data.u32 == EV_KICK ? XWFI_WOKE_EVENT
							       : XWFI_WOKE_TIMER;

		if (why == XWFI_WOKE_TIMEOUT || w < why)
			why = w;
	}
	if (nev <= 0 && timer_bound && t1 >= until)
		why = XWFI_WOKE_TIMER;
	switch (why) {
	case XWFI_WOKE_FRAME:
		ws->st.wakes_frame++;
		break;
	case XWFI_WOKE_EVENT:
		ws->st.wakes_event++;
		break;
	case XWFI_WOKE_TIMER:
		ws->st.wakes_timer++;
		break;
	default:
		ws->st.timeouts++;
	}
	if (ws->closing)
		return XWFI_WOKE_CLOSED;
	return why;
}

int xwfi_wset_fd_arm(struct xwfi_domain *dom, struct xwfi_wset *ws, struct xwfi_ep **eps, int n)
{
	struct xw_endpoint *armed[XW_MAX_ENDPOINTS];
	int na;

	xwfi_wset_fd_disarm(dom, ws, eps, n);
	drain(ws->evfd);
	drain(ws->tfd);
	if (ws->eps_fds) {
		__u64 d = xwfi_eps_deadline(eps, n);

		if (n > XW_MAX_ENDPOINTS)
			n = XW_MAX_ENDPOINTS;
		if (d <= xwfi_now_ns())
			return -FI_EAGAIN;
		if (arm_all(dom, eps, n, armed, &na)) {
			ws->st.arm_refused++;
			return -FI_EAGAIN;
		}
		if (d != UINT64_MAX) {
			struct itimerspec its = {
				.it_value = { .tv_sec = (time_t)(d / 1000000000ULL),
					      .tv_nsec = (long)(d % 1000000000ULL) },
			};

			timerfd_settime(ws->tfd, TFD_TIMER_ABSTIME, &its, NULL);
		}
	}
	ws->fd_armed = true;
	return 0;
}

void xwfi_wset_fd_disarm(struct xwfi_domain *dom, struct xwfi_wset *ws, struct xwfi_ep **eps,
			 int n)
{
	struct itimerspec off = { 0 };

	if (!ws->fd_armed)
		return;
	ws->fd_armed = false;
	if (!ws->eps_fds)
		return;
	for (int i = 0; i < n; i++) {
		struct xw_endpoint *xep = xwfi_ep_xw(eps[i]);

		if (xep)
			disarm_ep(dom, xep);
	}
	timerfd_settime(ws->tfd, 0, &off, NULL);
}

/* ---- FI_PROGRESS_AUTO --------------------------------------------------------- */

struct xwfi_progress {
	pthread_t th;
	struct xwfi_domain *dom;
	struct xwfi_ep *eps[XW_MAX_ENDPOINTS];
	int refs[XW_MAX_ENDPOINTS];
	int n;
	bool stop;
	struct xwfi_wset ws;
};

static void *progress_main(void *arg)
{
	struct xwfi_progress *p = arg;
	struct xwfi_domain *dom = p->dom;

	pthread_mutex_lock(&dom->lock);
	while (!p->stop) {
		int frames = 0;

		for (int i = 0; i < p->n; i++)
			frames += xwfi_ep_progress(p->eps[i]);
		p->ws.st.idle_sleeps++; /* here: its passes */
		if (frames)
			continue;
		if (xwfi_wset_sleep(dom, &p->ws, p->eps, p->n,
				    xwfi_now_ns() + XWFI_PROGRESS_SLEEP_NS, NULL,
				    NULL) == XWFI_WOKE_CLOSED)
			break;
	}
	pthread_mutex_unlock(&dom->lock);
	return NULL;
}

/* Caller holds the domain lock. */
static struct xwfi_progress *progress_get(struct xwfi_domain *dom)
{
	struct xwfi_progress *p = dom->prog;
	int err;

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->dom = dom;
	if (xwfi_wset_init(&p->ws)) {
		free(p);
		return NULL;
	}
	p->ws.eps_fds = true;
	err = pthread_create(&p->th, NULL, progress_main, p);
	if (err) {
		FI_WARN(&xwfi_prov, FI_LOG_DOMAIN, "cannot start the progress thread: %s\n",
			strerror(err));
		close(p->ws.epfd);
		close(p->ws.evfd);
		close(p->ws.tfd);
		free(p);
		return NULL;
	}
	dom->prog = p;
	return p;
}

int xwfi_progress_add(struct xwfi_domain *dom, struct xwfi_ep *ep)
{
	struct xwfi_progress *p;
	int err;

	if (!dom->auto_progress)
		return 0;
	p = progress_get(dom);
	if (!p)
		return -FI_ENOMEM;
	for (int i = 0; i < p->n; i++)
		if (p->eps[i] == ep) {
			p->refs[i]++;
			return 0;
		}
	if (p->n == XW_MAX_ENDPOINTS)
		return -FI_ENOSPC;
	err = xwfi_wset_add(dom, &p->ws, ep);
	if (err)
		return err;
	p->eps[p->n] = ep;
	p->refs[p->n++] = 1;
	return 0;
}

void xwfi_progress_del(struct xwfi_domain *dom, struct xwfi_ep *ep)
{
	struct xwfi_progress *p = dom->prog;

	if (!p)
		return;
	for (int i = 0; i < p->n; i++)
		if (p->eps[i] == ep) {
			if (--p->refs[i])
				return;
			xwfi_wset_del(dom, &p->ws, ep);
			p->n--;
			p->eps[i] = p->eps[p->n];
			p->refs[i] = p->refs[p->n];
			return;
		}
}

void xwfi_progress_stop(struct xwfi_domain *dom)
{
	struct xwfi_progress *p;
	uint64_t one = 1;

	pthread_mutex_lock(&dom->lock);
	p = dom->prog;
	dom->prog = NULL;
	if (p) {
		p->stop = true;
		if (write(p->ws.evfd, &one, sizeof(one)) < 0) {
			/* readable anyway */
		}
	}
	pthread_mutex_unlock(&dom->lock);
	if (!p)
		return;
	pthread_join(p->th, NULL);
	close(p->ws.epfd);
	close(p->ws.evfd);
	close(p->ws.tfd);
	free(p);
}

/* Caller holds the domain lock. */
void xwfi_progress_stats(struct xwfi_domain *dom, struct fi_xdpwake_wait_stats *st)
{
	struct xwfi_progress *p = dom->prog;

	if (!p)
		return;
	st->progress_runs = p->ws.st.idle_sleeps;
	st->progress_sleeps = p->ws.st.sleeps;
	st->progress_wakes = p->ws.st.wakes_frame;
}
