// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The AF_XDP side of endpoints: one socket per (process, interface, queue).
 *
 * UMEM frames are split in two pools.  Receive frames live in the fill and
 * RX rings and go back to the fill ring as soon as a frame is handled; the
 * fill ring has room for all of them twice over, because the kernel
 * publishes its fill-ring consumer position lazily.  Transmit frames come
 * from a free list and return to it from the completion ring.  Ownership
 * invariant: fill/RX frames + free transmit frames + frames in flight on the
 * TX/completion rings == nframes (xwi_port_check_frames()).
 *
 * A UMEM frame is a page (the kernel takes no larger one without huge
 * pages), and a received frame starts XDP_PACKET_HEADROOM into it, so one
 * UMEM frame holds a frame of at most XWI_RX_ROOM bytes.  Larger ones (MTUs
 * above 3,826) are multi-buffer frames: the socket is bound with
 * XDP_USE_SG (Linux 6.6+); a frame is sent from consecutive descriptors
 * flagged XDP_PKT_CONTD but the last, and one received so is delivered as
 * it lies, in pieces (the sink reads the payload from the UMEM frames:
 * scatter receive, no gather), its UMEM frames posted to the fill ring
 * again once it was delivered.  An MTU the socket cannot
 * carry (no XDP_USE_SG and MTU + Ethernet header > XWI_RX_ROOM, or more
 * than XWI_SG_FRAMES UMEM frames) fails at the port's creation.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <linux/if_ether.h>
#include <linux/if_xdp.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <dirent.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "frame.h"
#include "crc32c.h"
#include "internal.h"
#include "local.h"
#include "port.h"
#include "warm.skel.h"

#define XWI_FRAME_SIZE 4096
#define XWI_RX_ROOM (XWI_FRAME_SIZE - XDP_PACKET_HEADROOM)
#ifndef XDP_USE_SG
#define XDP_USE_SG (1 << 4)
#endif
#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD (1 << 0)
#endif
#ifndef XDP_PACKET_HEADROOM
#define XDP_PACKET_HEADROOM 256
#endif

static struct xwi_port *ports;
static pthread_mutex_t ports_lock = PTHREAD_MUTEX_INITIALIZER;

static int if_info(struct xwi_port *p)
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", p->ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr)) {
		err = -errno;
		goto out;
	}
	memcpy(p->mac, ifr.ifr_hwaddr.sa_data, 6);
	if (ioctl(fd, SIOCGIFMTU, &ifr)) {
		err = -errno;
		goto out;
	}
	p->mtu = ifr.ifr_mtu;
	if (ioctl(fd, SIOCGIFADDR, &ifr) == 0)
		p->ip = ((struct sockaddr_in *)&ifr.ifr_addr)->sin_addr.s_addr;
out:
	close(fd);
	return err;
}

/* Explain the usual bind failures. */
static int bind_error(const struct xwi_port *p, int err)
{
	switch (-err) {
	case EBUSY:
		xwi_err("%s queue %u: already bound by another AF_XDP socket (another "
			"process?); use another queue", p->ifname, p->queue);
		break;
	case EINVAL:
		xwi_err("%s: queue %u does not exist (or the interface refuses AF_XDP)",
			p->ifname, p->queue);
		break;
	case EAFNOSUPPORT:
		xwi_err("AF_XDP sockets are not supported by this kernel");
		break;
	case EPERM:
		xwi_err("AF_XDP needs CAP_NET_RAW and CAP_BPF (run as root)");
		break;
	default:
		xwi_err("%s queue %u: cannot create the AF_XDP socket: %s", p->ifname, p->queue,
			strerror(-err));
	}
	return err;
}

