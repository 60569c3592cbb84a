/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * ep.h - the RDM endpoint's layout, shared by the endpoint's files only:
 * ep.c (the object), msg.c and tagged.c (the operations), nosys.c (the
 * operation sets not offered) and op.c (the posted operations, progress,
 * completions).  CQs, counters and the waiting layer see an endpoint only
 * as its struct xwfi_epref (xwfi.h).
 */
#ifndef XWFI_EP_H
#define XWFI_EP_H

#include <sys/uio.h>

#include <rdma/fi_atomic.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_rma.h>

#include "xwfi.h"

enum xwfi_op_kind { XWFI_OP_SEND, XWFI_OP_RECV };

/* A posted operation, on its endpoint's list in post order. */
struct xwfi_op {
	struct xwfi_op *next, *prev;
	struct xw_request *req;
	enum xwfi_op_kind kind;
	void *ctx;
	uint64_t cqflags;	/* FI_SEND/FI_RECV | FI_MSG/FI_TAGGED */
	bool comp;		/* write a completion on success */
	bool silent;		/* no completion, not even an error: an inject, or
				 * the discard behind a peek's completion */
	bool acked;		/* FI_TRANSMIT_COMPLETE: complete once the peers
				 * acknowledged what was sent (req NULL and st set
				 * meanwhile) */
	struct xw_status st;
	bool discard;		/* FI_CLAIM | FI_DISCARD: no data, no truncation */
	void *buf;
	size_t len;
	/* receives */
	uint64_t rmatch, mask;
	bool has_src;
	struct xw_addr src;
};

/* A message set aside by FI_PEEK | FI_CLAIM (the library's claim), taken
 * by FI_CLAIM with the same context. */
struct xwfi_claim {
	struct xwfi_claim *next;
	void *ctx;
	__u64 id;
};

struct xwfi_ep {
	struct fid_ep ep;
	struct xwfi_epref ref;	/* ref.xep: the library endpoint */
	struct xwfi_domain *dom;
	struct xw_addr self;
	struct xwfi_av *av;
	struct xwfi_cq *tcq, *rcq;
	bool tsel, rsel;	/* FI_SELECTIVE_COMPLETION */
	struct xwfi_cntr *tcntr, *rcntr;
	uint64_t caps, tx_flags, rx_flags;
	bool enabled;
	struct xwfi_op ops;	/* list head */
	/* The walk of ops (xwfi_ep_progress) is due whatever the library
	 * says: an op linked, one held for its acknowledgement, or a call
	 * into the library outside a pass (xwfi_ep_touched) since the last
	 * walk; walked: the library's pass count read before it.  Both read
	 * without the domain lock (xwfi_ep_ref_idle). */
	bool walk_due;
	__u64 walked;
	struct xwfi_op *spare;	/* finished ops kept for the next posts (next) */
	unsigned int nspare;
	struct xwfi_claim *claims;
};

static inline struct xwfi_ep *xwfi_ep_of(struct fid_ep *fep)
{
	return container_of(fep, struct xwfi_ep, ep);
}

/* The one buffer of an iovec array (iov_limit 1): -FI_EINVAL for more. */
static inline int xwfi_iov_one(const struct iovec *iov, size_t count, void **buf, size_t *len)
{
	if (count > 1 || (count && !iov))
		return -FI_EINVAL;
	*buf = count ? iov[0].iov_base : NULL;
	*len = count ? iov[0].iov_len : 0;
	return 0;
}

/* op.c (caller holds the domain lock) */
struct xwfi_op *xwfi_op_new(struct xwfi_ep *ep, enum xwfi_op_kind kind, void *ctx,
			    uint64_t cqflags, bool comp);
void xwfi_op_free(struct xwfi_ep *ep, struct xwfi_op *op);
void xwfi_op_link(struct xwfi_ep *ep, struct xwfi_op *op);
/* The domain lock held, @ep's library endpoint was called outside a pass
 * (a post, a cancel): the call may have completed requests other than its
 * own (a send's transmit round sends the last frames of an earlier one),
 * so the next read walks the ops (walk_due). */
void xwfi_ep_touched(struct xwfi_ep *ep);
void xwfi_op_unlink(struct xwfi_op *op);
/* Report @op finished with @st (st->error: 0 or a negative errno) to the
 * endpoint's CQ and counter. */
