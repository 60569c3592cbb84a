// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * wait.c - what completion queues and counters sleep on and share: their
 * wait sets, blocking waits (fi_cq_sread, fi_cntr_wait) with the
 * FI_XDPWAKE_WAIT strategy, the endpoints bound to them, FI_GETWAIT and
 * fi_trywait's arming; and the FI_PROGRESS_AUTO thread.  It knows an
 * endpoint only as its struct xwfi_epref: the library endpoint, and the
 * progress function it calls.
 *
 * Every CQ and counter owns a wait set: an epoll fd (what FI_GETWAIT hands
 * out) holding the wake fd (xw_endpoint__fd) of every endpoint bound to it,
 * an event fd and a timer fd.  A sleeper arms every bound endpoint
 * (xw_endpoint__arm: the XDP program, or a local sender through the
 * endpoint's inbox, wakes it on the frames it waits for), and sleeps on
 * the epoll fd bounded by the endpoints' next protocol timer
 * (xw_endpoint__next_deadline) and its own limit.  Completions that no
 * frame causes (a cancel, a peek finding nothing, an eager send,
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
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
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

	for (int i = 0; i < XWFI_DOMAIN_EPS; i++) {
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

int xwfi_wset_open(struct xwfi_domain *dom, struct xwfi_wset *ws)
{
	int err = xwfi_wset_init(ws);

	if (err)
		return err;
	ws->eps_fds = !dom->auto_progress;
	pthread_mutex_lock(&dom->lock);
	dom->refs++;
	pthread_mutex_unlock(&dom->lock);
	return 0;
}

int xwfi_wset_close(struct xwfi_domain *dom, struct xwfi_wset *ws, const int *refs)
{
	int err;

	pthread_mutex_lock(&dom->lock);
	err = *refs ? -FI_EBUSY : 0;
	pthread_mutex_unlock(&dom->lock);
	if (err)
		return err;
	err = xwfi_wset_fini(dom, ws);
	if (err)
		return err;
	pthread_mutex_lock(&dom->lock);
	dom->refs--;
	pthread_mutex_unlock(&dom->lock);
	return 0;
}

int xwfi_wset_add(struct xwfi_domain *dom, struct xwfi_wset *ws, struct xwfi_epref *ep)
{
	struct xw_endpoint *xep = ep->xep;
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

void xwfi_wset_del(struct xwfi_domain *dom, struct xwfi_wset *ws, struct xwfi_epref *ep)
{
	struct xw_endpoint *xep = ep->xep;

	if (!xep || !ws->eps_fds)
		return;
	epoll_ctl(ws->epfd, EPOLL_CTL_DEL, xw_endpoint__fd(xep), NULL);
	/* only endpoint close detaches: the endpoint goes away */
	forget_ep(dom, xep);
	xwfi_wset_kick(ws);
}

__u64 xwfi_eps_deadline(struct xwfi_epref **eps, int n)
{
	__u64 d = UINT64_MAX;

	for (int i = 0; i < n; i++) {
		struct xw_endpoint *xep = eps[i]->xep;
		__u64 e = xep ? xw_endpoint__next_deadline(xep) : UINT64_MAX;

		if (e < d)
			d = e;
	}
	return d;
}

/* Arm every endpoint of @eps into @armed; -FI_EAGAIN (none left armed)
 * when frames wait on one. */
static int arm_all(struct xwfi_domain *dom, struct xwfi_epref **eps, int n,
		   struct xw_endpoint **armed, int *na)
{
	*na = 0;
	for (int i = 0; i < n; i++) {
		struct xw_endpoint *xep = eps[i]->xep;

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
			       struct xwfi_epref **eps, int n, __u64 until,
			       bool (*ready)(void *arg), void *arg)
{
	struct xw_endpoint *armed[XWFI_DOMAIN_EPS];
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
	if (n > XWFI_DOMAIN_EPS)
		n = XWFI_DOMAIN_EPS;
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

int xwfi_wset_fd_arm(struct xwfi_domain *dom, struct xwfi_wset *ws, struct xwfi_epref **eps, int n)
{
	struct xw_endpoint *armed[XWFI_DOMAIN_EPS];
	int na;

	xwfi_wset_fd_disarm(dom, ws, eps, n);
	drain(ws->evfd);
	drain(ws->tfd);
	if (ws->eps_fds) {
		__u64 d = xwfi_eps_deadline(eps, n);

		if (n > XWFI_DOMAIN_EPS)
			n = XWFI_DOMAIN_EPS;
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

void xwfi_wset_fd_disarm(struct xwfi_domain *dom, struct xwfi_wset *ws, struct xwfi_epref **eps,
			 int n)
{
	struct itimerspec off = { 0 };

	if (!ws->fd_armed)
		return;
	ws->fd_armed = false;
	if (!ws->eps_fds)
		return;
	for (int i = 0; i < n; i++) {
		struct xw_endpoint *xep = eps[i]->xep;

		if (xep)
			disarm_ep(dom, xep);
	}
	timerfd_settime(ws->tfd, 0, &off, NULL);
}

/* ---- FI_PROGRESS_AUTO --------------------------------------------------------- */

struct xwfi_progress {
	pthread_t th;
	struct xwfi_domain *dom;
	struct xwfi_epref *eps[XWFI_DOMAIN_EPS];
	int refs[XWFI_DOMAIN_EPS];
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
			frames += p->eps[i]->progress(p->eps[i]);
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

int xwfi_progress_add(struct xwfi_domain *dom, struct xwfi_epref *ep)
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
	if (p->n == XWFI_DOMAIN_EPS)
		return -FI_ENOSPC;
	err = xwfi_wset_add(dom, &p->ws, ep);
	if (err)
		return err;
	p->eps[p->n] = ep;
	p->refs[p->n++] = 1;
	return 0;
}

void xwfi_progress_del(struct xwfi_domain *dom, struct xwfi_epref *ep)
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

/* ---- a crowded host ------------------------------------------------------- */

/* How often the host's runnable tasks are counted again (ns). */
#define XWFI_CROWD_CHECK_NS 10000000ULL

/* The CPUs this process may run on (at least 1), counted once. */
static int crowd_cpus(void)
{
	static int n;
	cpu_set_t set;

	if (!n)
		n = !sched_getaffinity(0, sizeof(set), &set) && CPU_COUNT(&set) > 0 ? CPU_COUNT(&set)
										      : 1;
	return n;
}

/* The host's runnable tasks now (the fourth field of /proc/loadavg,
 * "running/total"); -1 if unknown. */
static int runnable_tasks(void)
{
	char buf[128];
	ssize_t len;
	int fd, r = -1, a;
	char *p;

	fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -1;
	buf[len] = 0;
	p = buf;
	for (int f = 0; f < 3 && p; f++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (p && sscanf(p, "%d/", &a) == 1)
		r = a;
	return r;
}

/*
 * Whether the host has more than FI_XDPWAKE_IDLE_CROWD runnable tasks per
 * CPU the process may use (looked at every XWFI_CROWD_CHECK_NS; @now is
 * the caller's clock, 0: the last answer, no look).  There an idle read of
 * a CQ with wire traffic sleeps at once (cq.c, cq_idle): every poller or
 * yielder is one more task between the CPU and the kernel's softirq
 * thread that carries the wire's frames and ACKs, or a rank that has
 * frames to handle (2 x 32 ranks on 2 CPUs: ksoftirqd waited up to
 * 243 ms, ACKs came tens of ms late), and under EEVDF a sched_yield() only
 * pushes the yielder's own deadline back.  Caller holds the domain lock
 * (the cached answer is the process's; a race costs one stale answer).
 */
bool xwfi_host_crowded(__u64 now)
{
	static __u64 checked;
	static bool crowded;
	int r;

	if (xwfi_params.idle_crowd <= 0)
		return false;
	if (!now || (checked && now - checked < XWFI_CROWD_CHECK_NS))
		return crowded;
	checked = now;
	r = runnable_tasks();
	crowded = r > 0 && r > xwfi_params.idle_crowd * crowd_cpus();
	return crowded;
}

/* ---- blocking waits -------------------------------------------------------- */

/* A blocking wait's longest single sleep: the timeout is checked between. */
#define XWFI_MAX_SLEEP_NS 100000000ULL

enum xwfi_idle_mode xwfi_wait_mode(void)
{
	static int mode = -1;
	int s;

	if (mode >= 0)
		return (enum xwfi_idle_mode)mode;
	s = xwfi_params.wait && *xwfi_params.wait ? xw_wait_strategy_parse(xwfi_params.wait)
						  : XW_WAIT_DEFAULT;
	switch (s) {
	case XW_WAIT_SPIN:
		mode = XWFI_IDLE_SPIN;
		break;
	case XW_WAIT_YIELD:
	case XW_WAIT_SPIN_YIELD:
		mode = XWFI_IDLE_YIELD;
		break;
	default:
		mode = XWFI_IDLE_SLEEP;
	}
	return (enum xwfi_idle_mode)mode;
}

/* How long polls find nothing before a sleep: FI_XDPWAKE_SPIN_USECS, else
 * the measured cost of a block-and-wake (2-competitive); 0 for block. */
__u64 xwfi_spin_ns(void)
{
	static __u64 ns = UINT64_MAX;

	if (ns != UINT64_MAX)
		return ns;
	if (xwfi_params.wait && (xw_wait_strategy_parse(xwfi_params.wait) == XW_WAIT_BLOCK ||
				 xw_wait_strategy_parse(xwfi_params.wait) == XW_WAIT_YIELD))
		ns = 0;
	else if (xwfi_params.spin_usecs > 0)
		ns = (__u64)xwfi_params.spin_usecs * 1000;
	else
		ns = xw_block_cost_ns();
	return ns;
}

/* While one of @eps pulls a large message, a spin-* wait polls until
 * FI_XDPWAKE_PULL_SPIN times B has passed since the last poll that found
 * frames, as the library's waits do (its waitloop.c): the sender's
 * fragments come in bursts, and a sleep in each gap costs a wake-up.  0
 * when none pulls, or the setting is 0. */
static __u64 pull_spin_ns(struct xwfi_epref **eps, int n)
{
	__u64 m = xwfi_params.pull_spin >= 0 ? (__u64)xwfi_params.pull_spin
					       : XW_PULL_SPIN_DEFAULT;

	for (int i = 0; m && i < n; i++)
		if (xw_endpoint__pulling(eps[i]->xep) > 0)
			return m * xw_block_cost_ns();
	return 0;
}

int xwfi_eps_progress(struct xwfi_epref **eps, int n)
{
	int frames = 0;

	for (int i = 0; i < n; i++)
		frames += eps[i]->progress(eps[i]);
	return frames;
}

bool xwfi_eps_idle(struct xwfi_wset *ws, struct xwfi_epref **eps, const int *n)
{
	bool idle = true;
	int k;

	__atomic_add_fetch(&ws->fast_readers, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&ws->eps_changing, __ATOMIC_SEQ_CST)) {
		idle = false;
		goto out;
	}
	k = __atomic_load_n(n, __ATOMIC_ACQUIRE);
	for (int i = 0; i < k && idle; i++) {
		struct xwfi_epref *ref = __atomic_load_n(&eps[i], __ATOMIC_ACQUIRE);

		idle = ref && ref->idle(ref);
	}
out:
	__atomic_sub_fetch(&ws->fast_readers, 1, __ATOMIC_RELEASE);
	return idle;
}

/* Before @ws's endpoint list changes (domain lock held): no lock-free
 * reader (xwfi_eps_idle) is in it or can enter it, until eps_settled.  A
 * reader is in it for a few loads; one preempted there is waited for. */
static void eps_quiesce(struct xwfi_wset *ws)
{
	__atomic_store_n(&ws->eps_changing, true, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&ws->fast_readers, __ATOMIC_SEQ_CST))
		sched_yield();
}

static void eps_settled(struct xwfi_wset *ws)
{
	__atomic_store_n(&ws->eps_changing, false, __ATOMIC_RELEASE);
}

/* Polls for the spin time (longer while a large message is pulled:
 * pull_spin_ns), then sleeps on the wait set. */
int xwfi_wait_ready(struct xwfi_domain *dom, struct xwfi_wset *ws, struct xwfi_epref **eps,
		    int *neps, bool (*ready)(void *arg), void *arg, int timeout)
{
	__u64 now = xwfi_now_ns(), spun = now;
	__u64 end = timeout >= 0 ? now + (__u64)timeout * 1000000ULL : UINT64_MAX;
	enum xwfi_idle_mode mode = xwfi_wait_mode();
	int r;

	/* a close waits for this call to leave (it drops the lock between polls) */
	ws->users++;
	for (;;) {
		if (ws->closing) {
			ws->users--;
			pthread_mutex_unlock(&dom->lock);
			return -FI_ECANCELED;
		}
		xwfi_wset_fd_disarm(dom, ws, eps, *neps);
		if (xwfi_eps_progress(eps, *neps))
			spun = xwfi_now_ns();
		r = 0;
		if (ready(arg))
			break;
		now = xwfi_now_ns();
		r = -FI_EAGAIN;
		if (now >= end)
			break;
		if (mode != XWFI_IDLE_SLEEP || now - spun < xwfi_spin_ns() ||
		    (xwfi_spin_ns() && now - spun < pull_spin_ns(eps, *neps))) {
			/* poll again, letting other threads in between */
			pthread_mutex_unlock(&dom->lock);
			if (mode == XWFI_IDLE_YIELD)
				sched_yield();
			pthread_mutex_lock(&dom->lock);
			continue;
		}
		switch (xwfi_wset_sleep(dom, ws, eps, *neps,
					end - now < XWFI_MAX_SLEEP_NS ? end : now + XWFI_MAX_SLEEP_NS,
					ready, arg)) {
		case XWFI_WOKE_CLOSED:
			ws->users--;
			pthread_mutex_unlock(&dom->lock);
			return -FI_ECANCELED;
		case XWFI_WOKE_FRAME:
		case XWFI_WOKE_EVENT:
			/* spin again for what the wake announced */
			spun = xwfi_now_ns();
			break;
		default:
			break;
		}
	}
	ws->users--;
	return r;
}

/* ---- what CQs and counters share ------------------------------------------ */

int xwfi_wset_attach(struct xwfi_domain *dom, struct xwfi_wset *ws, struct xwfi_epref **eps,
		     int *n, int *refs, struct xwfi_epref *ep)
{
	int err;

	for (int i = 0; i < *n; i++)
		if (eps[i] == ep)
			return 0;
	if (*n == XWFI_CQ_EPS)
		return -FI_ENOSPC;
	err = xwfi_wset_add(dom, ws, ep);
	if (!err) {
		err = xwfi_progress_add(dom, ep);
		if (err)
			xwfi_wset_del(dom, ws, ep);
	}
	if (err)
		return err;
	eps_quiesce(ws);
	eps[*n] = ep;
	__atomic_store_n(n, *n + 1, __ATOMIC_RELEASE);
	eps_settled(ws);
	(*refs)++;
	return 0;
}

void xwfi_wset_detach(struct xwfi_domain *dom, struct xwfi_wset *ws, struct xwfi_epref **eps,
		      int *n, int *refs, struct xwfi_epref *ep)
{
	for (int i = 0; i < *n; i++)
		if (eps[i] == ep) {
			/* an application asleep on the fd loses this endpoint's
			 * arm: it wakes, reads, and arms the others again */
			xwfi_wset_kick(ws);
			xwfi_wset_fd_disarm(dom, ws, eps, *n);
			xwfi_wset_del(dom, ws, ep);
			xwfi_progress_del(dom, ep);
			eps_quiesce(ws);
			eps[i] = eps[*n - 1];
			__atomic_store_n(n, *n - 1, __ATOMIC_RELEASE);
			eps_settled(ws);
			(*refs)--;
			return;
		}
}

static void wait_stats(struct xwfi_domain *dom, struct xwfi_wset *ws, void *arg)
{
	struct fi_xdpwake_wait_stats *st = arg;

	pthread_mutex_lock(&dom->lock);
	*st = ws->st;
	xwfi_progress_stats(dom, st);
	pthread_mutex_unlock(&dom->lock);
}

/* FI_GETWAIT: the wait set's epoll fd, readable when a bound endpoint is
 * woken, a completion without a frame is queued or a protocol timer is
 * due, after fi_trywait() returned 0. */
int xwfi_wset_control(struct xwfi_domain *dom, struct xwfi_wset *ws, enum fi_wait_obj wait,
		      int command, void *arg)
{
	if (command == FI_XDPWAKE_GET_WAIT_STATS) {
		if (!arg)
			return -FI_EINVAL;
		wait_stats(dom, ws, arg);
		return 0;
	}
	if (command != FI_GETWAIT && command != FI_GETWAITOBJ)
		return -FI_ENOSYS;
	if (wait != FI_WAIT_FD && wait != FI_WAIT_UNSPEC)
		return -FI_ENODATA;
	if (!arg)
		return -FI_EINVAL;
	if (command == FI_GETWAITOBJ)
		*(enum fi_wait_obj *)arg = FI_WAIT_FD;
	else
		*(int *)arg = ws->epfd;
	return 0;
}


/* ---- fi_trywait ----------------------------------------------------------- */

int xwfi_wset_trywait(struct xwfi_domain *dom, struct xwfi_wset *ws, struct xwfi_epref **eps,
		      int n, bool ready)
{
	int err = ready ? -FI_EAGAIN : xwfi_wset_fd_arm(dom, ws, eps, n);

	if (err)
		ws->st.trywait_busy++;
	else
		ws->st.trywait_ok++;
	pthread_mutex_unlock(&dom->lock);
	return err;
}