static void port_free(struct xwi_port *p)
{
	__u32 none = 0, key = p->queue;

	/* The queue's port stops being ours before the socket goes: while
	 * we hold the socket no other process can have bound the queue, so
	 * the entry we clear is ours. */
	if (p->queues_fd >= 0) {
		bpf_map_update_elem(p->queues_fd, &key, &none, BPF_ANY);
		close(p->queues_fd);
	}
	if (p->xsk)
		xsk_socket__delete(p->xsk);
	if (p->umem)
		xsk_umem__delete(p->umem);
	if (p->area)
		munmap(p->area, p->area_len);
	if (p->arp_fd >= 0)
		close(p->arp_fd);
	free(p->free_tx);
	/* The claim after the socket: the next claimer binds a queue that
	 * is (on its way to being) free. */
	xwi_queue_unclaim(p->claim_fd, p->ifindex, p->queue);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/*
 * The kernel frees a closed AF_XDP socket's queue from a work item that
 * takes the RTNL lock, so for a while after a close (10-100 ms idle; over
 * 500 ms seen with the machine loaded and namespaces being torn down) a
 * bind to that queue fails with EBUSY although no socket holds it.  A
 * bind that fails so, on a queue that no live endpoint holds (the caller
 * knows the registry), is tried again until the release is through, for
 * at most XWI_REBIND_NS: past that something else holds the queue (a
 * socket of another program).
 */
#define XWI_REBIND_NS 5000000000ULL

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/*
 * The first turn of the receive ring, taken at creation.  The kernel takes
 * fill-ring frames in ring order, and on some machines the first use of
 * each frame is slow: on a PVM guest (shadow page tables) ~10-25 us for
 * the kernel's first copy into it and as much again for our first read of
 * it, while populating or writing the area beforehand does not help.  So
 * a new socket's first nrx_frames frames - a job's first thousands of
 * round trips - were five times slower than the rest.  Posting fewer
 * frames is no way out: a burst then finds the fill ring dry while the
 * receiver sleeps, and frames are lost.  Instead warm.bpf.c, run in
 * live-frames mode (BPF_F_TEST_XDP_LIVE_FRAMES) on our interface and
 * queue, redirects one test frame per receive frame to this socket through
 * the kernel's receive path (the copy into the UMEM frame); we read each
 * and post it again, in the same order.  Only here, before any endpoint
 * registered the socket in the program's XSKMAP: the kernel's receive path
 * and the test run must not fill the RX ring at the same time.
 *
 * It costs what the first turn would have cost (~20-100 ms on that guest,
 * ~1 ms where first uses are not slow).  A probe of one frame comes first;
 * a kernel without live frames, or one that does not deliver them to this
 * queue (Linux gives test frames receive queue 0), or XDPWAKE_RX_WARM=0,
 * leaves the ring cold, which is only slower: never an error.  Counted
 * (rx_warmed, the endpoints' umem_rx_warmed) and logged.
 */
static __u32 warm_drain(struct xwi_port *p)
{
	__u32 idx, fidx, n = xsk_ring_cons__peek(&p->rx, p->nrx_frames, &idx);

	if (!n)
		return 0;
	if (xsk_ring_prod__reserve(&p->fq, n, &fidx) != n) {
		/* Cannot happen (the fill ring holds twice the frames); the
		 * frames stay in the RX ring for the first pass. */
		xsk_ring_cons__cancel(&p->rx, n);
		return 0;
	}
	for (__u32 i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&p->rx, idx + i);
		__u64 addr = xsk_umem__extract_addr(d->addr);
		const volatile __u8 *data =
			xsk_umem__get_data(p->area, xsk_umem__add_offset_to_addr(d->addr));

		(void)data[0]; /* our first read of the frame */
		*xsk_ring_prod__fill_addr(&p->fq, fidx + i) = addr - addr % p->frame_size;
	}
	xsk_ring_prod__submit(&p->fq, n);
	xsk_ring_cons__release(&p->rx, n);
	return n;
}

static void port_warm(struct xwi_port *p)
{
	__u8 frame[ETH_ZLEN] = { 0 };
	struct xdp_md ctx = {
		.data_end = sizeof(frame),
		.ingress_ifindex = (__u32)p->ifindex,
		.rx_queue_index = p->queue,
	};
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = sizeof(frame),
		    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = 1,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES);
	const char *env = getenv("XDPWAKE_RX_WARM");
	struct warm_bpf *skel = NULL;
	const char *why = NULL;
	__u64 t0 = mono_ns();
	__u32 key = 0;
	int fd = p->fd, prog;

	if (env && !strcmp(env, "0")) {
		why = "XDPWAKE_RX_WARM=0";
		goto out;
	}
	memset(frame, 0xff, ETH_ALEN); /* broadcast, EtherType 0: no protocol's */
	skel = warm_bpf__open_and_load();
	if (!skel) {
		why = strerror(errno);
		goto out;
	}
	prog = bpf_program__fd(skel->progs.xw_warm);
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.warm_xsk), &key, &fd, BPF_ANY) ||
	    bpf_prog_test_run_opts(prog, &o)) {
		why = strerror(errno);
		goto out;
	}
	p->rx_warmed = warm_drain(p);
	if (p->rx_warmed != 1) {
		why = "the kernel delivers no test frame to this queue";
		goto out;
	}
	o.repeat = p->nrx_frames - 1;
	if (o.repeat && bpf_prog_test_run_opts(prog, &o))
		why = strerror(errno);
	p->rx_warmed += warm_drain(p);
