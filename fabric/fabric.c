// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * fabric.c - the fabric object: domains (domain.c), fi_trywait over CQs
 * and counters (cq.c, cntr.c), and a minimal event queue (an RDM endpoint
 * reports nothing there, but fi_pingpong opens one).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xwfi.h"

/* ---- event queue (nothing to report for RDM) ----------------------------- */

static int eq_close(struct fid *fid)
{
	free(container_of(fid, struct fid_eq, fid));
	return 0;
}

static ssize_t eq_read(struct fid_eq *eq, uint32_t *event, void *buf, size_t len, uint64_t flags)
{
	(void)eq, (void)event, (void)buf, (void)len, (void)flags;
	return -FI_EAGAIN;
}

static ssize_t eq_readerr(struct fid_eq *eq, struct fi_eq_err_entry *buf, uint64_t flags)
{
	(void)eq, (void)buf, (void)flags;
	return -FI_EAGAIN;
}

static ssize_t eq_write(struct fid_eq *eq, uint32_t event, const void *buf, size_t len,
			uint64_t flags)
{
	(void)eq, (void)event, (void)buf, (void)len, (void)flags;
	return -FI_ENOSYS;
}

static ssize_t eq_sread(struct fid_eq *eq, uint32_t *event, void *buf, size_t len, int timeout,
			uint64_t flags)
{
	(void)eq, (void)event, (void)buf, (void)len, (void)flags;
	if (timeout > 0)
		usleep((useconds_t)timeout * 1000);
	return -FI_EAGAIN;
}

static const char *eq_strerror(struct fid_eq *eq, int prov_errno, const void *err_data, char *buf,
			       size_t len)
{
	(void)eq, (void)err_data;
	if (buf && len)
		snprintf(buf, len, "%s", xw_strerror(-prov_errno));
	return xw_strerror(-prov_errno);
}

static struct fi_ops eq_fi_ops = XWFI_FI_OPS(eq_close, xwfi_no_bind, xwfi_no_control);

static struct fi_ops_eq eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = eq_read,
	.readerr = eq_readerr,
	.write = eq_write,
	.sread = eq_sread,
	.strerror = eq_strerror,
};

static int eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr, struct fid_eq **eqp,
		   void *context)
{
	struct fid_eq *eq;

	(void)fabric;
	(void)attr;
	eq = calloc(1, sizeof(*eq));
	if (!eq)
		return -FI_ENOMEM;
	eq->fid.fclass = FI_CLASS_EQ;
	eq->fid.context = context;
	eq->fid.ops = &eq_fi_ops;
	eq->ops = &eq_ops;
	*eqp = eq;
	return 0;
}

/* ---- fabric ------------------------------------------------------------ */

static int fabric_close(struct fid *fid)
{
	free(container_of(fid, struct xwfi_fabric, fab.fid));
	return 0;
}

static int fabric_trywait(struct fid_fabric *fabric, struct fid **fids, int count)
{
	(void)fabric;
	for (int i = 0; i < count; i++) {
		int err;

		if (fids[i]->fclass == FI_CLASS_CQ)
			err = xwfi_cq_trywait(container_of(fids[i], struct xwfi_cq, cq.fid));
		else if (fids[i]->fclass == FI_CLASS_CNTR)
			err = xwfi_cntr_trywait(container_of(fids[i], struct xwfi_cntr, cntr.fid));
		else
			err = -FI_EINVAL;
		if (err)
			return err;
	}
	return 0;
}

static struct fi_ops fabric_fi_ops = XWFI_FI_OPS(fabric_close, xwfi_no_bind, xwfi_no_control);

static int no_passive_ep(struct fid_fabric *fabric, struct fi_info *info, struct fid_pep **pep,
			 void *context)
{
	(void)fabric, (void)info, (void)pep, (void)context;
	return -FI_ENOSYS;
}

static int no_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
			struct fid_wait **waitset)
{
	(void)fabric, (void)attr, (void)waitset;
	return -FI_ENOSYS;
}

static struct fi_ops_fabric fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = xwfi_domain_open,
	.passive_ep = no_passive_ep,
	.eq_open = eq_open,
	.wait_open = no_wait_open,
	.trywait = fabric_trywait,
};

int xwfi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
	struct xwfi_fabric *f;

	if (attr && attr->name && strcmp(attr->name, XWFI_NAME))
		return -FI_EINVAL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -FI_ENOMEM;
	f->fab.fid.fclass = FI_CLASS_FABRIC;
	f->fab.fid.context = context;
	f->fab.fid.ops = &fabric_fi_ops;
	f->fab.ops = &fabric_ops;
	*fabric = &f->fab;
	return 0;
}
