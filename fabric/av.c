// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * av.c - address vectors (FI_AV_MAP and FI_AV_TABLE: both hand out table
 * indices; an address is an xdpwake struct xw_addr, 24 bytes, with the
 * endpoint's incarnation nonce: what fi_getname() gives and the launcher
 * exchanges), and the address form fi_av_insertsvc() and fi_getinfo() take
 * (xwfi_node_addr: no nonce, it can open a connection but not reset one).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xwfi.h"

static int av_close(struct fid *fid)
{
	struct xwfi_av *av = container_of(fid, struct xwfi_av, av.fid);

	if (av->refs)
		return -FI_EBUSY;
	pthread_mutex_lock(&av->dom->lock);
	av->dom->refs--;
	pthread_mutex_unlock(&av->dom->lock);
	free(av->tab);
	free(av->used);
	free(av->hbucket);
	free(av->hnext);
	free(av);
	return 0;
}

/* The hash of what xw_addr_equal() compares: encapsulation, endpoint id,
 * and the IPv4 address and port (UDP) or the MAC address. */
static size_t av_hash(const struct xw_addr *a)
{
	__u64 h = 0xcbf29ce484222325ULL; /* FNV-1a */
	unsigned char k[12];
	size_t n = 0;

	k[n++] = a->encap;
	memcpy(k + n, &a->ep, sizeof(a->ep));
	n += sizeof(a->ep);
	if (a->encap == XW_ENCAP_UDP) {
		memcpy(k + n, &a->ip, sizeof(a->ip));
		n += sizeof(a->ip);
		memcpy(k + n, &a->port, sizeof(a->port));
		n += sizeof(a->port);
	} else {
		memcpy(k + n, a->mac, 6);
		n += 6;
	}
	for (size_t i = 0; i < n; i++)
		h = (h ^ k[i]) * 0x100000001b3ULL;
	return (size_t)(h ^ (h >> 32));
}

/* Put index @i (valid; the entries before it indexed already) into the
 * reverse map.  Caller holds the domain lock and has hnext sized for it;
 * the buckets grow here, to keep at most two entries per bucket on average
 * (0, or -FI_ENOMEM with the map unchanged and still whole). */
static int av_index(struct xwfi_av *av, size_t i)
{
	size_t b;

	if (i + 1 > 2 * av->nbucket) {
		size_t nb = av->nbucket ? 2 * av->nbucket : 64, *t;

		while (i + 1 > 2 * nb)
			nb *= 2;
		t = calloc(nb, sizeof(*t));
		if (!t)
			return -FI_ENOMEM;
		free(av->hbucket);
		av->hbucket = t;
		av->nbucket = nb;
		/* rehash the valid entries before @i */
		for (size_t j = 0; j < i; j++) {
			if (!av->used[j])
				continue;
			b = av_hash(&av->tab[j]) & (nb - 1);
			av->hnext[j] = av->hbucket[b];
			av->hbucket[b] = j + 1;
		}
	}
	b = av_hash(&av->tab[i]) & (av->nbucket - 1);
	av->hnext[i] = av->hbucket[b];
	av->hbucket[b] = i + 1;
	return 0;
}