out:
	warm_bpf__destroy(skel);
	if (p->rx_warmed == p->nrx_frames)
		xwi_dbg("%s queue %u: %u receive frames warmed in %llu us", p->ifname, p->queue,
			p->rx_warmed, (unsigned long long)(mono_ns() - t0) / 1000);
	else
		xwi_info("%s queue %u: %u of %u receive frames warmed (%s): the first turn of "
			 "the receive ring may be slower", p->ifname, p->queue, p->rx_warmed,
			 p->nrx_frames, why ? why : "not all test frames arrived");
}

static int port_create(const char *ifname, int ifindex, __u32 queue, __u32 nframes,
		       int queues_fd, struct xwi_port **portp, bool quiet_busy, bool quiet_inval)
{
	struct xsk_umem_config ucfg = {};
	struct xsk_socket_config scfg = {};
	struct xwi_port *p;
	struct xdp_options xo;
	socklen_t optlen = sizeof(xo);
	__u32 idx;
	int err;

	if (nframes < 64 || (nframes & (nframes - 1)))
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->arp_fd = -1;
	p->queues_fd = -1;
	pthread_mutex_init(&p->lock, NULL);
	snprintf(p->ifname, sizeof(p->ifname), "%s", ifname);
	p->ifindex = ifindex;
	p->queue = queue;
	p->refs = 1;
	/* The queue's claim first: a queue another process is taking is
	 * skipped here, before a UMEM is registered (concurrent openers
	 * scanning with XW_QUEUE_ANY).  Busy and not quiet: the kernel's bind
	 * gives the verdict and its message. */
	p->claim_fd = xwi_queue_claim(ifindex, queue);
	if (p->claim_fd == -EBUSY && quiet_busy) {
		p->claim_fd = -1;
		err = -EBUSY;
		goto fail;
	}
	if (p->claim_fd < 0)
		p->claim_fd = -1;
	err = if_info(p);
	if (err) {
		xwi_err("%s: cannot read the interface's address and MTU: %s", ifname,
			strerror(-err));
		goto fail;
	}

	p->nframes = nframes;
	p->frame_size = XWI_FRAME_SIZE;
	p->nrx_frames = nframes / 2;
	p->ntx_frames = nframes - p->nrx_frames;
	p->area_len = (size_t)nframes * p->frame_size;
	p->area = mmap(NULL, p->area_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (p->area == MAP_FAILED) {
		p->area = NULL;
		err = -ENOMEM;
		goto fail;
	}
	ucfg.fill_size = p->nrx_frames * 2; /* room for lazy consumer updates */
	ucfg.comp_size = p->ntx_frames;
	ucfg.frame_size = p->frame_size;
	ucfg.frame_headroom = 0;
	err = xsk_umem__create(&p->umem, p->area, p->area_len, &p->fq, &p->cq, &ucfg);
	if (err) {
		p->umem = NULL;
		err = bind_error(p, err);
		goto fail;
	}
	scfg.rx_size = p->nrx_frames;
	scfg.tx_size = p->ntx_frames;
	scfg.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD;
	/* Multi-buffer only where the MTU needs it: a kernel without it
	 * (before 6.6) refuses the flag with EINVAL. */
	p->sg = p->mtu + ETH_HLEN > XWI_RX_ROOM;
	scfg.bind_flags = XDP_USE_NEED_WAKEUP | (p->sg ? XDP_USE_SG : 0);
	err = xsk_socket__create(&p->xsk, ifname, queue, p->umem, &p->rx, &p->tx, &scfg);
	if (err == -EINVAL && p->sg) {
		p->sg = false;
		scfg.bind_flags = XDP_USE_NEED_WAKEUP;
		err = xsk_socket__create(&p->xsk, ifname, queue, p->umem, &p->rx, &p->tx, &scfg);
	}
	if ((err == -EBUSY && quiet_busy) || (err == -EINVAL && quiet_inval)) {
		p->xsk = NULL;
		goto fail;
	}
	if (err) {
		p->xsk = NULL;
		err = bind_error(p, err);
		goto fail;
	}
	p->fd = xsk_socket__fd(p->xsk);
	p->max_frame = p->sg ? XWI_SG_FRAMES * XWI_RX_ROOM : XWI_RX_ROOM;
	if ((__u32)p->mtu + ETH_HLEN > p->max_frame) {
		if (p->sg)
			xwi_err("%s: MTU %d is too large for AF_XDP (frames of at most %u bytes "
				"in %u UMEM frames); set the MTU to at most %u", ifname, p->mtu,
				p->max_frame, XWI_SG_FRAMES, p->max_frame - ETH_HLEN);
		else
			xwi_err("%s: MTU %d needs multi-buffer AF_XDP (XDP_USE_SG, Linux 6.6 or "
				"later), which this kernel refuses; set the MTU to at most %u "
				"or use a newer kernel", ifname, p->mtu, p->max_frame - ETH_HLEN);
		err = -EMSGSIZE;
		goto fail;
	}
	if (p->sg) {
		/* Frames longer than the MTU (and a VLAN tag or two) are
		 * not ours. */
		p->sg_cap = (__u32)p->mtu + ETH_HLEN + 8;
	}
	if (queues_fd >= 0 && queue < XW_MAX_QUEUES) {
		__u32 pid = (__u32)getpid();

		p->queues_fd = fcntl(queues_fd, F_DUPFD_CLOEXEC, 0);
		if (p->queues_fd < 0 ||
		    bpf_map_update_elem(p->queues_fd, &queue, &pid, BPF_ANY)) {
			err = -errno;
			xwi_err("%s queue %u: cannot mark the queue in use: %s", ifname, queue,
				strerror(errno));
			goto fail;
		}
	}
	if (getsockopt(p->fd, SOL_XDP, XDP_OPTIONS, &xo, &optlen) == 0)
		p->zerocopy = !!(xo.flags & XDP_OPTIONS_ZEROCOPY);

	/* Receive frames: the first half of the UMEM, all in the fill ring. */
	if (xsk_ring_prod__reserve(&p->fq, p->nrx_frames, &idx) != p->nrx_frames) {
		err = -ENOMEM;
		goto fail;
	}
	for (__u32 i = 0; i < p->nrx_frames; i++)
		*xsk_ring_prod__fill_addr(&p->fq, idx + i) = (__u64)i * p->frame_size;
	xsk_ring_prod__submit(&p->fq, p->nrx_frames);
	p->fill_posted = p->nrx_frames;
	port_warm(p);

	/* Transmit frames: the second half, in the free list. */
	p->free_tx = calloc(p->ntx_frames, sizeof(*p->free_tx));
	if (!p->free_tx) {
		err = -ENOMEM;
		goto fail;
	}
	for (__u32 i = 0; i < p->ntx_frames; i++)
		p->free_tx[i] = (__u64)(p->nrx_frames + i) * p->frame_size;
	p->nfree = p->ntx_frames;
	p->debug = getenv("XDPWAKE_DEBUG") && atoi(getenv("XDPWAKE_DEBUG")) > 0;
	xwi_dbg("%s queue %u: AF_XDP socket in %s mode, %u UMEM frames, frames up to %u "
		"bytes%s", ifname, queue, p->zerocopy ? "zero-copy" : "copy", nframes,
		p->max_frame, p->sg ? " (multi-buffer)" : "");
	*portp = p;
	return 0;
fail:
	port_free(p);
	return err;
}

int xwi_port_get(const char *ifname, int ifindex, __u32 queue, __u32 umem_frames,
		 unsigned int flags, int queues_fd, struct xwi_port **portp)
{
	bool quiet = flags & XWI_PORT_QUIET;
	struct xwi_port *p;
	int err = 0;

	pthread_mutex_lock(&ports_lock);
	for (p = ports; p; p = p->next)
		if (p->ifindex == ifindex && p->queue == queue)
			break;
	if (p) {
		p->refs++;
	} else {
		/* A queue being released is busy for a while: see above. */
		__u64 end = (flags & XWI_PORT_WAIT) ? mono_ns() + XWI_REBIND_NS : 0;

		for (;;) {
			bool last = mono_ns() >= end;

			err = port_create(ifname, ifindex, queue, umem_frames, queues_fd, &p,
					  !last || quiet, quiet);
			if (err != -EBUSY || last)
				break;
			usleep(1000);
		}
		if (!err) {
			p->next = ports;
			ports = p;
		}
	}
	pthread_mutex_unlock(&ports_lock);
	if (!err)
		*portp = p;
	return err;
}

int xwi_port_sock_stats(const struct xwi_port *p, struct xwi_sock_stats *st)
{
	struct xdp_statistics xs;
	socklen_t len = sizeof(xs);

	memset(st, 0, sizeof(*st));
	memset(&xs, 0, sizeof(xs));
	if (getsockopt(p->fd, SOL_XDP, XDP_STATISTICS, &xs, &len))
		return -errno;
	st->rx_dropped = xs.rx_dropped;
	st->rx_invalid = xs.rx_invalid_descs;
	st->tx_invalid = xs.tx_invalid_descs;
	st->rx_ring_full = xs.rx_ring_full;
	st->rx_fill_empty = xs.rx_fill_ring_empty_descs;
	return 0;
}

bool xwi_port_have(int ifindex, __u32 queue)
{
	struct xwi_port *p;

	pthread_mutex_lock(&ports_lock);
	for (p = ports; p; p = p->next)
		if (p->ifindex == ifindex && p->queue == queue)
			break;
	pthread_mutex_unlock(&ports_lock);
	return p != NULL;
}

__u32 xwi_rx_queues(const char *ifname)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	struct ifreq ifr = {};
	char path[64 + IF_NAMESIZE];
	struct dirent *de;
	__u32 n = 0;
	DIR *d;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd >= 0) {
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
		ifr.ifr_data = (void *)&ch;
		if (ioctl(fd, SIOCETHTOOL, &ifr) == 0)
			n = ch.rx_count + ch.combined_count;
		close(fd);
	}
	if (n)
		return n;
	/* No channel information (some drivers): the queues sysfs shows (of
	 * the network namespace sysfs was mounted in). */
	snprintf(path, sizeof(path), "/sys/class/net/%s/queues", ifname);
	d = opendir(path);
	if (d) {
		while ((de = readdir(d)))
			if (!strncmp(de->d_name, "rx-", 3))
				n++;
		closedir(d);
	}
	return n ? n : 1;
}

