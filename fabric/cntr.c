// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * cntr.c - counters, and their completion-report interface
 * (xwfi_cntr_inc, attach, detach).  Reading a counter runs one progress
 * pass of every endpoint bound to it, unless every one is idle (the value
 * then read without the lock); fi_cntr_wait waits as fi_cq_sread does
 * (wait.c).
 */
#include <stdlib.h>

#include "xwfi.h"

static void cntr_progress(struct xwfi_cntr *c)
{
	xwfi_eps_progress(c->eps, c->neps);
}

/* A read (of the value, or with @err of the errors) after a progress pass;
 * what it returns is what fi_trywait compares with. */
static uint64_t cntr_get(struct fid_cntr *fc, bool err)
{
	struct xwfi_cntr *c = container_of(fc, struct xwfi_cntr, cntr);
	uint64_t v;

	/* nothing to do (issue 28, as cq.c's cq_empty_fast): the value
	 * without the lock; what races it is seen by the next read */
	if (!__atomic_load_n(&c->ws.fd_armed, __ATOMIC_RELAXED) &&
	    xwfi_eps_idle(&c->ws, c->eps, &c->neps)) {
		v = __atomic_load_n(err ? &c->err : &c->val, __ATOMIC_RELAXED);
		__atomic_store_n(err ? &c->seen_err : &c->seen_val, v, __ATOMIC_RELAXED);
		return v;
	}
	pthread_mutex_lock(&c->dom->lock);
	xwfi_wset_fd_disarm(c->dom, &c->ws, c->eps, c->neps);
	cntr_progress(c);
	if (err)
		v = c->seen_err = c->err;
	else
		v = c->seen_val = c->val;
	pthread_mutex_unlock(&c->dom->lock);
	return v;
}

static uint64_t cntr_read(struct fid_cntr *fc)
{
	return cntr_get(fc, false);
}

static uint64_t cntr_readerr(struct fid_cntr *fc)
{
	return cntr_get(fc, true);
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
	int err;

	pthread_mutex_lock(&dom->lock);
	cw.err0 = c->err;
	err = xwfi_wait_ready(dom, &c->ws, c->eps, &c->neps, cntr_ready, &cw, timeout);
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
	int err = xwfi_wset_close(c->dom, &c->ws, &c->refs);

	if (err)
		return err;
	free(c);
	return 0;
}

static int cntr_control(struct fid *fid, int command, void *arg)
{
	struct xwfi_cntr *c = container_of(fid, struct xwfi_cntr, cntr.fid);

	return xwfi_wset_control(c->dom, &c->ws, c->wait, command, arg);
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
	err = xwfi_wset_open(dom, &c->ws);
	if (err) {
		free(c);
		return err;
	}
	c->dom = dom;
	c->wait = attr ? attr->wait_obj : FI_WAIT_UNSPEC;
	c->cntr.fid.fclass = FI_CLASS_CNTR;
	c->cntr.fid.context = context;
	c->cntr.fid.ops = &cntr_fi_ops;
	c->cntr.ops = &cntr_ops;
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

int xwfi_cntr_attach(struct xwfi_cntr *c, struct xwfi_epref *ep)
{
	return xwfi_wset_attach(c->dom, &c->ws, c->eps, &c->neps, &c->refs, ep);
}

void xwfi_cntr_detach(struct xwfi_cntr *c, struct xwfi_epref *ep)
{
	xwfi_wset_detach(c->dom, &c->ws, c->eps, &c->neps, &c->refs, ep);
}

/* fi_trywait: as a CQ's (cq.c), ready when the counter changed since the
 * caller's last read. */
int xwfi_cntr_trywait(struct xwfi_cntr *c)
{
	struct xwfi_domain *dom = c->dom;

	pthread_mutex_lock(&dom->lock);
	if (c->wait == FI_WAIT_NONE) {
		pthread_mutex_unlock(&dom->lock);
		return -FI_EINVAL;
	}
	xwfi_wset_fd_disarm(dom, &c->ws, c->eps, c->neps);
	cntr_progress(c);
	return xwfi_wset_trywait(dom, &c->ws, c->eps, c->neps,
				 c->val != c->seen_val || c->err != c->seen_err);
}