static int av_insert(struct fid_av *fav, const void *addr, size_t count, fi_addr_t *fi_addr,
		     uint64_t flags, void *context)
{
	struct xwfi_av *av = container_of(fav, struct xwfi_av, av);
	const char *in = addr; /* count struct xw_addr, of any alignment */
	int *sync_err = (flags & FI_SYNC_ERR) ? context : NULL;
	int done = 0;

	/* FI_MORE is a hint; FI_SYNC_ERR: context is an int per address, its
	 * insertion's outcome (0 or a positive FI_E* code) */
	if (flags & ~(FI_MORE | FI_SYNC_ERR))
		return -FI_EBADFLAGS;
	if ((count && !addr) || (count && (flags & FI_SYNC_ERR) && !sync_err) ||
	    count > (size_t)INT_MAX)
		return -FI_EINVAL;
	pthread_mutex_lock(&av->dom->lock);
	if (av->n + count > av->cap) {
		size_t cap = av->cap ? av->cap : 64;
		struct xw_addr *t;
		size_t *h;
		bool *u;

		while (cap < av->n + count)
			cap *= 2;
		t = realloc(av->tab, cap * sizeof(*t));
		if (t)
			av->tab = t;
		u = t ? realloc(av->used, cap * sizeof(*u)) : NULL;
		if (u)
			av->used = u;
		h = u ? realloc(av->hnext, cap * sizeof(*h)) : NULL;
		if (!t || !u || !h) {
			pthread_mutex_unlock(&av->dom->lock);
			return -FI_ENOMEM;
		}
		av->hnext = h;
		av->cap = cap;
	}
	/* Address i of the call gets index n + i (FI_AV_TABLE: in order, so an
	 * application may compute it): an invalid one consumes its index too,
	 * left unused (fi_av_lookup says -FI_EINVAL), with FI_ADDR_NOTAVAIL
	 * in fi_addr[i]. */
	for (size_t i = 0; i < count; i++) {
		char text[XW_ADDR_STRLEN];
		struct xw_addr a;
		bool ok, nomem;

		memcpy(&a, in + i * sizeof(a), sizeof(a));
		/* Only what xw_addr_format() accepts is a valid address. */
		ok = xw_addr_format(&a, text, sizeof(text)) >= 0;
		if (!ok)
			memset(&a, 0, sizeof(a));
		av->tab[av->n] = a;
		av->hnext[av->n] = 0;
		av->used[av->n] = false;
		/* out of memory for the reverse map: this one not inserted */
		nomem = ok && av_index(av, av->n);
		ok = ok && !nomem;
		av->used[av->n] = ok;
		if (fi_addr)
			fi_addr[i] = ok ? av->n : FI_ADDR_NOTAVAIL;
		if (sync_err)
			sync_err[i] = ok ? 0 : nomem ? FI_ENOMEM : FI_EINVAL;
		if (nomem)
			FI_WARN(&xwfi_prov, FI_LOG_AV, "address %zu of %zu: out of memory\n", i,
				count);
		else if (!ok)
			FI_INFO(&xwfi_prov, FI_LOG_AV, "address %zu of %zu: not an xdpwake "
				"address (index %zu left unused)\n", i, count, av->n);
		av->n++;
		done += ok;
	}
	pthread_mutex_unlock(&av->dom->lock);
	return done;
}

int xwfi_node_addr(const char *node, const char *service, struct xw_addr *a)
{
	char text[XW_ADDR_STRLEN + 8];

	if (!node || (size_t)snprintf(text, sizeof(text), "%s%s%s", node, service ? "/" : "",
				      service ? service : "") >= sizeof(text))
		return -FI_EINVAL;
	return xw_addr_parse(text, a) ? -FI_EINVAL : 0;
}

static int av_insertsvc(struct fid_av *fav, const char *node, const char *service,
			fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	struct xw_addr a;

	/* node = "02:00:00:00:00:0a", service = endpoint id ("3").  One that
	 * is not an address fails as av_insert's invalid ones do (its index
	 * consumed, FI_ADDR_NOTAVAIL, 0 inserted): encap 0 is invalid. */
	if (!node || !service)
		return -FI_EINVAL;
	if (xwfi_node_addr(node, service, &a))
		memset(&a, 0, sizeof(a));
	return av_insert(fav, &a, 1, fi_addr, flags, context);
}

static int av_insertsym(struct fid_av *fav, const char *node, size_t nodecnt, const char *service,
			size_t svccnt, fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	(void)fav, (void)node, (void)nodecnt, (void)service, (void)svccnt, (void)fi_addr;
	(void)flags, (void)context;
	return -FI_ENOSYS;
}

static int av_remove(struct fid_av *fav, fi_addr_t *fi_addr, size_t count, uint64_t flags)
{
	struct xwfi_av *av = container_of(fav, struct xwfi_av, av);
	int err = 0;

	if (flags)
		return -FI_EBADFLAGS;
	if (count && !fi_addr)
		return -FI_EINVAL;
	pthread_mutex_lock(&av->dom->lock);
	for (size_t i = 0; i < count; i++) {
		if (fi_addr[i] >= av->n || !av->used[fi_addr[i]])
			err = -FI_EINVAL;
		else
			av->used[fi_addr[i]] = false;
	}
	pthread_mutex_unlock(&av->dom->lock);
	return err;
}