void xwi_port_put(struct xwi_port *port)
{
	struct xwi_port **pp;

	if (!port)
		return;
	pthread_mutex_lock(&ports_lock);
	if (--port->refs == 0) {
		for (pp = &ports; *pp; pp = &(*pp)->next)
			if (*pp == port) {
				*pp = port->next;
				break;
			}
		port_free(port);
	}
	pthread_mutex_unlock(&ports_lock);
}

static __u32 encap_overhead(const struct xwi_encap *enc)
{
	return XW_HDR_LEN + (enc->encap == XW_ENCAP_UDP ? sizeof(struct iphdr) +
							 sizeof(struct udphdr) : 0);
}

__u32 xwi_port_frag_payload(const struct xwi_port *port, const struct xwi_encap *enc)
{
	__u32 room = port->mtu;

	/* The frame (Ethernet header + MTU) must also fit what the socket
	 * carries (port_create() refused an MTU that does not). */
	if (room > port->max_frame - ETH_HLEN)
		room = port->max_frame - ETH_HLEN;
	return room - encap_overhead(enc);
}

/* ---- transmit ------------------------------------------------------- */

static void reap_completions(struct xwi_port *p)
{
	__u32 idx, n = xsk_ring_cons__peek(&p->cq, p->ntx_frames, &idx);

	for (__u32 i = 0; i < n; i++)
		p->free_tx[p->nfree++] = *xsk_ring_cons__comp_addr(&p->cq, idx + i);
	if (n) {
		xsk_ring_cons__release(&p->cq, n);
		p->tx_inflight -= n;
	}
}

