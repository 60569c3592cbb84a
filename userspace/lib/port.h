/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * port.h - one AF_XDP socket of this process on (interface, queue), shared
 * by the process's endpoints on that queue: UMEM, the four rings, the
 * transmit frame pool, encapsulation on transmit and parsing on receive,
 * and the demultiplexing of received frames to endpoints.
 */
#ifndef XWI_PORT_H
#define XWI_PORT_H

#include <net/if.h>
#include <pthread.h>
#include <sys/uio.h>
#include <linux/types.h>
#include <xdp/xsk.h>

#include "xdpwake.h"

/*
 * Where received frames for one endpoint id go: registered by the endpoint
 * layer when the endpoint opens (xwi_port_attach, and with xwi_local_open
 * for the local path), called with each frame for it under the port lock.
 * @src: the sender's address, @h the header (network byte order), @len
 * bytes follow it in @n pieces @iov (more than one: a multi-buffer frame,
 * read where it lies in the UMEM).
 */
struct xwi_sink {
	void (*deliver)(void *ctx, const struct xw_addr *src, const struct xw_hdr *h,
			const struct iovec *iov, unsigned int n, size_t len);
	void *ctx;
};

/* UMEM frames per multi-buffer frame: the kernel's copy-mode transmit
 * takes fewer than MAX_SKB_FRAGS (17). */
#define XWI_SG_FRAMES 16

/* How an endpoint's frames are encapsulated. */
struct xwi_encap {
	__u32 encap;	 /* XW_ENCAP_ETH or XW_ENCAP_UDP */
	__u16 ethertype; /* host order */
	__u16 udp_port;	 /* host order: our source and listening port */
};

#define XWI_NEIGH_SLOTS 16

struct xwi_port {
	struct xwi_port *next; /* process-wide list (port.c) */
	int refs;
	char ifname[IF_NAMESIZE];
	int ifindex;
	__u32 queue;
	__u8 mac[6];
	__be32 ip; /* 0 if the interface has no IPv4 address */
	int mtu;
	int zerocopy;

	void *area;
	size_t area_len;
	__u32 nframes, frame_size;
	/* Multi-buffer (XDP_USE_SG): a frame larger than one UMEM frame
	 * arrives in, and is sent from, several; max_frame is the largest
	 * frame (Ethernet header on) the socket takes, >= MTU + ETH_HLEN. */
	bool sg;
	__u32 max_frame;
	/* A multi-buffer frame being received (it may span two calls): its
	 * pieces, not posted to the fill ring again until it is delivered */
	struct iovec sg_iov[XWI_SG_FRAMES];
	__u64 sg_addr[XWI_SG_FRAMES];
	__u32 nsg;
	__u32 sg_len;	  /* its bytes so far; > sg_cap: too long, dropped */
	__u32 sg_cap;
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	int fd;
	struct xsk_ring_prod fq, tx;
	struct xsk_ring_cons cq, rx;
	__u64 *free_tx; /* transmit frame pool */
	__u32 nfree, ntx_frames, nrx_frames;
	__u32 tx_inflight; /* submitted, completion not yet reaped */
	__u32 fill_posted; /* frames in the fill ring or the RX ring */
	bool tx_dirty;	   /* submitted since the last kick */
	__u32 tx_unkicked; /* frames submitted since the last kick */

	struct xwi_sink sinks[XW_MAX_ENDPOINTS]; /* by destination id; .deliver NULL: none */
	pthread_mutex_t lock; /* progress from the application and helpers */

	struct {
		__be32 ip;
		__u8 mac[6];
	} neigh[XWI_NEIGH_SLOTS];
	unsigned int neigh_next;
	int arp_fd; /* UDP socket used to make the kernel resolve a peer */

	__u64 tx_frames, rx_frames, tx_kicks, tx_full, rx_foreign, rx_noep;
	__u64 rx_multibuf; /* frames received in more than one UMEM frame */
	__u32 rx_warmed;   /* receive frames given their first use at creation */
	int queues_fd;		/* the program's `udp_queues` map (ours: a dup), or -1 */
	int claim_fd;		/* the queue's claim (xwi_queue_claim), or -1 */
	bool debug;		/* XDPWAKE_DEBUG=1: check the frame invariant */
	__u64 invariant_violations;
};

/* The port lock: held around every use of the port and of the engines of
 * its endpoints (the application's calls, the helper threads' passes). */
static inline void xwi_port_lock(struct xwi_port *port)
{
	pthread_mutex_lock(&port->lock);
}

/* True if the lock was taken, false if someone holds it. */
static inline bool xwi_port_trylock(struct xwi_port *port)
{
	return pthread_mutex_trylock(&port->lock) == 0;
}

