// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The interface as this process's endpoints share it: one handle of the
 * program per (pin root, interface), reference counted, attached on the
 * endpoints' behalf if need be and detached by the last one out unless an
 * endpoint of another process is live or being opened; and the queue an
 * endpoint opens on, which a live endpoint of another process may hold
 * (the program's `endpoints` map says).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "internal.h"
#include "local.h"
#include "port.h"
#include "endpoint_int.h"

struct iface_ref {
	struct iface_ref *next;
	struct xw_iface *ifc;
	char key[PATH_MAX];
	int refs;
};

static struct iface_ref *iface_refs;
static pthread_mutex_t iface_lock = PTHREAD_MUTEX_INITIALIZER;

int xwi_ifref_get(const char *ifname, const struct xw_endpoint_opts *o, struct xw_iface **ifcp)
{
	const char *root = XWI_OPT(o, pin_root, NULL);
	struct iface_ref *r;
	char key[PATH_MAX];
	int err = 0;

	snprintf(key, sizeof(key), "%s|%s", root ? root : XW_DEFAULT_PIN_ROOT, ifname);
	pthread_mutex_lock(&iface_lock);
	for (r = iface_refs; r; r = r->next)
		if (!strcmp(r->key, key))
			break;
	if (r) {
		r->refs++;
		goto out;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		err = -ENOMEM;
		goto out;
	}
	XW_OPTS(xw_iface_opts, io, .pin_root = root, .mode = XWI_OPT(o, mode, XW_MODE_AUTO),
		.max_endpoints = XWI_OPT(o, max_endpoints, 0));
	err = xw_iface__open(ifname, &io, &r->ifc);
	if (err) {
		free(r);
		r = NULL;
		goto out;
	}
	/* Attached on the endpoints' behalf: goes away with the last one. */
	if (r->ifc->skel)
		xw_iface__set_knob(r->ifc, "auto_detach", 0, 1);
	snprintf(r->key, sizeof(r->key), "%s", key);
	r->refs = 1;
	r->next = iface_refs;
	iface_refs = r;
out:
	pthread_mutex_unlock(&iface_lock);
	*ifcp = r ? r->ifc : NULL;
	if (r) {
		/* Every endpoint open removes what killed processes' endpoints
		 * left on the interface (their inboxes): a directory scan. */
		int n = xwi_local_clean(xw_iface__ifindex(r->ifc), false, NULL, NULL);

		if (n > 0)
			xwi_info("%s: removed %d files of dead endpoints from " XWI_LOCAL_DIR,
				 ifname, n);
	}
	return err;
}

bool xwi_pid_alive(__u32 pid)
{
	return pid && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/* Whether a live endpoint of another process is registered on @queue in
 * @eps (the `endpoints` map, read once): a bind to it that fails is final;
 * otherwise the queue may only be on its way out of a closed socket
 * (xwi_port_get waits for that). */
static bool queue_held_elsewhere(const struct xw_ep_entry *eps, __u32 queue)
{
	for (__u32 id = 0; id < XW_MAX_ENDPOINTS; id++)
		if ((eps[id].flags & XW_EPF_ACTIVE) && eps[id].queue_id == queue &&
		    eps[id].owner_pid != (__u32)getpid() && xwi_pid_alive(eps[id].owner_pid))
			return true;
	return false;
}

/* Whether a live process of another pid has bound @queue: the port code
 * marks a queue in `udp_queues` (@qfd) as soon as its bind succeeded,
 * before its endpoint is registered - what tells openers starting together
 * (MPI ranks) which queues the others took, without trying each. */
static bool queue_bound_elsewhere(int qfd, __u32 queue)
{
	__u32 pid = 0;

	return qfd >= 0 && queue < XW_MAX_QUEUES && !bpf_map_lookup_elem(qfd, &queue, &pid) &&
	       pid && pid != (__u32)getpid() && xwi_pid_alive(pid);
}

static int queue_error(const char *ifname, __u32 n, bool busy)
{
	if (!busy) {
		xwi_err("%s: none of its %u RX queues takes an AF_XDP socket", ifname, n);
		return -EINVAL;
	}
	/* Each endpoint needs a queue of its own (README, "Several
	 * processes per host on a real NIC"). */
	xwi_err("%s: no free queue: each of its %u RX queues is bound by another endpoint, and "
		"each endpoint needs one of its own; give it as many queues as endpoints "
		"(ethtool -L %s combined N; a veth: ip link add ... numrxqueues N "
		"numtxqueues N)", ifname, n, ifname);
	return -ENOSPC;
}

/*
 * The endpoint's port: on @queue, or with XW_QUEUE_ANY on the first queue
 * of the interface that this process has already or that it can bind.  A
 * queue a live endpoint of another process holds is skipped at once; a
 * first pass takes only queues that bind right away, a second one waits
 * for queues on their way out of a closed socket (a process restarting).
 */
int xwi_ifref_port(struct xw_iface *ifc, const char *ifname, int ifindex, __u32 queue,
		   __u32 umem, struct xwi_port **portp)
{
	int qfd = xw_iface__map_fd(ifc, "udp_queues");
	struct xw_ep_entry *eps = calloc(XW_MAX_ENDPOINTS, sizeof(*eps));
	bool busy = false;
	__u32 n;
	int err;

	if (!eps)
		return -ENOMEM;
	err = xwi_iface_endpoints(ifc, eps);
	if (err)
		goto out;
	if (queue != XW_QUEUE_ANY) {
		err = xwi_port_get(ifname, ifindex, queue, umem,
				   queue_held_elsewhere(eps, queue) ? 0 : XWI_PORT_WAIT, qfd, portp);
		goto out;
	}
	n = xwi_rx_queues(ifname);
	for (int pass = 0; pass < 2; pass++) {
		for (__u32 q = 0; q < n; q++) {
			if (!xwi_port_have(ifindex, q) &&
			    (queue_held_elsewhere(eps, q) || queue_bound_elsewhere(qfd, q))) {
				busy = true;
				continue;
			}
			err = xwi_port_get(ifname, ifindex, q, umem,
					   XWI_PORT_QUIET | (pass ? XWI_PORT_WAIT : 0), qfd,
					   portp);
			if (err != -EBUSY && err != -EINVAL)
				goto out;
			busy |= err == -EBUSY;
		}
	}
	err = queue_error(ifname, n, busy);
out:
	free(eps);
	return err;
}

/* Live endpoints registered on the interface (any process). */
static int live_endpoints(struct xw_iface *ifc)
{
	struct xw_ep_entry *eps = calloc(XW_MAX_ENDPOINTS, sizeof(*eps));
	int n = 0;

	if (!eps || xwi_iface_endpoints(ifc, eps)) {
		free(eps);
		return 1; /* cannot tell: in use */
	}
	for (__u32 i = 0; i < XW_MAX_ENDPOINTS; i++)
		if ((eps[i].flags & XW_EPF_ACTIVE) && xwi_pid_alive(eps[i].owner_pid))
			n++;
	free(eps);
	return n;
}

static bool iface_in_use(struct xw_iface *ifc)
{
	if (live_endpoints(ifc))
		return true;
	for (__u16 id = 0; id < XW_MAX_ENDPOINTS; id++)
		if (xwi_local_claimed(xw_iface__ifindex(ifc), id))
			return true;
	return false;
}

void xwi_ifref_put(struct xw_iface *ifc)
{
	struct iface_ref **pp, *r;
	__u32 auto_detach = 0;

	pthread_mutex_lock(&iface_lock);
	for (pp = &iface_refs; *pp; pp = &(*pp)->next)
		if ((*pp)->ifc == ifc)
			break;
	r = *pp;
	if (r && --r->refs == 0) {
		*pp = r->next;
		xw_iface__get_knob(r->ifc, "auto_detach", 0, &auto_detach);
		/* The last one out detaches, unless an endpoint of another
		 * process is live or being opened (its id claimed): decided
		 * under the interface's lock, which an opener holds while it
		 * finds the program. */
		if (auto_detach)
			xwi_iface_detach_unused(r->ifc, iface_in_use);
		else
			xw_iface__close(r->ifc);
		free(r);
	}
	pthread_mutex_unlock(&iface_lock);
}