static void kick_tx(struct xwi_port *p)
{
	if (!p->tx_dirty && !p->tx_inflight)
		return;
	if (xsk_ring_prod__needs_wakeup(&p->tx)) {
		/* Copy mode sends a batch (32 descriptors) per call and says
		 * EAGAIN while more wait: keep kicking, bounded.  EBUSY/ENOBUFS:
		 * the kernel is busy; retried on the next flush. */
		for (int i = 0; i < 256; i++) {
			p->tx_kicks++;
			if (sendto(p->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0 || errno != EAGAIN)
				break;
		}
	}
	p->tx_dirty = false;
	p->tx_unkicked = 0;
}

int xwi_port_check_frames(struct xwi_port *p)
{
	if (p->fill_posted == p->nrx_frames && p->nfree + p->tx_inflight == p->ntx_frames &&
	    p->nfree <= p->ntx_frames)
		return 0;
	p->invariant_violations++;
	xwi_err("%s queue %u: UMEM frames lost track of: fill/RX %u of %u, free %u + in flight "
		"%u of %u", p->ifname, p->queue, p->fill_posted, p->nrx_frames, p->nfree,
		p->tx_inflight, p->ntx_frames);
	return -EFAULT;
}

void xwi_port_flush(struct xwi_port *p)
{
	kick_tx(p);
	reap_completions(p);
	if (p->debug)
		xwi_port_check_frames(p);
}

/* Copy mode transmits up to this many descriptors per kick. */
#define XWI_TX_KICK_BATCH 32

void xwi_port_flush_more(struct xwi_port *p)
{
	__u32 batch = p->ntx_frames / 2 < XWI_TX_KICK_BATCH ? p->ntx_frames / 2 : XWI_TX_KICK_BATCH;

	if (p->tx_unkicked >= (batch ? batch : 1))
		kick_tx(p);
	reap_completions(p);
	if (p->debug)
		xwi_port_check_frames(p);
}

static __u16 ip_csum(const void *data, size_t len)
{
	const __u16 *w = data;
	__u32 sum = 0;

	for (size_t i = 0; i < len / 2; i++)
		sum += w[i];
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	return (__u16)~sum;
}

static bool mac_zero(const __u8 *m)
{
	return !(m[0] | m[1] | m[2] | m[3] | m[4] | m[5]);
}

static void neigh_learn(struct xwi_port *p, __be32 ip, const __u8 *mac)
{
	for (unsigned int i = 0; i < XWI_NEIGH_SLOTS; i++)
		if (p->neigh[i].ip == ip) {
			memcpy(p->neigh[i].mac, mac, 6);
			return;
		}
	p->neigh[p->neigh_next].ip = ip;
	memcpy(p->neigh[p->neigh_next].mac, mac, 6);
	p->neigh_next = (p->neigh_next + 1) % XWI_NEIGH_SLOTS;
}

/* The next hop's MAC for @ip: our cache, the kernel's neighbour table, or
 * -EAGAIN after asking the kernel to resolve it. */
static int neigh_resolve(struct xwi_port *p, __be32 ip, __u8 *mac)
{
	struct arpreq req = {};
	struct sockaddr_in *sin = (struct sockaddr_in *)&req.arp_pa;
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(9) };
	int fd;

	for (unsigned int i = 0; i < XWI_NEIGH_SLOTS; i++)
		if (p->neigh[i].ip == ip && !mac_zero(p->neigh[i].mac)) {
			memcpy(mac, p->neigh[i].mac, 6);
			return 0;
		}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = ip;
	snprintf(req.arp_dev, sizeof(req.arp_dev), "%s", p->ifname);
	if (ioctl(fd, SIOCGARP, &req) == 0 && (req.arp_flags & ATF_COM)) {
		close(fd);
		memcpy(mac, req.arp_ha.sa_data, 6);
		neigh_learn(p, ip, mac);
		return 0;
	}
	close(fd);
	/* Make the kernel resolve it: a datagram to the discard port. */
	if (p->arp_fd < 0) {
		p->arp_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (p->arp_fd >= 0)
			setsockopt(p->arp_fd, SOL_SOCKET, SO_BINDTODEVICE, p->ifname,
				   strlen(p->ifname));
	}
	dst.sin_addr.s_addr = ip;
	if (p->arp_fd >= 0)
		sendto(p->arp_fd, "", 0, MSG_DONTWAIT, (struct sockaddr *)&dst, sizeof(dst));
	return -EAGAIN;
}