static inline void xwi_port_unlock(struct xwi_port *port)
{
	pthread_mutex_unlock(&port->lock);
}

/* Whether transmitted frames still wait for their completion (a hint
 * without the port lock). */
static inline bool xwi_port_tx_busy(const struct xwi_port *port)
{
	return port->tx_inflight != 0;
}

/* Every UMEM frame is in exactly one place (see port.c); 0 or -EFAULT. */
int xwi_port_check_frames(struct xwi_port *port);

/* xwi_port_get() flags. */
#define XWI_PORT_WAIT 0x1  /* a queue still being released is waited for */
#define XWI_PORT_QUIET 0x2 /* -EBUSY and -EINVAL are not logged (probing) */

/* Find or create the port for (@ifname, @queue); @umem_frames only when
 * creating (power of two, >= 64).  Reference counted.  With XWI_PORT_WAIT
 * (no live endpoint of another process is registered on the queue), a
 * queue still being released by the kernel is waited for.  A new port
 * marks its queue in use in the program's `udp_queues` map (@queues_fd,
 * -1: none) until its socket is closed. */
int xwi_port_get(const char *ifname, int ifindex, __u32 queue, __u32 umem_frames,
		 unsigned int flags, int queues_fd, struct xwi_port **portp);
/* Whether this process has a port on (@ifindex, @queue). */
bool xwi_port_have(int ifindex, __u32 queue);
/* The socket's own counters, kept by the kernel (XDP_STATISTICS): frames
 * it dropped before the library could see them.  Zero where the kernel
 * keeps fewer (an older kernel's shorter struct). */
struct xwi_sock_stats {
	__u64 rx_dropped;    /* dropped for other reasons (no memory, ...) */
	__u64 rx_ring_full;  /* the RX ring was full: not taken in time     */
	__u64 rx_fill_empty; /* no fill-ring frame to receive into          */
	__u64 rx_invalid;    /* invalid RX descriptors                      */
	__u64 tx_invalid;    /* invalid TX descriptors                      */
};
int xwi_port_sock_stats(const struct xwi_port *p, struct xwi_sock_stats *st);
/* RX queues of @ifname as the kernel reports them (ethtool channels, else
 * the queues in sysfs); at least 1. */
__u32 xwi_rx_queues(const char *ifname);
void xwi_port_put(struct xwi_port *port);

/* Payload bytes per frame for @enc on this port's MTU: the MTU less the
 * headers (a port is not created for an MTU it cannot carry). */
__u32 xwi_port_frag_payload(const struct xwi_port *port, const struct xwi_encap *enc);

/* Encapsulate and queue one frame (header @h, payload) to @dst; -EAGAIN
 * when no transmit frame or descriptor is free (or, in UDP mode, the peer's
 * MAC is still being resolved).  Transmission starts at xwi_port_flush().
 * @crc: the frame's CRC32C (csum: @h's is 0) is computed while the payload
 * is copied into the UMEM frames (xwi_crc32c_copy: one pass, not two). */
int xwi_port_tx(struct xwi_port *port, const struct xwi_encap *enc, const struct xw_addr *dst,
		const struct xw_hdr *h, const void *payload, size_t len, bool crc);
/* Kick the kernel if it needs it and reap completions. */
void xwi_port_flush(struct xwi_port *port);
/* A sender's batch (XW_SEND_MORE): the frames submitted so far go out only
 * once a batch of them has gathered (the kernel's copy-mode batch, or half
 * the TX frames); completions are reaped either way.  The batch's last
 * message, or any progress pass, flushes the rest. */
void xwi_port_flush_more(struct xwi_port *port);
/* Frames submitted and not kicked yet (under the port lock). */
static inline bool xwi_port_tx_unkicked(const struct xwi_port *port)
{
	return port->tx_unkicked != 0;
}
/* Take up to @budget received frames and hand each to its endpoint's
 * sink; returns the number taken. */
int xwi_port_rx(struct xwi_port *port, int budget);
/* Frames in the RX ring not yet handled; safe without the port lock. */
__u32 xwi_port_rx_ready(struct xwi_port *port);

/* Whether a sink is attached for endpoint @id (without the port lock, a
 * hint: xwi_port_attach decides). */
bool xwi_port_attached(const struct xwi_port *port, __u16 id);
/* Attach @sink for endpoint @id: frames for @id go to it from now on;
 * -EBUSY if another is attached.  Caller holds the port lock. */
int xwi_port_attach(struct xwi_port *port, __u16 id, const struct xwi_sink *sink);
/* Detach the sink of @id if it is the one with context @ctx.  Caller holds
 * the port lock. */
void xwi_port_detach(struct xwi_port *port, __u16 id, const void *ctx);

#endif