void xwfi_op_complete(struct xwfi_ep *ep, struct xwfi_op *op, const struct xw_status *st);
bool xwfi_op_complete_now(struct xwfi_ep *ep, struct xwfi_op *op);
/* One progress pass over @ep: library progress, completions collected;
 * returns the frames handled (>= 0).  Also ep->ref.progress. */
int xwfi_ep_progress(struct xwfi_ep *ep);
int xwfi_ep_ref_progress(struct xwfi_epref *ref);
/* Whether a pass over @ep would find nothing to do and nothing to collect
 * (ep->ref.idle); no lock taken: a racing post or frame is seen by the
 * next call. */
bool xwfi_ep_ref_idle(struct xwfi_epref *ref);
/* An operation was posted on @ep: wake threads asleep on its CQs and
 * counters (its completion may need no frame). */
void xwfi_ep_kick(struct xwfi_ep *ep);
/* Peers that something sent to is not acknowledged by yet. */
__u64 xwfi_ep_peers_unacked(struct xwfi_ep *ep);
/* The AV index of @a (FI_ADDR_NOTAVAIL: none). */
fi_addr_t xwfi_ep_src_of(struct xwfi_ep *ep, const struct xw_addr *a);
/* A directed receive's source: *has_src false for FI_ADDR_UNSPEC or
 * without FI_DIRECTED_RECV; -FI_EINVAL if @src is not in the AV. */
int xwfi_ep_src_lookup(struct xwfi_ep *ep, fi_addr_t src, bool *has_src, struct xw_addr *a);
/* The library's match value of a send, and match and mask of a receive:
 * untagged (FI_MSG) messages carry XWFI_MSG_BIT. */
uint64_t xwfi_send_match(const struct xwfi_ep *ep, bool tagged, uint64_t tag);
void xwfi_recv_match(const struct xwfi_ep *ep, bool tagged, uint64_t tag, uint64_t ignore,
		     uint64_t *match, uint64_t *mask);

/* msg.c: the posting FI_MSG and FI_TAGGED share (they lock the domain) */
ssize_t xwfi_ep_send(struct xwfi_ep *ep, const void *buf, size_t len, fi_addr_t dest,
		     uint64_t tag, bool tagged, void *ctx, uint64_t flags, bool inject,
		     bool has_data, uint64_t cqdata);
ssize_t xwfi_ep_recv(struct xwfi_ep *ep, void *buf, size_t len, fi_addr_t src, uint64_t tag,
		     uint64_t ignore, bool tagged, void *ctx, uint64_t flags);
/* FI_PEEK (with FI_CLAIM or FI_DISCARD). */
ssize_t xwfi_ep_peek(struct xwfi_ep *ep, fi_addr_t src, uint64_t tag, uint64_t ignore,
		     bool tagged, void *ctx, uint64_t flags);
/* FI_CLAIM without FI_PEEK. */
ssize_t xwfi_ep_claimed(struct xwfi_ep *ep, void *buf, size_t len, bool tagged, void *ctx,
			uint64_t flags);
/* The iovec (and, with @msg, fi_msg) forms of FI_MSG and FI_TAGGED: one
 * buffer (iov_limit 1); without @msg the endpoint's operation flags, with
 * @msg @flags (FI_PEEK and FI_CLAIM for tagged receives, FI_REMOTE_CQ_DATA
 * with @data for sends). */
ssize_t xwfi_ep_recvv(struct fid_ep *fep, const struct iovec *iov, size_t count, fi_addr_t src,
		      uint64_t tag, uint64_t ignore, bool tagged, void *ctx, uint64_t flags,
		      bool msg);
ssize_t xwfi_ep_sendv(struct fid_ep *fep, const struct iovec *iov, size_t count, fi_addr_t dest,
		      uint64_t tag, bool tagged, void *ctx, uint64_t flags, uint64_t data,
		      bool msg);
extern struct fi_ops_msg xwfi_msg_ops;

/* tagged.c */
extern struct fi_ops_tagged xwfi_tagged_ops;

/* nosys.c */
extern struct fi_ops_rma xwfi_rma_ops;
extern struct fi_ops_atomic xwfi_atomic_ops;
extern struct fi_ops_collective xwfi_collective_ops;

#endif
