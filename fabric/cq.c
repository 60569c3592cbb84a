// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * cq.c - completion queues and counters.
 *
 * Progress is manual: reading a CQ or counter runs one progress pass of
 * every endpoint bound to it.  Blocking reads (fi_cq_sread, fi_cntr_wait)
 * wait through xdpwake's own waiting: xw_wait_any() on the bound endpoints
 * with the FI_XDPWAKE_WAIT strategy (spin-block by default: spin for the
 * measured block-and-wake cost, then sleep until the XDP program wakes the
 * endpoint), the condition being "a completion is there".  FI_WAIT_FD:
 * fi_control(FI_GETWAIT) hands out the endpoint's wake fd
 * (xw_endpoint__fd), readable when the XDP program wakes it after
 * fi_trywait() armed it.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xwfi.h"

/* ---- waiting, shared by CQs and counters ---------------------------------- */

/* A sched_yield() that took longer ran another task: the CPU is shared. */
#define XWFI_SHARED_NS 5000ULL

/* FI_XDPWAKE_IDLE_SPIN_USECS in ns: how long the process's reads find
 * nothing before a sleep when the CPU is its own. */
static __u64 idle_spin_ns(void)
{
	return xwfi_params.idle_spin_usecs > 0 ? (__u64)xwfi_params.idle_spin_usecs * 1000 : 0;
}

/* A blocking wait's longest single sleep: the timeout is checked between. */
#define XWFI_MAX_SLEEP_NS 100000000ULL

/* What FI_XDPWAKE_WAIT asks of waits (parsed once). */
enum idle_mode { IDLE_SPIN, IDLE_YIELD, IDLE_SLEEP };

static enum idle_mode wait_mode(void)
{
	static int mode = -1;
	int s;

	if (mode >= 0)
		return (enum idle_mode)mode;
	s = xwfi_params.wait && *xwfi_params.wait ? xw_wait_strategy_parse(xwfi_params.wait)
						  : XW_WAIT_DEFAULT;
	switch (s) {
	case XW_WAIT_SPIN:
		mode = IDLE_SPIN;
		break;
	case XW_WAIT_YIELD:
	case XW_WAIT_SPIN_YIELD:
		mode = IDLE_YIELD;
		break;
	default:
		mode = IDLE_SLEEP;
	}
	return (enum idle_mode)mode;
}

/* How long polls find nothing before a sleep: FI_XDPWAKE_SPIN_USECS, else
 * the measured cost of a block-and-wake (2-competitive); 0 for block. */
static __u64 spin_ns(void)
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

struct waitctx {
	struct xwfi_domain *dom;
	struct xwfi_wset *ws;
	struct xwfi_ep **eps;
	int *neps;
	bool (*ready)(void *arg); /* with the domain lock held */
	void *arg;
};

static int eps_progress(struct xwfi_ep **eps, int n)
{
	int frames = 0;

	for (int i = 0; i < n; i++)
		frames += xwfi_ep_progress(eps[i]);
	return frames;
}

/*
 * Wait until ready() or @timeout ms (< 0: no limit): 0, -FI_EAGAIN (timed
 * out) or -FI_ECANCELED (the object is being closed: the caller touches
 * nothing of it any more).  Polls for the spin time, then sleeps on the
 * wait set (see wait.c).  Called with the domain lock held once; returns
 * with it held, except for -FI_ECANCELED (released).
 */
