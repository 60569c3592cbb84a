// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * domain.c - the domain (one interface; its lock serialises every object
 * opened on it) and memory registration (not required, mr_mode 0:
 * fi_mr_reg() succeeds for callers that register anyway).  It opens the
 * AVs, CQs, counters and endpoints (av.c, cq.c, cntr.c, ep.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xwfi.h"

/* ---- memory registration (not needed: mr_mode 0) ---------------------------- */

static int mr_close(struct fid *fid)
{
	free(container_of(fid, struct fid_mr, fid));
	return 0;
}

static struct fi_ops mr_fi_ops = XWFI_FI_OPS(mr_close, xwfi_no_bind, xwfi_no_control);

static int mr_regattr(struct fid *fid, const struct fi_mr_attr *attr, uint64_t flags,
		      struct fid_mr **mrp)
{
	struct fid_mr *mr;

	(void)fid;
	(void)flags;
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -FI_ENOMEM;
	mr->fid.fclass = FI_CLASS_MR;
	mr->fid.context = attr ? attr->context : NULL;
	mr->fid.ops = &mr_fi_ops;
	mr->mem_desc = NULL;
	mr->key = attr ? attr->requested_key : 0;
	*mrp = mr;
	return 0;
}

static int mr_regv(struct fid *fid, const struct iovec *iov, size_t count, uint64_t access,
		   uint64_t offset, uint64_t requested_key, uint64_t flags, struct fid_mr **mr,
		   void *context)
{
	struct fi_mr_attr attr = {
		.mr_iov = iov,
		.iov_count = count,
		.access = access,
		.offset = offset,
		.requested_key = requested_key,
		.context = context,
	};

	return mr_regattr(fid, &attr, flags, mr);
}

static int mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access, uint64_t offset,
		  uint64_t requested_key, uint64_t flags, struct fid_mr **mr, void *context)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return mr_regv(fid, &iov, 1, access, offset, requested_key, flags, mr, context);
}

static struct fi_ops_mr mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = mr_reg,
	.regv = mr_regv,
	.regattr = mr_regattr,
};

/* ---- domain ------------------------------------------------------------- */

static int domain_close(struct fid *fid)
{
	struct xwfi_domain *dom = container_of(fid, struct xwfi_domain, dom.fid);

	if (dom->refs)
		return -FI_EBUSY;
	xwfi_progress_stop(dom);
	pthread_mutex_destroy(&dom->lock);
	free(dom);
	return 0;
}

static int no_scalable_ep(struct fid_domain *domain, struct fi_info *info, struct fid_ep **sep,
			  void *context)
{
	(void)domain, (void)info, (void)sep, (void)context;
	return -FI_ENOSYS;
}

static int no_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
			struct fid_poll **pollset)
{
	(void)domain, (void)attr, (void)pollset;
	return -FI_ENOSYS;
}

static int no_stx_ctx(struct fid_domain *domain, struct fi_tx_attr *attr, struct fid_stx **stx,
		      void *context)
{
	(void)domain, (void)attr, (void)stx, (void)context;
	return -FI_ENOSYS;
}

static int no_srx_ctx(struct fid_domain *domain, struct fi_rx_attr *attr, struct fid_ep **rx_ep,
		      void *context)
{
	(void)domain, (void)attr, (void)rx_ep, (void)context;
	return -FI_ENOSYS;
}

static int no_query_atomic(struct fid_domain *domain, enum fi_datatype datatype, enum fi_op op,
			   struct fi_atomic_attr *attr, uint64_t flags)
{
	(void)domain, (void)datatype, (void)op, (void)attr, (void)flags;
	return -FI_ENOSYS;
}

static int no_query_collective(struct fid_domain *domain, enum fi_collective_op coll,
			       struct fi_collective_attr *attr, uint64_t flags)
{
	(void)domain, (void)coll, (void)attr, (void)flags;
	return -FI_ENOSYS;
}

static struct fi_ops domain_fi_ops = XWFI_FI_OPS(domain_close, xwfi_no_bind, xwfi_no_control);

static struct fi_ops_domain domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = xwfi_av_open,
	.cq_open = xwfi_cq_open,
	.endpoint = xwfi_ep_open,
	.scalable_ep = no_scalable_ep,
	.cntr_open = xwfi_cntr_open,
	.poll_open = no_poll_open,
	.stx_ctx = no_stx_ctx,
	.srx_ctx = no_srx_ctx,
	.query_atomic = no_query_atomic,
	.query_collective = no_query_collective,
};

int xwfi_domain_open(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **domp,
		     void *context)
{
	struct xwfi_domain *dom;

	if (!info || !info->domain_attr || !info->domain_attr->name ||
	    strlen(info->domain_attr->name) >= IF_NAMESIZE)
		return -FI_EINVAL;
	dom = calloc(1, sizeof(*dom));
	if (!dom)
		return -FI_ENOMEM;
	dom->fab = container_of(fabric, struct xwfi_fabric, fab);
	strcpy(dom->ifname, info->domain_attr->name);
	dom->auto_progress = info->domain_attr->data_progress == FI_PROGRESS_AUTO ||
			     info->domain_attr->control_progress == FI_PROGRESS_AUTO;
	{
		pthread_mutexattr_t ma;

		/* recursive: a completion callback may call back in */
		pthread_mutexattr_init(&ma);
		pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
		pthread_mutex_init(&dom->lock, &ma);
		pthread_mutexattr_destroy(&ma);
	}
	dom->dom.fid.fclass = FI_CLASS_DOMAIN;
	dom->dom.fid.context = context;
	dom->dom.fid.ops = &domain_fi_ops;
	dom->dom.ops = &domain_ops;
	dom->dom.mr = &mr_ops;
	*domp = &dom->dom;
	return 0;
}