/* Copy @n bytes from @src to the frame being built in the UMEM frames
 * @addrs at offset *@off (each UMEM frame holds frame_size bytes of it);
 * @crc non-NULL: the CRC32C continued over them while they are copied. */
static void frame_put(struct xwi_port *p, const __u64 *addrs, size_t *off, const void *src,
		      size_t n, __u32 *crc)
{
	const __u8 *s = src;

	while (n) {
		size_t in = *off % p->frame_size, k = p->frame_size - in;
		__u8 *d = xsk_umem__get_data(p->area, addrs[*off / p->frame_size]);

		if (k > n)
			k = n;
		if (crc)
			*crc = xwi_crc32c_copy(*crc, d + in, s, k);
		else
			memcpy(d + in, s, k);
		s += k;
		n -= k;
		*off += k;
	}
}

int xwi_port_tx(struct xwi_port *p, const struct xwi_encap *enc, const struct xw_addr *dst,
		const struct xw_hdr *h, const void *payload, size_t len, bool crc)
{
	size_t hdrs = ETH_HLEN + encap_overhead(enc), flen = hdrs + len, off = 0;
	__u32 sum = crc ? xwi_crc32c(0, h, XW_HDR_LEN) : 0;
	__u8 hb[ETH_HLEN + sizeof(struct iphdr) + sizeof(struct udphdr) + XW_HDR_LEN];
	__u64 addrs[XWI_SG_FRAMES] = { 0 };
	struct ethhdr eth;
	__u32 idx, nd;
	int err;

	if (flen > p->max_frame || len > xwi_port_frag_payload(p, enc))
		return -EMSGSIZE;
	nd = (__u32)((flen + p->frame_size - 1) / p->frame_size);
	memcpy(eth.h_source, p->mac, 6);
	if (enc->encap == XW_ENCAP_UDP) {
		if (!p->ip)
			return -EADDRNOTAVAIL;
		if (!mac_zero(dst->mac)) {
			memcpy(eth.h_dest, dst->mac, 6);
		} else {
			err = neigh_resolve(p, dst->ip, eth.h_dest);
			if (err)
				return err;
		}
		eth.h_proto = htons(ETH_P_IP);
	} else {
		memcpy(eth.h_dest, dst->mac, 6);
		eth.h_proto = htons(enc->ethertype);
	}

	if (p->nfree < nd)
		reap_completions(p);
	if (p->nfree < nd) {
		kick_tx(p);
		reap_completions(p);
	}
	if (p->nfree < nd || xsk_ring_prod__reserve(&p->tx, nd, &idx) != nd) {
		p->tx_full++;
		kick_tx(p);
		return -EAGAIN;
	}
	memcpy(hb, &eth, ETH_HLEN);
	if (enc->encap == XW_ENCAP_UDP) {
		struct iphdr ip = {};
		struct udphdr udp = {};

		ip.version = 4;
		ip.ihl = 5;
		ip.tot_len = htons((__u16)(flen - ETH_HLEN));
		ip.frag_off = htons(0x4000); /* DF */
		ip.ttl = 64;
		ip.protocol = IPPROTO_UDP;
		ip.saddr = p->ip;
		ip.daddr = dst->ip;
		ip.check = ip_csum(&ip, sizeof(ip));
		udp.source = htons(enc->udp_port);
		udp.dest = dst->port;
		udp.len = htons((__u16)(flen - ETH_HLEN - sizeof(ip)));
		udp.check = 0; /* optional in IPv4; the payload has its own CRC */
		memcpy(hb + ETH_HLEN, &ip, sizeof(ip));
		memcpy(hb + ETH_HLEN + sizeof(ip), &udp, sizeof(udp));
	}
	memcpy(hb + hdrs - XW_HDR_LEN, h, XW_HDR_LEN);
	for (__u32 i = 0; i < nd; i++)
		addrs[i] = p->free_tx[--p->nfree];
	frame_put(p, addrs, &off, hb, hdrs, NULL);
	if (len)
		frame_put(p, addrs, &off, payload, len, crc ? &sum : NULL);
	if (crc) {
		/* the header is in the first UMEM frame */
		__be32 c = htonl(sum);

		memcpy((__u8 *)xsk_umem__get_data(p->area, addrs[0]) + hdrs - XW_HDR_LEN +
			       offsetof(struct xw_hdr, csum), &c, sizeof(c));
	}
	for (__u32 i = 0; i < nd; i++) {
		struct xdp_desc *d = xsk_ring_prod__tx_desc(&p->tx, idx + i);

		d->addr = addrs[i];
		d->len = i + 1 < nd ? p->frame_size : (__u32)(flen - (size_t)i * p->frame_size);
		d->options = i + 1 < nd ? XDP_PKT_CONTD : 0;
	}
	xsk_ring_prod__submit(&p->tx, nd);
	p->tx_inflight += nd;
	p->tx_frames++;
	p->tx_dirty = true;
	p->tx_unkicked += nd;
	return 0;
}

