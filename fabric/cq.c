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
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xwfi.h"

static __u64 mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + (__u64)ts.tv_nsec / 1000000;
}

/* ---- waiting, shared by CQs and counters ---------------------------------- */

struct waitctx {
	struct xwfi_domain *dom;
	struct xwfi_ep **eps;
	int n;
	bool (*ready)(void *arg); /* with the domain lock held */
	void *arg;
};

static bool wait_cond(void *arg)
{
	struct waitctx *w = arg;
	bool r;

	pthread_mutex_lock(&w->dom->lock);
	for (int i = 0; i < w->n; i++)
		xwfi_ep_progress(w->eps[i]);
	r = w->ready(w->arg);
	pthread_mutex_unlock(&w->dom->lock);
	return r;
}

/* Wait until ready() (checked with the lock held) or @timeout ms (< 0: no
 * limit): 0 or -FI_EAGAIN (timeout). */
static int wait_ready(struct waitctx *w, int timeout)
{
	struct xw_waitable items[XWFI_CQ_EPS];
	__u64 end = timeout >= 0 ? mono_ms() + (__u64)timeout : 0;
	int strategy = xwfi_params.wait ? xw_wait_strategy_parse(xwfi_params.wait) : 0;

	if (strategy < 0)
		strategy = XW_WAIT_DEFAULT;
	for (;;) {
		int n = 0, tmo, err;

		if (wait_cond(w))
			return 0;
		if (timeout >= 0 && mono_ms() >= end)
			return -FI_EAGAIN;
		pthread_mutex_lock(&w->dom->lock);
		for (int i = 0; i < w->n && n < XWFI_CQ_EPS; i++) {
			struct xw_endpoint *xep = xwfi_ep_xw(w->eps[i]);

			if (xep)
				items[n++] = (struct xw_waitable){ .ep = xep };
		}
		pthread_mutex_unlock(&w->dom->lock);
		if (!n)
			return -FI_EAGAIN; /* nothing can make progress */
		/* Bounded slices: the timeout is checked between them. */
		tmo = 100;
		if (timeout >= 0) {
			__u64 left = end > mono_ms() ? end - mono_ms() : 0;

			if (!left)
				return -FI_EAGAIN;
			if (left < (__u64)tmo)
				tmo = (int)left;
		}
		XW_OPTS(xw_wait_opts, o, .timeout_ms = tmo, .strategy = strategy,
			.spin_ns = (__u64)(xwfi_params.spin_usecs > 0 ? xwfi_params.spin_usecs : 0) *
				   1000,
			.cond = wait_cond, .cond_arg = w, .eps_no_unexpected = true);
		err = xw_wait_any(items, n, &o);
		if (err < 0 && err != -ETIMEDOUT)
			return xwfi_err(err);
	}
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

int xwfi_cq_push(struct xwfi_cq *cq, const struct xwfi_cqe *e)
{
	if (e->err) {
		if (cq->en == cq->ecap) {
			if (grow((void **)&cq->errs, &cq->ecap, cq->ehead, cq->en, sizeof(*e)))
				return -FI_ENOMEM;
			cq->ehead = 0;
		}
		cq->errs[(cq->ehead + cq->en++) % cq->ecap] = *e;
		return 0;
	}
	if (cq->n == cq->cap) {
		if (grow((void **)&cq->ring, &cq->cap, cq->head, cq->n, sizeof(*e)))
			return -FI_ENOMEM;
		cq->head = 0;
	}
	cq->ring[(cq->head + cq->n++) % cq->cap] = *e;
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

static void cq_progress(struct xwfi_cq *cq)
{
	for (int i = 0; i < cq->neps; i++)
		xwfi_ep_progress(cq->eps[i]);
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

static ssize_t cq_readfrom(struct fid_cq *fcq, void *buf, size_t count, fi_addr_t *src)
{
	struct xwfi_cq *cq = container_of(fcq, struct xwfi_cq, cq);
	ssize_t r;

	pthread_mutex_lock(&cq->dom->lock);
	r = cq_take(cq, buf, count, src);
	if (r == -FI_EAGAIN) {
		cq_progress(cq);
		r = cq_take(cq, buf, count, src);
	}
	pthread_mutex_unlock(&cq->dom->lock);
	return r;
}

static ssize_t cq_read(struct fid_cq *fcq, void *buf, size_t count)
{
	return cq_readfrom(fcq, buf, count, NULL);
}

static ssize_t cq_readerr(struct fid_cq *fcq, struct fi_cq_err_entry *buf, uint64_t flags)
{
	struct xwfi_cq *cq = container_of(fcq, struct xwfi_cq, cq);
	const struct xwfi_cqe *e;

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
	buf->err_data = NULL;
	if (FI_VERSION_GE(cq->dom->fab->fab.api_version, FI_VERSION(1, 5)))
		buf->err_data_size = 0;
	cq->ehead = (cq->ehead + 1) % cq->ecap;
	cq->en--;
	pthread_mutex_unlock(&cq->dom->lock);
	return 1;
}

static bool cq_ready(void *arg)
{
	struct xwfi_cq *cq = arg;

	return cq->n || cq->en || cq->signaled;
}

static ssize_t cq_sreadfrom(struct fid_cq *fcq, void *buf, size_t count, fi_addr_t *src,
			    const void *cond, int timeout)
{
	struct xwfi_cq *cq = container_of(fcq, struct xwfi_cq, cq);
	struct waitctx w = { .dom = cq->dom, .ready = cq_ready, .arg = cq };
	ssize_t r;
	int err;

	(void)cond;
	if (cq->wait == FI_WAIT_NONE)
		return -FI_EINVAL;
	r = cq_readfrom(fcq, buf, count, src);
	if (r != -FI_EAGAIN)
		return r;
	w.eps = cq->eps;
	w.n = cq->neps;
	err = wait_ready(&w, timeout);
	pthread_mutex_lock(&cq->dom->lock);
	cq->signaled = false;
	pthread_mutex_unlock(&cq->dom->lock);
	if (err)
		return err;
	return cq_readfrom(fcq, buf, count, src);
}

static ssize_t cq_sread(struct fid_cq *fcq, void *buf, size_t count, const void *cond,
			int timeout)
{
	return cq_sreadfrom(fcq, buf, count, NULL, cond, timeout);
}

static int cq_signal(struct fid_cq *fcq)
{
	struct xwfi_cq *cq = container_of(fcq, struct xwfi_cq, cq);

	pthread_mutex_lock(&cq->dom->lock);
	cq->signaled = true;
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

static int cq_close(struct fid *fid)
{
	struct xwfi_cq *cq = container_of(fid, struct xwfi_cq, cq.fid);

	if (cq->refs)
		return -FI_EBUSY;
	pthread_mutex_lock(&cq->dom->lock);
	cq->dom->refs--;
	pthread_mutex_unlock(&cq->dom->lock);
	free(cq->ring);
	free(cq->errs);
	free(cq);
	return 0;
}

static int cq_control(struct fid *fid, int command, void *arg)
{
	struct xwfi_cq *cq = container_of(fid, struct xwfi_cq, cq.fid);
	int fd;

	if (command != FI_GETWAIT && command != FI_GETWAITOBJ)
		return -FI_ENOSYS;
	if (cq->wait != FI_WAIT_FD && cq->wait != FI_WAIT_UNSPEC)
		return -FI_ENODATA;
	if (command == FI_GETWAITOBJ) {
		*(enum fi_wait_obj *)arg = FI_WAIT_FD;
		return 0;
	}
	pthread_mutex_lock(&cq->dom->lock);
	fd = cq->neps ? xw_endpoint__fd(xwfi_ep_xw(cq->eps[0])) : -FI_ENODATA;
	pthread_mutex_unlock(&cq->dom->lock);
	if (fd < 0)
		return fd == -FI_ENODATA ? fd : xwfi_err(fd);
	*(int *)arg = fd;
	return 0;
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

int xwfi_cq_attach(struct xwfi_cq *cq, struct xwfi_ep *ep)
{
	for (int i = 0; i < cq->neps; i++)
		if (cq->eps[i] == ep)
			return 0;
	if (cq->neps == XWFI_CQ_EPS)
		return -FI_ENOSPC;
	cq->eps[cq->neps++] = ep;
	cq->refs++;
	return 0;
}

void xwfi_cq_detach(struct xwfi_cq *cq, struct xwfi_ep *ep)
{
	for (int i = 0; i < cq->neps; i++)
		if (cq->eps[i] == ep) {
			cq->eps[i] = cq->eps[--cq->neps];
			cq->refs--;
			return;
		}
}

/* ---- counters ------------------------------------------------------------ */

static void cntr_progress(struct xwfi_cntr *c)
{
	for (int i = 0; i < c->neps; i++)
		xwfi_ep_progress(c->eps[i]);
}

static uint64_t cntr_read(struct fid_cntr *fc)
{
	struct xwfi_cntr *c = container_of(fc, struct xwfi_cntr, cntr);
	uint64_t v;

	pthread_mutex_lock(&c->dom->lock);
	cntr_progress(c);
	v = c->val;
	pthread_mutex_unlock(&c->dom->lock);
	return v;
}

static uint64_t cntr_readerr(struct fid_cntr *fc)
{
	struct xwfi_cntr *c = container_of(fc, struct xwfi_cntr, cntr);
	uint64_t v;

	pthread_mutex_lock(&c->dom->lock);
	cntr_progress(c);
	v = c->err;
	pthread_mutex_unlock(&c->dom->lock);
	return v;
}

static int cntr_update(struct fid_cntr *fc, uint64_t v, bool err, bool add)
{
	struct xwfi_cntr *c = container_of(fc, struct xwfi_cntr, cntr);
	uint64_t *p = err ? &c->err : &c->val;

	pthread_mutex_lock(&c->dom->lock);
	*p = add ? *p + v : v;
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
	struct cntr_wait cw = { .c = c, .threshold = threshold };
	struct waitctx w = { .dom = c->dom, .ready = cntr_ready, .arg = &cw };
	int err;

	pthread_mutex_lock(&c->dom->lock);
	cw.err0 = c->err;
	pthread_mutex_unlock(&c->dom->lock);
	w.eps = c->eps;
	w.n = c->neps;
	err = wait_ready(&w, timeout);
	if (err)
		return err == -FI_EAGAIN ? -FI_ETIMEDOUT : err;
	return c->err != cw.err0 ? -FI_EAVAIL : 0;
}

static int cntr_close(struct fid *fid)
{
	struct xwfi_cntr *c = container_of(fid, struct xwfi_cntr, cntr.fid);

	if (c->refs)
		return -FI_EBUSY;
	pthread_mutex_lock(&c->dom->lock);
	c->dom->refs--;
	pthread_mutex_unlock(&c->dom->lock);
	free(c);
	return 0;
}

static struct fi_ops cntr_fi_ops = XWFI_FI_OPS(cntr_close, xwfi_no_bind, xwfi_no_control);

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

	if (attr && attr->events != FI_CNTR_EVENTS_COMP)
		return -FI_ENOSYS;
	if (attr && attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC &&
	    attr->wait_obj != FI_WAIT_FD)
		return -FI_ENOSYS;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -FI_ENOMEM;
	c->dom = dom;
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

void xwfi_cntr_inc(struct xwfi_cntr *c, bool err)
{
	if (!c)
		return;
	if (err)
		c->err++;
	else
		c->val++;
}

int xwfi_cntr_attach(struct xwfi_cntr *c, struct xwfi_ep *ep)
{
	for (int i = 0; i < c->neps; i++)
		if (c->eps[i] == ep)
			return 0;
	if (c->neps == XWFI_CQ_EPS)
		return -FI_ENOSPC;
	c->eps[c->neps++] = ep;
	c->refs++;
	return 0;
}

void xwfi_cntr_detach(struct xwfi_cntr *c, struct xwfi_ep *ep)
{
	for (int i = 0; i < c->neps; i++)
		if (c->eps[i] == ep) {
			c->eps[i] = c->eps[--c->neps];
			c->refs--;
			return;
		}
}

/* ---- fi_trywait ----------------------------------------------------------- */

int xwfi_trywait_fid(struct fid *fid)
{
	struct xwfi_domain *dom;
	struct xwfi_ep **eps;
	int n, err = 0;
	bool ready;

	if (fid->fclass == FI_CLASS_CQ) {
		struct xwfi_cq *cq = container_of(fid, struct xwfi_cq, cq.fid);

		dom = cq->dom;
		pthread_mutex_lock(&dom->lock);
		cq_progress(cq);
		ready = cq_ready(cq);
		eps = cq->eps;
		n = cq->neps;
	} else if (fid->fclass == FI_CLASS_CNTR) {
		struct xwfi_cntr *c = container_of(fid, struct xwfi_cntr, cntr.fid);

		dom = c->dom;
		pthread_mutex_lock(&dom->lock);
		cntr_progress(c);
		ready = false;
		eps = c->eps;
		n = c->neps;
	} else {
		return -FI_EINVAL;
	}
	if (ready)
		err = -FI_EAGAIN;
	for (int i = 0; !err && i < n; i++)
		if (xw_endpoint__arm(xwfi_ep_xw(eps[i])))
			err = -FI_EAGAIN; /* frames wait: progress instead */
	pthread_mutex_unlock(&dom->lock);
	return err;
}