static int av_lookup(struct fid_av *fav, fi_addr_t fa, void *addr, size_t *addrlen)
{
	struct xwfi_av *av = container_of(fav, struct xwfi_av, av);
	struct xw_addr a;
	int err;

	if (!addrlen || (*addrlen && !addr))
		return -FI_EINVAL;
	pthread_mutex_lock(&av->dom->lock);
	err = xwfi_av_lookup_addr(av, fa, &a);
	pthread_mutex_unlock(&av->dom->lock);
	if (err)
		return err;
	memcpy(addr, &a, *addrlen < sizeof(a) ? *addrlen : sizeof(a));
	err = *addrlen < sizeof(a) ? -FI_ETOOSMALL : 0;
	*addrlen = sizeof(a);
	return err;
}

static const char *av_straddr(struct fid_av *fav, const void *addr, char *buf, size_t *len)
{
	char text[XW_ADDR_STRLEN];
	int n;

	(void)fav;
	if (!len)
		return NULL;
	n = xw_addr_format(addr, text, sizeof(text));
	if (n < 0)
		n = snprintf(text, sizeof(text), "(invalid)");
	if (*len && buf)
		snprintf(buf, *len, "%s", text);
	*len = (size_t)n + 1;
	return buf;
}

static int av_set_open(struct fid_av *av, struct fi_av_set_attr *attr, struct fid_av_set **set,
		       void *context)
{
	(void)av, (void)attr, (void)set, (void)context;
	return -FI_ENOSYS;
}

static struct fi_ops av_fi_ops = XWFI_FI_OPS(av_close, xwfi_no_bind, xwfi_no_control);

static struct fi_ops_av av_ops = {
	.size = sizeof(struct fi_ops_av),
	.insert = av_insert,
	.insertsvc = av_insertsvc,
	.insertsym = av_insertsym,
	.remove = av_remove,
	.lookup = av_lookup,
	.straddr = av_straddr,
	.av_set = av_set_open,
};

/* Caller holds the domain lock. */
int xwfi_av_lookup_addr(struct xwfi_av *av, fi_addr_t fa, struct xw_addr *out)
{
	if (!av || fa >= av->n || !av->used[fa])
		return -FI_EINVAL;
	*out = av->tab[fa];
	return 0;
}

/* The lowest valid index holding @a (an address inserted twice: the
 * first one still in use), through the hash chain of its bucket. */
fi_addr_t xwfi_av_reverse(struct xwfi_av *av, const struct xw_addr *a)
{
	fi_addr_t best = FI_ADDR_NOTAVAIL;

	if (!av || !av->nbucket)
		return FI_ADDR_NOTAVAIL;
	for (size_t k = av->hbucket[av_hash(a) & (av->nbucket - 1)]; k; k = av->hnext[k - 1]) {
		size_t i = k - 1;

		if (av->used[i] && i < best && xw_addr_equal(&av->tab[i], a))
			best = i;
	}
	return best;
}

int xwfi_av_open(struct fid_domain *domain, struct fi_av_attr *attr, struct fid_av **avp,
		 void *context)
{
	struct xwfi_domain *dom = container_of(domain, struct xwfi_domain, dom);
	struct xwfi_av *av;

	if (!attr)
		return -FI_EINVAL;
	if (attr->type != FI_AV_UNSPEC && attr->type != FI_AV_MAP && attr->type != FI_AV_TABLE)
		return -FI_EINVAL;
	if (attr->flags & (FI_EVENT | FI_READ | FI_SYMMETRIC))
		return -FI_ENOSYS;
	if (attr->name)
		return -FI_ENOSYS; /* no shared AVs */
	av = calloc(1, sizeof(*av));
	if (!av)
		return -FI_ENOMEM;
	av->dom = dom;
	av->type = attr->type == FI_AV_UNSPEC ? FI_AV_TABLE : attr->type;
	av->av.fid.fclass = FI_CLASS_AV;
	av->av.fid.context = context;
	av->av.fid.ops = &av_fi_ops;
	av->av.ops = &av_ops;
	pthread_mutex_lock(&dom->lock);
	dom->refs++;
	pthread_mutex_unlock(&dom->lock);
	*avp = &av->av;
	return 0;
}
