// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * tagged.c - the FI_TAGGED operations of the RDM endpoint, on msg.c's
 * posting: a tag travels as the library's match value (xwfi_send_match);
 * fi_trecvmsg with FI_PEEK or FI_CLAIM peeks or takes a claimed message.
 */
#include "ep.h"

static ssize_t t_recv(struct fid_ep *fep, void *buf, size_t len, void *desc, fi_addr_t src,
		      uint64_t tag, uint64_t ignore, void *ctx)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	(void)desc;
	return xwfi_ep_recvv(fep, &iov, 1, src, tag, ignore, true, ctx, 0, false);
}

static ssize_t t_recvv(struct fid_ep *fep, const struct iovec *iov, void **desc, size_t count,
		       fi_addr_t src, uint64_t tag, uint64_t ignore, void *ctx)
{
	(void)desc;
	return xwfi_ep_recvv(fep, iov, count, src, tag, ignore, true, ctx, 0, false);
}

static ssize_t t_recvmsg(struct fid_ep *fep, const struct fi_msg_tagged *msg, uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return xwfi_ep_recvv(fep, msg->msg_iov, msg->iov_count, msg->addr, msg->tag, msg->ignore,
			     true, msg->context, flags, true);
}

static ssize_t t_send(struct fid_ep *fep, const void *buf, size_t len, void *desc,
		      fi_addr_t dest, uint64_t tag, void *ctx)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	(void)desc;
	return xwfi_ep_sendv(fep, &iov, 1, dest, tag, true, ctx, 0, 0, false);
}

static ssize_t t_sendv(struct fid_ep *fep, const struct iovec *iov, void **desc, size_t count,
		       fi_addr_t dest, uint64_t tag, void *ctx)
{
	(void)desc;
	return xwfi_ep_sendv(fep, iov, count, dest, tag, true, ctx, 0, 0, false);
}

static ssize_t t_sendmsg(struct fid_ep *fep, const struct fi_msg_tagged *msg, uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return xwfi_ep_sendv(fep, msg->msg_iov, msg->iov_count, msg->addr, msg->tag, true,
			     msg->context, flags, msg->data, true);
}

static ssize_t t_inject(struct fid_ep *fep, const void *buf, size_t len, fi_addr_t dest,
			uint64_t tag)
{
	return xwfi_ep_send(xwfi_ep_of(fep), buf, len, dest, tag, true, NULL, 0, true, false, 0);
}

static ssize_t t_senddata(struct fid_ep *fep, const void *buf, size_t len, void *desc,
			  uint64_t data, fi_addr_t dest, uint64_t tag, void *ctx)
{
	(void)desc;
	return xwfi_ep_send(xwfi_ep_of(fep), buf, len, dest, tag, true, ctx,
			    xwfi_ep_of(fep)->tx_flags, false, true, data);
}

static ssize_t t_injectdata(struct fid_ep *fep, const void *buf, size_t len, uint64_t data,
			    fi_addr_t dest, uint64_t tag)
{
	return xwfi_ep_send(xwfi_ep_of(fep), buf, len, dest, tag, true, NULL, 0, true, true, data);
}

struct fi_ops_tagged xwfi_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = t_recv,
	.recvv = t_recvv,
	.recvmsg = t_recvmsg,
	.send = t_send,
	.sendv = t_sendv,
	.sendmsg = t_sendmsg,
	.inject = t_inject,
	.senddata = t_senddata,
	.injectdata = t_injectdata,
};
