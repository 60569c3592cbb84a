// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * nosys.c - the RDM endpoint's operation sets that are not offered: RMA,
 * atomics, collectives (the capabilities fi_getinfo grants do not include
 * them).
 */
#include "ep.h"

/* fi_write(), fi_atomic(), fi_barrier() ... are inline calls through these
 * tables: a NULL table would crash a stray call; every entry says
 * -FI_ENOSYS. */
#define NOSYS(...)                                                                         \
	{                                                                                  \
		return -FI_ENOSYS;                                                         \
	}
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"

static ssize_t rma_read(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src,
			uint64_t addr, uint64_t key, void *ctx) NOSYS()
static ssize_t rma_readv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count,
			 fi_addr_t src, uint64_t addr, uint64_t key, void *ctx) NOSYS()
static ssize_t rma_readmsg(struct fid_ep *ep, const struct fi_msg_rma *msg,
			   uint64_t flags) NOSYS()
static ssize_t rma_write(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			 fi_addr_t dest, uint64_t addr, uint64_t key, void *ctx) NOSYS()
static ssize_t rma_writev(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count,
			  fi_addr_t dest, uint64_t addr, uint64_t key, void *ctx) NOSYS()
static ssize_t rma_writemsg(struct fid_ep *ep, const struct fi_msg_rma *msg,
			    uint64_t flags) NOSYS()
static ssize_t rma_inject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest,
			  uint64_t addr, uint64_t key) NOSYS()
static ssize_t rma_writedata(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			     uint64_t data, fi_addr_t dest, uint64_t addr, uint64_t key,
			     void *ctx) NOSYS()
static ssize_t rma_injectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data,
			      fi_addr_t dest, uint64_t addr, uint64_t key) NOSYS()

struct fi_ops_rma xwfi_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = rma_read,
	.readv = rma_readv,
	.readmsg = rma_readmsg,
	.write = rma_write,
	.writev = rma_writev,
	.writemsg = rma_writemsg,
	.inject = rma_inject,
	.writedata = rma_writedata,
	.injectdata = rma_injectdata,
};

static ssize_t at_write(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			fi_addr_t dest, uint64_t addr, uint64_t key, enum fi_datatype dt,
			enum fi_op op, void *ctx) NOSYS()
static ssize_t at_writev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count,
			 fi_addr_t dest, uint64_t addr, uint64_t key, enum fi_datatype dt,
			 enum fi_op op, void *ctx) NOSYS()
static ssize_t at_writemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
			   uint64_t flags) NOSYS()
static ssize_t at_inject(struct fid_ep *ep, const void *buf, size_t count, fi_addr_t dest,
			 uint64_t addr, uint64_t key, enum fi_datatype dt, enum fi_op op) NOSYS()
static ssize_t at_readwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			    void *result, void *result_desc, fi_addr_t dest, uint64_t addr,
			    uint64_t key, enum fi_datatype dt, enum fi_op op, void *ctx) NOSYS()
static ssize_t at_readwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc,
			     size_t count, struct fi_ioc *resultv, void **result_desc,
			     size_t result_count, fi_addr_t dest, uint64_t addr, uint64_t key,
			     enum fi_datatype dt, enum fi_op op, void *ctx) NOSYS()
static ssize_t at_readwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
			       struct fi_ioc *resultv, void **result_desc, size_t result_count,
			       uint64_t flags) NOSYS()
static ssize_t at_compwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			    const void *compare, void *compare_desc, void *result,
			    void *result_desc, fi_addr_t dest, uint64_t addr, uint64_t key,
			    enum fi_datatype dt, enum fi_op op, void *ctx) NOSYS()
static ssize_t at_compwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc,
			     size_t count, const struct fi_ioc *comparev, void **compare_desc,
			     size_t compare_count, struct fi_ioc *resultv, void **result_desc,
			     size_t result_count, fi_addr_t dest, uint64_t addr, uint64_t key,
			     enum fi_datatype dt, enum fi_op op, void *ctx) NOSYS()
static ssize_t at_compwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
			       const struct fi_ioc *comparev, void **compare_desc,
			       size_t compare_count, struct fi_ioc *resultv, void **result_desc,
			       size_t result_count, uint64_t flags) NOSYS()
static int at_valid(struct fid_ep *ep, enum fi_datatype dt, enum fi_op op,
		    size_t *count) NOSYS()

struct fi_ops_atomic xwfi_atomic_ops = {
	.size = sizeof(struct fi_ops_atomic),
	.write = at_write,
	.writev = at_writev,
	.writemsg = at_writemsg,
	.inject = at_inject,
	.readwrite = at_readwrite,
	.readwritev = at_readwritev,
	.readwritemsg = at_readwritemsg,
	.compwrite = at_compwrite,
	.compwritev = at_compwritev,
	.compwritemsg = at_compwritemsg,
	.writevalid = at_valid,
	.readwritevalid = at_valid,
	.compwritevalid = at_valid,
};

static ssize_t co_barrier(struct fid_ep *ep, fi_addr_t coll, void *ctx) NOSYS()
static ssize_t co_broadcast(struct fid_ep *ep, void *buf, size_t count, void *desc,
			    fi_addr_t coll, fi_addr_t root, enum fi_datatype dt, uint64_t flags,
			    void *ctx) NOSYS()
static ssize_t co_alltoall(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			   void *result, void *result_desc, fi_addr_t coll, enum fi_datatype dt,
			   uint64_t flags, void *ctx) NOSYS()
static ssize_t co_allreduce(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			    void *result, void *result_desc, fi_addr_t coll, enum fi_datatype dt,
			    enum fi_op op, uint64_t flags, void *ctx) NOSYS()
static ssize_t co_allgather(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			    void *result, void *result_desc, fi_addr_t coll, enum fi_datatype dt,
			    uint64_t flags, void *ctx) NOSYS()
static ssize_t co_reduce(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			 void *result, void *result_desc, fi_addr_t coll, fi_addr_t root,
			 enum fi_datatype dt, enum fi_op op, uint64_t flags, void *ctx) NOSYS()
static ssize_t co_scatter(struct fid_ep *ep, const void *buf, size_t count, void *desc,
			  void *result, void *result_desc, fi_addr_t coll, fi_addr_t root,
			  enum fi_datatype dt, uint64_t flags, void *ctx) NOSYS()
static ssize_t co_msg(struct fid_ep *ep, const struct fi_msg_collective *msg,
		      struct fi_ioc *resultv, void **result_desc, size_t result_count,
		      uint64_t flags) NOSYS()
static ssize_t co_barrier2(struct fid_ep *ep, fi_addr_t coll, uint64_t flags, void *ctx) NOSYS()
#pragma GCC diagnostic pop
#undef NOSYS

struct fi_ops_collective xwfi_collective_ops = {
	.size = sizeof(struct fi_ops_collective),
	.barrier = co_barrier,
	.broadcast = co_broadcast,
	.alltoall = co_alltoall,
	.allreduce = co_allreduce,
	.allgather = co_allgather,
	.reduce_scatter = co_allreduce,
	.reduce = co_reduce,
	.scatter = co_scatter,
	.gather = co_scatter,
	.msg = co_msg,
	.barrier2 = co_barrier2,
};
