// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The in-memory link (link.h): per-node frame queues and node addresses.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "link.h"

void xwt_lq_init(struct xwt_lq *q, struct xwt_lframe *slots, size_t size)
{
	q->f = slots;
	q->size = size;
	q->head = q->n = 0;
}

struct xwt_lframe *xwt_lq_at(struct xwt_lq *q, size_t i)
{
	return &q->f[(q->head + i) % q->size];
}

int xwt_lq_push(struct xwt_lq *q, const struct xw_hdr *h, const void *pl, size_t len, int src)
{
	struct xwt_lframe *f;

	if (q->n >= q->size)
		return -ENOSPC;
	f = xwt_lq_at(q, q->n);
	f->h = *h;
	f->len = len;
	f->src = src;
	f->hurt = false;
	f->pl = malloc(len ? len : 1);
	if (!f->pl)
		return -ENOMEM;
	if (len)
		memcpy(f->pl, pl, len);
	q->n++;
	return 0;
}

struct xwt_lframe xwt_lq_take(struct xwt_lq *q, size_t i)
{
	struct xwt_lframe f = *xwt_lq_at(q, i);

	if (i == 0) {
		q->head = (q->head + 1) % q->size;
	} else {
		for (size_t k = i; k + 1 < q->n; k++)
			*xwt_lq_at(q, k) = *xwt_lq_at(q, k + 1);
	}
	q->n--;
	return f;
}

int xwt_lq_insert(struct xwt_lq *q, size_t i, const struct xwt_lframe *f)
{
	if (q->n >= q->size)
		return -ENOSPC;
	for (size_t k = q->n; k > i; k--)
		*xwt_lq_at(q, k) = *xwt_lq_at(q, k - 1);
	*xwt_lq_at(q, i) = *f;
	q->n++;
	return 0;
}

void xwt_lq_drop(struct xwt_lq *q)
{
	while (q->n) {
		struct xwt_lframe f = xwt_lq_take(q, 0);

		free(f.pl);
	}
	q->head = 0;
}

int xwt_lframe_dup(struct xwt_lframe *out, const struct xwt_lframe *f)
{
	*out = *f;
	out->pl = malloc(f->len ? f->len : 1);
	if (!out->pl)
		return -ENOMEM;
	memcpy(out->pl, f->pl, f->len);
	return 0;
}

__u8 xwt_link_pat(__u32 seed, size_t i)
{
	__u64 x = (__u64)i * 0x9E3779B97F4A7C15ULL + (seed + 1ULL) * 0xD1B54A32D192ED03ULL;

	x ^= x >> 29;
	x *= 0xBF58476D1CE4E5B9ULL;
	x ^= x >> 32;
	return (__u8)x;
}

void xwt_link_addr(struct xw_addr *a, int i, __u16 ep)
{
	memset(a, 0, sizeof(*a));
	a->encap = XW_ENCAP_ETH;
	a->mac[0] = 0x02;
	a->mac[5] = (__u8)(0x10 + i);
	a->ep = ep;
}