static int wait_ready(struct waitctx *w, int timeout)
{
	__u64 now = xwfi_now_ns(), spun = now;
	__u64 end = timeout >= 0 ? now + (__u64)timeout * 1000000ULL : UINT64_MAX;
	enum idle_mode mode = wait_mode();
	int r;

	/* a close waits for this call to leave (it drops the lock between polls) */
	w->ws->users++;
	for (;;) {
		if (w->ws->closing) {
			w->ws->users--;
			pthread_mutex_unlock(&w->dom->lock);
			return -FI_ECANCELED;
		}
		xwfi_wset_fd_disarm(w->dom, w->ws, w->eps, *w->neps);
		if (eps_progress(w->eps, *w->neps))
			spun = xwfi_now_ns();
		r = 0;
		if (w->ready(w->arg))
			break;
		now = xwfi_now_ns();
		r = -FI_EAGAIN;
		if (now >= end)
			break;
		if (mode != IDLE_SLEEP || now - spun < spin_ns()) {
			/* poll again, letting other threads in between */
			pthread_mutex_unlock(&w->dom->lock);
			if (mode == IDLE_YIELD)
				sched_yield();
			pthread_mutex_lock(&w->dom->lock);
			continue;
		}
		switch (xwfi_wset_sleep(w->dom, w->ws, w->eps, *w->neps,
					end - now < XWFI_MAX_SLEEP_NS ? end : now + XWFI_MAX_SLEEP_NS,
					w->ready, w->arg)) {
		case XWFI_WOKE_CLOSED:
			w->ws->users--;
			pthread_mutex_unlock(&w->dom->lock);
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
	w->ws->users--;
	return r;
}

/* ---- completion queue ----------------------------------------------------- */

static int grow(void **arr, size_t *cap, size_t head, size_t n, size_t elem)
{
	size_t ncap = *cap ? *cap * 2 : 256;
	char *a = malloc(ncap * elem);

	if (!a)
		return -FI_ENOMEM;
	for (size_t i = 0; i < n; i++)
		memcpy(a + i * elem, (char *)*arr + ((head + i) % *cap) * elem, elem);
	free(*arr);
	*arr = a;
	*cap = ncap;
	return 0;
}

/* Every completion, success or error, whatever its context (NULL is a
 * valid one), wakes a sleeper: it may have been made without a frame. */
int xwfi_cq_push(struct xwfi_cq *cq, const struct xwfi_cqe *e)
{
	if (e->err) {
		if (cq->en == cq->ecap) {
			if (grow((void **)&cq->errs, &cq->ecap, cq->ehead, cq->en, sizeof(*e)))
				return -FI_ENOMEM;
			cq->ehead = 0;
		}
		cq->errs[(cq->ehead + cq->en++) % cq->ecap] = *e;
	} else {
		if (cq->n == cq->cap) {
			if (grow((void **)&cq->ring, &cq->cap, cq->head, cq->n, sizeof(*e)))
				return -FI_ENOMEM;
			cq->head = 0;
		}
		cq->ring[(cq->head + cq->n++) % cq->cap] = *e;
	}
	xwfi_wset_kick(&cq->ws);
	return 0;
}

static size_t entry_size(enum fi_cq_format fmt)
{
	switch (fmt) {
	case FI_CQ_FORMAT_CONTEXT:
		return sizeof(struct fi_cq_entry);
	case FI_CQ_FORMAT_MSG:
		return sizeof(struct fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA:
		return sizeof(struct fi_cq_data_entry);
	default:
		return sizeof(struct fi_cq_tagged_entry);
	}
}

static void entry_write(enum fi_cq_format fmt, void *out, const struct xwfi_cqe *e)
{
	struct fi_cq_tagged_entry t = {
		.op_context = e->ctx,
		.flags = e->flags,
		.len = e->len,
		.buf = e->buf,
		.data = e->data,
		.tag = e->tag,
	};

	memcpy(out, &t, entry_size(fmt)); /* every format is a prefix */
}

static int cq_progress(struct xwfi_cq *cq)
{
	return eps_progress(cq->eps, cq->neps);
}

/* Caller holds the lock. */
static ssize_t cq_take(struct xwfi_cq *cq, void *buf, size_t count, fi_addr_t *src)
{
	size_t esz = entry_size(cq->fmt), k = 0;

	if (cq->en)
		return -FI_EAVAIL;
	while (k < count && cq->n) {
		const struct xwfi_cqe *e = &cq->ring[cq->head];

		entry_write(cq->fmt, (char *)buf + k * esz, e);
		if (src)
			src[k] = e->src;
		cq->head = (cq->head + 1) % cq->cap;
		cq->n--;
		k++;
	}
	return k ? (ssize_t)k : -FI_EAGAIN;
}

static bool cq_ready(void *arg)
{
	struct xwfi_cq *cq = arg;

	return cq->n || cq->en || cq->signaled;
}

/* Bumped by every read (of any CQ of the process) that returns something
 * and every pass that handles frames: a CQ is idle only while the whole
 * process finds nothing, so that a loop polling several CQs does not sleep
 * in one while another gets completions. */
static unsigned long activity;

static void active(void)
{
	__atomic_store_n(&activity, __atomic_load_n(&activity, __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELAXED);
}

/*
 * A read found nothing after a progress pass that handled @frames frames.
 * The CQ is idle from the first such read on (a read that returns
 * something, or a pass that handled frames, here or on any CQ of the
 * process, ends it); once it has been
 * idle for longer than the spin time, the read sleeps until an endpoint is
 * woken, a completion without a frame is queued, a protocol timer is due,
 * or FI_XDPWAKE_IDLE_SLEEP_USECS passed, then makes one more pass.  A
 * caller that gets completions never sleeps.  Lock held once; for -FI_ECANCELED
 * (closing) it is released.
 */
static ssize_t cq_idle(struct xwfi_cq *cq, int frames, void *buf, size_t count, fi_addr_t *src)
{
	unsigned long act = __atomic_load_n(&activity, __ATOMIC_RELAXED);
	__u64 now, sleeps;
	enum xwfi_wake why;

	if (xwfi_params.idle_sleep_usecs <= 0 || wait_mode() == IDLE_SPIN)
		return -FI_EAGAIN;
	now = xwfi_now_ns();
	if (frames) {
		active();
		act++;
	}
	if (frames || !cq->idle_since || act != cq->seen_activity) {
		cq->idle_since = now;
		cq->seen_activity = act;
		cq->probe_at = 0;
		return -FI_EAGAIN;
	}
	if (now - cq->idle_since < spin_ns())
		return -FI_EAGAIN;
	/*
	 * On a core of its own a rank loses nothing by polling on: it sleeps
	 * only after FI_XDPWAKE_IDLE_SPIN_USECS of nothing (a ping-pong's
	 * wait never sleeps, so its latency stays the spinning one).  On a
	 * core another task wants, each poll keeps that task - perhaps the
	 * peer it waits for - off the CPU: probe with sched_yield() (after
	 * the spin time, then at each doubling), and when it ran another
	 * task, sleep at once (issue 27's probe in the library's waits).
	 */
	if (wait_mode() == IDLE_SLEEP && now - cq->idle_since < idle_spin_ns()) {
		__u64 t0, t1, idle = now - cq->idle_since;

		if (idle < cq->probe_at)
			return -FI_EAGAIN;
		cq->probe_at = 2 * idle;
		pthread_mutex_unlock(&cq->dom->lock);
		t0 = xwfi_now_ns();
		sched_yield();
		t1 = xwfi_now_ns();
		pthread_mutex_lock(&cq->dom->lock);
		cq->ws.st.idle_probes++;
		if (t1 - t0 < XWFI_SHARED_NS)
			return cq_take(cq, buf, count, src); /* the CPU is ours: poll on */
		cq->ws.st.idle_shared++;
	}
	if (wait_mode() == IDLE_YIELD) {
		pthread_mutex_unlock(&cq->dom->lock);
		sched_yield();
		pthread_mutex_lock(&cq->dom->lock);
		return cq_take(cq, buf, count, src);
	}
	sleeps = cq->ws.st.sleeps;
	why = xwfi_wset_sleep(cq->dom, &cq->ws, cq->eps, cq->neps,
			      now + (__u64)xwfi_params.idle_sleep_usecs * 1000, cq_ready, cq);
	if (why == XWFI_WOKE_CLOSED) {
		pthread_mutex_unlock(&cq->dom->lock);
		return -FI_ECANCELED;
	}
	if (cq->ws.st.sleeps != sleeps)
		cq->ws.st.idle_sleeps++;
	if (why == XWFI_WOKE_EVENT)
		cq->signaled = false; /* fi_cq_signal: this read returns */
	if (cq_progress(cq))
		active();
	return cq_take(cq, buf, count, src);
}

static ssize_t cq_readfrom(struct fid_cq *fcq, void *buf, size_t count, fi_addr_t *src)
{
	struct xwfi_cq *cq = container_of(fcq, struct xwfi_cq, cq);
	struct xwfi_domain *dom = cq->dom;
	ssize_t r;

	pthread_mutex_lock(&dom->lock);
	xwfi_wset_fd_disarm(dom, &cq->ws, cq->eps, cq->neps);
	r = cq_take(cq, buf, count, src);
	if (r == -FI_EAGAIN) {
		int frames = cq_progress(cq);

		r = cq_take(cq, buf, count, src);
		if (r == -FI_EAGAIN) {
			r = cq_idle(cq, frames, buf, count, src);
			if (r == -FI_ECANCELED)
				return -FI_EAGAIN; /* closed under us: unlocked */
		}
	}
	if (r != -FI_EAGAIN) {
		cq->idle_since = 0;
		active();
	}
	pthread_mutex_unlock(&dom->lock);
	return r;
}

static ssize_t cq_read(struct fid_cq *fcq, void *buf, size_t count)
{
	return cq_readfrom(fcq, buf, count, NULL);
}

/*
 * libfabric >= 1.5: a caller that passes err_data with err_data_size > 0
 * owns that buffer (we have no error data: err_data_size = 0, the pointer
 * untouched); with err_data_size 0 err_data is the provider's (NULL here).
 */
static ssize_t cq_readerr(struct fid_cq *fcq, struct fi_cq_err_entry *buf, uint64_t flags)
{
	struct xwfi_cq *cq = container_of(fcq, struct xwfi_cq, cq);
	const struct xwfi_cqe *e;
	bool v15 = FI_VERSION_GE(cq->dom->fab->fab.api_version, FI_VERSION(1, 5));

	(void)flags;
	pthread_mutex_lock(&cq->dom->lock);
	if (!cq->en) {
		pthread_mutex_unlock(&cq->dom->lock);
		return -FI_EAGAIN;
	}
	e = &cq->errs[cq->ehead];
	buf->op_context = e->ctx;
	buf->flags = e->flags;
	buf->len = e->len;
	buf->buf = e->buf;
	buf->data = e->data;
	buf->tag = e->tag;
	buf->olen = e->olen;
	buf->err = e->err;
	buf->prov_errno = e->prov_errno;
	if (!v15) {
		buf->err_data = NULL;
	} else {
		if (!buf->err_data_size)
			buf->err_data = NULL;
		buf->err_data_size = 0;
	}
	cq->ehead = (cq->ehead + 1) % cq->ecap;
	cq->en--;
	cq->idle_since = 0;
	pthread_mutex_unlock(&cq->dom->lock);
	return 1;
}

static ssize_t cq_sreadfrom(struct fid_cq *fcq, void *buf, size_t count, fi_addr_t *src,
			    const void *cond, int timeout)
{
	struct xwfi_cq *cq = container_of(fcq, struct xwfi_cq, cq);
	struct xwfi_domain *dom = cq->dom;
	struct waitctx w = { .dom = dom, .ws = &cq->ws, .eps = cq->eps, .neps = &cq->neps,
			     .ready = cq_ready, .arg = cq };
	ssize_t r;
	int err;

	(void)cond;
	if (cq->wait == FI_WAIT_NONE)
		return -FI_EINVAL;
	if (!count || !buf)
		return -FI_EINVAL;
	pthread_mutex_lock(&dom->lock);
	err = wait_ready(&w, timeout);
	if (err == -FI_ECANCELED)
		return err; /* closed under us: unlocked */
	r = cq_take(cq, buf, count, src);
	if (r == -FI_EAGAIN && cq->signaled)
		cq->signaled = false;
	if (r != -FI_EAGAIN)
		cq->idle_since = 0;
	pthread_mutex_unlock(&dom->lock);
	return r;
}

static ssize_t cq_sread(struct fid_cq *fcq, void *buf, size_t count, const void *cond,
			int timeout)
{
	return cq_sreadfrom(fcq, buf, count, NULL, cond, timeout);
}

/* Wakes a thread blocked in fi_cq_sread (it returns -FI_EAGAIN) or asleep
 * on the CQ's fd, at once. */
static int cq_signal(struct fid_cq *fcq)
{
	struct xwfi_cq *cq = container_of(fcq, struct xwfi_cq, cq);

	pthread_mutex_lock(&cq->dom->lock);
	cq->signaled = true;
	xwfi_wset_kick(&cq->ws);
	pthread_mutex_unlock(&cq->dom->lock);
	return 0;
}

static const char *cq_strerror(struct fid_cq *fcq, int prov_errno, const void *err_data,
			       char *buf, size_t len)
{
	const char *s = xw_strerror(-prov_errno);

	(void)fcq;
	(void)err_data;
	if (buf && len) {
		strncpy(buf, s, len - 1);
		buf[len - 1] = 0;
		return buf;
	}
	return s;
}

/* A thread blocked in fi_cq_sread (or asleep in fi_cq_read) returns
 * (-FI_ECANCELED / -FI_EAGAIN) before the CQ goes. */
static int cq_close(struct fid *fid)
{
	struct xwfi_cq *cq = container_of(fid, struct xwfi_cq, cq.fid);
	int err;

	pthread_mutex_lock(&cq->dom->lock);
	err = cq->refs ? -FI_EBUSY : 0;
	pthread_mutex_unlock(&cq->dom->lock);
	if (err)
		return err;
	err = xwfi_wset_fini(cq->dom, &cq->ws);
	if (err)
		return err;
	pthread_mutex_lock(&cq->dom->lock);
	cq->dom->refs--;
	pthread_mutex_unlock(&cq->dom->lock);
	free(cq->ring);
	free(cq->errs);
	free(cq);
	return 0;
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
static int wset_control(struct xwfi_domain *dom, struct xwfi_wset *ws, enum fi_wait_obj wait,
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

static int cq_control(struct fid *fid, int command, void *arg)
{
	struct xwfi_cq *cq = container_of(fid, struct xwfi_cq, cq.fid);

	return wset_control(cq->dom, &cq->ws, cq->wait, command, arg);
}

static struct fi_ops cq_fi_ops = XWFI_FI_OPS(cq_close, xwfi_no_bind, cq_control);

static struct fi_ops_cq cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = cq_read,
	.readfrom = cq_readfrom,
	.readerr = cq_readerr,
	.sread = cq_sread,
	.sreadfrom = cq_sreadfrom,
	.signal = cq_signal,
	.strerror = cq_strerror,
};

int xwfi_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **cqp,
		 void *context)
{
	struct xwfi_domain *dom = container_of(domain, struct xwfi_domain, dom);
	struct xwfi_cq *cq;
	int err;

	if (!attr)
		return -FI_EINVAL;
	switch (attr->format) {
	case FI_CQ_FORMAT_UNSPEC:
	case FI_CQ_FORMAT_CONTEXT:
	case FI_CQ_FORMAT_MSG:
	case FI_CQ_FORMAT_DATA:
	case FI_CQ_FORMAT_TAGGED:
		break;
	default:
		return -FI_ENOSYS;
	}
	switch (attr->wait_obj) {
	case FI_WAIT_NONE:
	case FI_WAIT_UNSPEC:
	case FI_WAIT_FD:
		break;
	default:
		return -FI_ENOSYS;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -FI_ENOMEM;
	err = xwfi_wset_init(&cq->ws);
	if (err) {
		free(cq);
		return err;
	}
	cq->ws.eps_fds = !dom->auto_progress;
	cq->dom = dom;
	cq->fmt = attr->format == FI_CQ_FORMAT_UNSPEC ? FI_CQ_FORMAT_CONTEXT : attr->format;
	cq->wait = attr->wait_obj;
	cq->cq.fid.fclass = FI_CLASS_CQ;
	cq->cq.fid.context = context;
	cq->cq.fid.ops = &cq_fi_ops;
	cq->cq.ops = &cq_ops;
	pthread_mutex_lock(&dom->lock);
	dom->refs++;
	pthread_mutex_unlock(&dom->lock);
	*cqp = &cq->cq;
	return 0;
}

/* Caller holds the domain lock (endpoint bind and close). */
static int eps_attach(struct xwfi_domain *dom, struct xwfi_wset *ws, struct xwfi_ep **eps,
		      int *n, int *refs, struct xwfi_ep *ep)
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
	eps[(*n)++] = ep;
	(*refs)++;
	return 0;
}

static void eps_detach(struct xwfi_domain *dom, struct xwfi_wset *ws, struct xwfi_ep **eps,
		       int *n, int *refs, struct xwfi_ep *ep)
{
	for (int i = 0; i < *n; i++)
		if (eps[i] == ep) {
			/* an application asleep on the fd loses this endpoint's
			 * arm: it wakes, reads, and arms the others again */
			xwfi_wset_kick(ws);
			xwfi_wset_fd_disarm(dom, ws, eps, *n);
			xwfi_wset_del(dom, ws, ep);
			xwfi_progress_del(dom, ep);
			eps[i] = eps[--(*n)];
			(*refs)--;
			return;
		}
}

int xwfi_cq_attach(struct xwfi_cq *cq, struct xwfi_ep *ep)
{
	return eps_attach(cq->dom, &cq->ws, cq->eps, &cq->neps, &cq->refs, ep);
}

void xwfi_cq_detach(struct xwfi_cq *cq, struct xwfi_ep *ep)
{
	eps_detach(cq->dom, &cq->ws, cq->eps, &cq->neps, &cq->refs, ep);
}

/* ---- counters ------------------------------------------------------------ */

static void cntr_progress(struct xwfi_cntr *c)
{
	eps_progress(c->eps, c->neps);
}

static uint64_t cntr_read(struct fid_cntr *fc)
{
	struct xwfi_cntr *c = container_of(fc, struct xwfi_cntr, cntr);
	uint64_t v;

	pthread_mutex_lock(&c->dom->lock);
	xwfi_wset_fd_disarm(c->dom, &c->ws, c->eps, c->neps);
	cntr_progress(c);
	v = c->seen_val = c->val;
	pthread_mutex_unlock(&c->dom->lock);
	return v;
}

static uint64_t cntr_readerr(struct fid_cntr *fc)
{
	struct xwfi_cntr *c = container_of(fc, struct xwfi_cntr, cntr);
	uint64_t v;

	pthread_mutex_lock(&c->dom->lock);
	xwfi_wset_fd_disarm(c->dom, &c->ws, c->eps, c->neps);
	cntr_progress(c);
	v = c->seen_err = c->err;
	pthread_mutex_unlock(&c->dom->lock);
	return v;
}

static int cntr_update(struct fid_cntr *fc, uint64_t v, bool err, bool add)
{
	struct xwfi_cntr *c = container_of(fc, struct xwfi_cntr, cntr);
	uint64_t *p = err ? &c->err : &c->val;

	pthread_mutex_lock(&c->dom->lock);
	*p = add ? *p + v : v;
	xwfi_wset_kick(&c->ws);
	pthread_mutex_unlock(&c->dom->lock);
	return 0;
}

static int cntr_add(struct fid_cntr *c, uint64_t v)
{
	return cntr_update(c, v, false, true);
}

static int cntr_set(struct fid_cntr *c, uint64_t v)
{
	return cntr_update(c, v, false, false);
}

static int cntr_adderr(struct fid_cntr *c, uint64_t v)
{
	return cntr_update(c, v, true, true);
}

static int cntr_seterr(struct fid_cntr *c, uint64_t v)
{
	return cntr_update(c, v, true, false);
}

struct cntr_wait {
	struct xwfi_cntr *c;
	uint64_t threshold, err0;
};

static bool cntr_ready(void *arg)
{
	struct cntr_wait *cw = arg;

	return cw->c->val >= cw->threshold || cw->c->err != cw->err0;
}

static int cntr_wait(struct fid_cntr *fc, uint64_t threshold, int timeout)
{
	struct xwfi_cntr *c = container_of(fc, struct xwfi_cntr, cntr);
	struct xwfi_domain *dom = c->dom;
	struct cntr_wait cw = { .c = c, .threshold = threshold };
	struct waitctx w = { .dom = dom, .ws = &c->ws, .eps = c->eps, .neps = &c->neps,
			     .ready = cntr_ready, .arg = &cw };
	int err;

	pthread_mutex_lock(&dom->lock);
	cw.err0 = c->err;
	err = wait_ready(&w, timeout);
	if (err == -FI_ECANCELED)
		return err; /* closed under us: unlocked */
	if (!err && c->err != cw.err0)
		err = -FI_EAVAIL;
	else if (err == -FI_EAGAIN)
		err = -FI_ETIMEDOUT;
	pthread_mutex_unlock(&dom->lock);
	return err;
}

static int cntr_close(struct fid *fid)
{
	struct xwfi_cntr *c = container_of(fid, struct xwfi_cntr, cntr.fid);
	int err;

	pthread_mutex_lock(&c->dom->lock);
	err = c->refs ? -FI_EBUSY : 0;
	pthread_mutex_unlock(&c->dom->lock);
	if (err)
		return err;
	err = xwfi_wset_fini(c->dom, &c->ws);
	if (err)
		return err;
	pthread_mutex_lock(&c->dom->lock);
	c->dom->refs--;
	pthread_mutex_unlock(&c->dom->lock);
	free(c);
	return 0;
}

static int cntr_control(struct fid *fid, int command, void *arg)
{
	struct xwfi_cntr *c = container_of(fid, struct xwfi_cntr, cntr.fid);

	return wset_control(c->dom, &c->ws, c->wait, command, arg);
}

static struct fi_ops cntr_fi_ops = XWFI_FI_OPS(cntr_close, xwfi_no_bind, cntr_control);

static struct fi_ops_cntr cntr_ops = {
	.size = sizeof(struct fi_ops_cntr),
	.read = cntr_read,
	.readerr = cntr_readerr,
	.add = cntr_add,
	.set = cntr_set,
	.wait = cntr_wait,
	.adderr = cntr_adderr,
	.seterr = cntr_seterr,
};

int xwfi_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr, struct fid_cntr **cp,
		   void *context)
{
	struct xwfi_domain *dom = container_of(domain, struct xwfi_domain, dom);
	struct xwfi_cntr *c;
	int err;

	if (attr && attr->events != FI_CNTR_EVENTS_COMP)
		return -FI_ENOSYS;
	if (attr && attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC &&
	    attr->wait_obj != FI_WAIT_FD)
		return -FI_ENOSYS;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -FI_ENOMEM;
	err = xwfi_wset_init(&c->ws);
	if (err) {
		free(c);
		return err;
	}
	c->ws.eps_fds = !dom->auto_progress;
	c->dom = dom;
	c->wait = attr ? attr->wait_obj : FI_WAIT_UNSPEC;
	c->cntr.fid.fclass = FI_CLASS_CNTR;
	c->cntr.fid.context = context;
	c->cntr.fid.ops = &cntr_fi_ops;
	c->cntr.ops = &cntr_ops;
	pthread_mutex_lock(&dom->lock);
	dom->refs++;
	pthread_mutex_unlock(&dom->lock);
	*cp = &c->cntr;
	return 0;
}

/* Caller holds the domain lock. */
void xwfi_cntr_inc(struct xwfi_cntr *c, bool err)
{
	if (!c)
		return;
	if (err)
		c->err++;
	else
		c->val++;
	xwfi_wset_kick(&c->ws);
}

int xwfi_cntr_attach(struct xwfi_cntr *c, struct xwfi_ep *ep)
{
	return eps_attach(c->dom, &c->ws, c->eps, &c->neps, &c->refs, ep);
}

void xwfi_cntr_detach(struct xwfi_cntr *c, struct xwfi_ep *ep)
{
	eps_detach(c->dom, &c->ws, c->eps, &c->neps, &c->refs, ep);
}

/* An operation was posted (caller holds the domain lock): its completion
 * may be there without a frame (an eager send, a receive that matched a
 * message already in), so whoever sleeps on the endpoint's CQs and counters
 * makes a pass. */
void xwfi_wset_kick_ep(struct xwfi_cq *tcq, struct xwfi_cq *rcq, struct xwfi_cntr *tc,
		       struct xwfi_cntr *rc)
{
	if (tcq)
		xwfi_wset_kick(&tcq->ws);
	if (rcq && rcq != tcq)
		xwfi_wset_kick(&rcq->ws);
	if (tc)
		xwfi_wset_kick(&tc->ws);
	if (rc && rc != tc)
		xwfi_wset_kick(&rc->ws);
}

/* ---- fi_trywait ----------------------------------------------------------- */

/* 0: the caller may sleep on the object's fd (its endpoints armed, the
 * timer set to their next protocol timer); -FI_EAGAIN: completions (or
 * counter changes since the last read) wait, frames wait or a timer is
 * due: read instead. */
int xwfi_trywait_fid(struct fid *fid)
{
	struct xwfi_domain *dom;
	struct xwfi_wset *ws;
	struct xwfi_ep **eps;
	int n, err;
	bool ready;

	if (fid->fclass == FI_CLASS_CQ) {
		struct xwfi_cq *cq = container_of(fid, struct xwfi_cq, cq.fid);

		dom = cq->dom;
		pthread_mutex_lock(&dom->lock);
		if (cq->wait == FI_WAIT_NONE) {
			pthread_mutex_unlock(&dom->lock);
			return -FI_EINVAL;
		}
		ws = &cq->ws;
		xwfi_wset_fd_disarm(dom, ws, cq->eps, cq->neps);
		cq_progress(cq);
		ready = cq_ready(cq);
		eps = cq->eps;
		n = cq->neps;
	} else if (fid->fclass == FI_CLASS_CNTR) {
		struct xwfi_cntr *c = container_of(fid, struct xwfi_cntr, cntr.fid);

		dom = c->dom;
		pthread_mutex_lock(&dom->lock);
		if (c->wait == FI_WAIT_NONE) {
			pthread_mutex_unlock(&dom->lock);
			return -FI_EINVAL;
		}
		ws = &c->ws;
		xwfi_wset_fd_disarm(dom, ws, c->eps, c->neps);
		cntr_progress(c);
		/* a change the caller has not read yet */
		ready = c->val != c->seen_val || c->err != c->seen_err;
		eps = c->eps;
		n = c->neps;
	} else {
		return -FI_EINVAL;
	}
	err = ready ? -FI_EAGAIN : xwfi_wset_fd_arm(dom, ws, eps, n);
	if (err)
		ws->st.trywait_busy++;
	else
		ws->st.trywait_ok++;
	pthread_mutex_unlock(&dom->lock);
	return err;
}