/* ---- receive -------------------------------------------------------- */

bool xwi_port_attached(const struct xwi_port *p, __u16 id)
{
	return id < XW_MAX_ENDPOINTS && p->sinks[id].deliver;
}

int xwi_port_attach(struct xwi_port *p, __u16 id, const struct xwi_sink *sink)
{
	if (id >= XW_MAX_ENDPOINTS)
		return -ERANGE;
	if (p->sinks[id].deliver)
		return -EBUSY;
	p->sinks[id] = *sink;
	return 0;
}

void xwi_port_detach(struct xwi_port *p, __u16 id, const void *ctx)
{
	if (id < XW_MAX_ENDPOINTS && p->sinks[id].ctx == ctx)
		memset(&p->sinks[id], 0, sizeof(p->sinks[id]));
}

/* Parse a received frame of @len bytes in @n pieces @iov (the XDP program
 * passed only ours, but a frame is checked again: user space trusts
 * nothing).  Its headers are in the first piece; the payload goes to the
 * sink where it lies. */
static void rx_frame(struct xwi_port *p, const struct iovec *iov, unsigned int n, __u32 len)
{
	const __u8 *data = iov[0].iov_base, *end0 = data + iov[0].iov_len;
	struct iovec pl[XWI_SG_FRAMES];
	const struct xwi_sink *sink;
	struct xwi_frame f;
	int err = xwi_frame_parse(data, len, &f);
	__u16 dst;

	if (!err && f.payload > end0)
		err = -EPROTO; /* headers past the first piece */

	if (f.src.encap == XW_ENCAP_UDP)
		neigh_learn(p, f.src.ip, f.src.mac);
	if (err) {
		p->rx_foreign++;
		return;
	}
	dst = ntohs(f.h.dst_ep);
	if (dst >= XW_MAX_ENDPOINTS || !(sink = &p->sinks[dst])->deliver) {
		p->rx_noep++;
		return;
	}
	p->rx_frames++;
	pl[0].iov_base = (void *)(uintptr_t)f.payload;
	pl[0].iov_len = (size_t)(end0 - f.payload);
	if (pl[0].iov_len > f.len)
		pl[0].iov_len = f.len;
	for (unsigned int i = 1; i < n; i++)
		pl[i] = iov[i];
	sink->deliver(sink->ctx, &f.src, &f.h, pl, n, f.len);
}

