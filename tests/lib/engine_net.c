// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The network of the engine tests (engine_net.h).
 */
#include "engine_net.h"

struct xwt_node xwt_nodes[XWT_MAXN];
int xwt_nnodes;
struct xwt_logent *xwt_flog;
size_t xwt_nlog;
static size_t logcap;

void xwt_node_start(int i, const struct xwi_engine_cfg *cfg, const struct xwi_engine_ops *ops,
		    size_t cap)
{
	struct xwt_node *nd = &xwt_nodes[i];

	nd->id = i;
	nd->cfg = *cfg;
	xwt_link_addr(&nd->addr, i, cfg->ep);
	xwt_lq_init(&nd->q, nd->slots, XWT_RING);
	nd->cap = cap;
	nd->e = xwi_engine_new(&nd->cfg, ops, nd);
	REQUIRE(nd->e, "xwi_engine_new: %s", strerror(errno));
}

int xwt_node_of(const struct xw_addr *a)
{
	for (int i = 0; i < xwt_nnodes; i++)
		if (xw_addr_equal(&xwt_nodes[i].addr, a))
			return i;
	return -1;
}

struct xwt_logent *xwt_log_add(int s, int d, const struct xw_hdr *h)
{
	if (xwt_nlog == logcap) {
		logcap = logcap ? logcap * 2 : 4096;
		xwt_flog = realloc(xwt_flog, logcap * sizeof(*xwt_flog));
		REQUIRE(xwt_flog, "realloc");
	}
	xwt_flog[xwt_nlog] = (struct xwt_logent){ .src = s, .dst = d, .h = *h };
	return &xwt_flog[xwt_nlog++];
}

void xwt_log_free(void)
{
	free(xwt_flog);
	xwt_flog = NULL;
	xwt_nlog = logcap = 0;
}

struct xwt_lframe xwt_qpop(int d)
{
	return xwt_lq_take(&xwt_nodes[d].q, 0);
}

void xwt_drop_queue(int d)
{
	xwt_lq_drop(&xwt_nodes[d].q);
}

struct xwi_engine_stats xwt_node_stats(int i)
{
	struct xwi_engine_stats st;

	xwi_engine_stats(xwt_nodes[i].e, &st);
	return st;
}

void xwt_bounds_check(int i)
{
	struct xwi_engine_stats st;

	xwi_engine_stats(xwt_nodes[i].e, &st);
	CHECK(st.unexpected_bytes <= xwt_nodes[i].cfg.unexpected_max,
	      "node %d unexpected_bytes %llu > %llu", i, (unsigned long long)st.unexpected_bytes,
	      (unsigned long long)xwt_nodes[i].cfg.unexpected_max);
	CHECK(st.pushed_bytes <= xwt_nodes[i].cfg.pushed_max, "node %d pushed_bytes %llu > %llu", i,
	      (unsigned long long)st.pushed_bytes,
	      (unsigned long long)xwt_nodes[i].cfg.pushed_max);
}

void xwt_epat_fill(unsigned char *b, size_t len, __u32 seed)
{
	for (size_t i = 0; i < len; i++)
		b[i] = xwt_link_pat(seed, i);
}

long xwt_epat_verify(const unsigned char *b, size_t len, __u32 seed)
{
	for (size_t i = 0; i < len; i++)
		if (b[i] != xwt_link_pat(seed, i))
			return (long)i;
	return -1;
}

bool xwt_guard_ok(const unsigned char *b)
{
	for (int i = 0; i < XWT_GUARD; i++)
		if (b[i] != 0xA5)
			return false;
	return true;
}