/* Post UMEM frame @addr to the fill ring again. */
static void refill(struct xwi_port *p, __u64 addr)
{
	__u32 fidx;

	/* The fill ring holds twice the receive frames: always room. */
	if (xsk_ring_prod__reserve(&p->fq, 1, &fidx) == 1) {
		*xsk_ring_prod__fill_addr(&p->fq, fidx) = addr - addr % p->frame_size;
		xsk_ring_prod__submit(&p->fq, 1);
	} else {
		p->fill_posted--; /* cannot happen; keep the count honest */
	}
}

/* A piece of a multi-buffer frame; its last delivers it (@d: its
 * descriptor, @data where it lies). */
static void rx_piece(struct xwi_port *p, const struct xdp_desc *d, __u64 addr, __u8 *data)
{
	if (d->len <= p->frame_size && p->nsg < XWI_SG_FRAMES && p->sg_len <= p->sg_cap &&
	    d->len <= p->sg_cap - p->sg_len) {
		p->sg_iov[p->nsg].iov_base = data;
		p->sg_iov[p->nsg].iov_len = d->len;
		p->sg_addr[p->nsg++] = addr;
		p->sg_len += d->len;
	} else {
		p->sg_len = p->sg_cap + 1; /* too long: dropped */
		refill(p, addr);
	}
	if (d->options & XDP_PKT_CONTD)
		return;
	if (p->sg_len <= p->sg_cap && p->nsg) {
		p->rx_multibuf++;
		rx_frame(p, p->sg_iov, p->nsg, p->sg_len);
	} else {
		p->rx_foreign++;
	}
	for (__u32 i = 0; i < p->nsg; i++)
		refill(p, p->sg_addr[i]);
	p->nsg = 0;
	p->sg_len = 0;
}

__u32 xwi_port_rx_ready(struct xwi_port *p)
{
	/* Called without the port lock (a waiter's check before sleeping or
	 * spinning): it reads the ring's shared indices and writes nothing,
	 * not even libxdp's cached producer, which the lock holder owns.  A
	 * received frame is there from the kernel's producer store until our
	 * consumer release after the frame was handled. */
	return __atomic_load_n(p->rx.producer, __ATOMIC_ACQUIRE) -
	       __atomic_load_n(p->rx.consumer, __ATOMIC_RELAXED);
}

int xwi_port_rx(struct xwi_port *p, int budget)
{
	__u32 idx, n;

	n = xsk_ring_cons__peek(&p->rx, (__u32)budget, &idx);
	if (!n) {
		if (xsk_ring_prod__needs_wakeup(&p->fq))
			recvfrom(p->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
		return 0;
	}
	for (__u32 i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&p->rx, idx + i);
		__u64 addr = xsk_umem__extract_addr(d->addr);
		__u8 *data = xsk_umem__get_data(p->area, xsk_umem__add_offset_to_addr(d->addr));

		if (p->nsg || p->sg_len || (d->options & XDP_PKT_CONTD)) {
			/* A multi-buffer frame (it may span two calls). */
			rx_piece(p, d, addr, data);
			continue;
		}
		if (d->len <= p->frame_size) {
			struct iovec one = { data, d->len };

			rx_frame(p, &one, 1, d->len);
		}
		refill(p, addr);
	}
	xsk_ring_cons__release(&p->rx, n);
	return (int)n;
}
