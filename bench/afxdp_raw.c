// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * afxdp_raw - raw AF_XDP busy-spin ping-pong and stream: the software floor
 * of the path xdpwake uses (issue 7, experiment 8).  No library, no
 * reliability layer, no wake engine, no tag matching: one Ethernet frame
 * each way, both sides spinning on their AF_XDP rings.
 *
 *   afxdp_raw --server IFACE [--queue Q] [--idle-timeout S]
 *   afxdp_raw --client IFACE [--queue Q] [--mode pingpong|stream] [--sizes LIST]
 *             [--duration S | --iters N] [--warmup N] [--batch N] [--timeout-ms MS]
 *             [--connect-timeout S] [-j]
 *
 * Each side attaches bench/bpf/afxdp_raw.bpf.c (native XDP, generic if the driver
 * has none) to its own interface, opens one AF_XDP socket on queue Q (copy
 * mode: veth has no zero-copy) and puts it in the program's XSKMAP: frames
 * of EtherType 0x88B6 go to the socket, everything else passes.  Frames go
 * to the broadcast address (a veth pair delivers them to the other end; on
 * a real link they reach every host of the segment: use a dedicated one).
 *
 * Frame: Ethernet | magic, type, flags, seq, len (16 bytes) | len payload
 * bytes; padded to 60 bytes.  A message must fit one frame (interface MTU
 * minus 16 bytes): this tool does not fragment.
 *
 * pingpong: PING (seq, SIZE bytes) -> the server copies it into a PONG of
 *   the same size; latency = half the round trip.  No answer within
 *   --timeout-ms: the PING goes again (counted as a retransmit).
 * stream: batches of --batch DATA frames, the last flagged END; the server
 *   answers END with an ACK of its sequence number; latency = one batch,
 *   first send to its ack.  No ack in time: the END frame goes again.
 * The client says HELLO until the server answers (--connect-timeout), and
 * BYE at the end, which stops the server (it prints its CPU time from the
 * first data frame to BYE per data frame, getrusage).
 *
 * Exit: 0 ok, 1 run-time error, 2 usage.
 */
#include <errno.h>
#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/xsk.h>

#include "afxdp_raw.skel.h"
#include "peers_common.h"

#define RAW_ETHERTYPE 0x88B6 /* bench/bpf/afxdp_raw.bpf.c */
#define RAW_MAGIC 0x58575241u /* "XWRA" */
#define NRX 2048u
#define NTX 2048u
#define FRAME_SIZE 2048u
#define HDR_LEN 16u
#define MIN_FRAME 60u

enum { T_HELLO = 1, T_HELLO_ACK, T_PING, T_PONG, T_DATA, T_ACK, T_BYE };
enum { F_END = 1 };
enum { MODE_PINGPONG, MODE_STREAM };

struct raw_hdr {
	uint32_t magic;
	uint8_t type, flags;
	uint16_t rsvd;
	uint32_t seq;
	uint32_t len;
};

static struct {
	bool server, client, json;
	const char *ifname;
	unsigned long queue, batch, warmup, iters, timeout_ms;
	double duration, idle_timeout, connect_timeout;
	int mode, nsizes;
	unsigned long sizes[PC_MAX_SIZES];
	bool duration_set;
} o = {
	.batch = 32,
	.warmup = 100,
	.iters = 10000,
	.timeout_ms = 200,
	.idle_timeout = 120,
	.connect_timeout = 5,
	.sizes = { 0, 64, 1024 },
	.nsizes = 3,
};

struct xs {
	struct afxdp_raw_bpf *skel;
	int ifindex;
	__u32 xdp_flags;
	bool attached;
	void *area;
	size_t area_len;
	struct xsk_umem *umem;
	struct xsk_ring_prod fq, tx;
	struct xsk_ring_cons cq, rx;
	struct xsk_socket *xsk;
	int fd;
	uint64_t free_tx[NTX];
	unsigned int nfree;
	unsigned char mac[ETH_ALEN];
	unsigned int mtu;
	unsigned long long kicks;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: afxdp_raw --server IFACE [--queue Q] [--idle-timeout S]\n"
		"       afxdp_raw --client IFACE [--queue Q] [--mode pingpong|stream] [--sizes LIST]\n"
		"                 [--duration S | --iters N] [--warmup N] [--batch N]\n"
		"                 [--timeout-ms MS] [--connect-timeout S] [-j]\n"
		"Raw AF_XDP busy-spin ping-pong / stream between two interfaces (one frame\n"
		"each way, no library): the software floor of xdpwake's path.  Needs root.\n"
		"  --sizes LIST   message sizes (default 0,64,1K; stream 128), one frame each\n"
		"  --batch N      stream: frames per acknowledged batch (default 32)\n"
		"  -j, --json     print one JSON object (the fields of xdpwake pingpong -j)\n"
		"exit: 0 ok, 1 error, 2 usage\n");
}

static int parse_args(int argc, char **argv)
{
	bool sizes_set = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int bad = 0, takes = 1;

		if (!strcmp(a, "--server") && v) {
			o.server = true;
			o.ifname = v;
		} else if (!strcmp(a, "--client") && v) {
			o.client = true;
			o.ifname = v;
		} else if (!strcmp(a, "-j") || !strcmp(a, "--json")) {
			o.json = true;
			takes = 0;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			exit(0);
		} else if (!strcmp(a, "--queue") && v) {
			bad = pc_parse_ulong(v, 0, 63, &o.queue);
		} else if (!strcmp(a, "--mode") && v) {
			if (!strcmp(v, "pingpong"))
				o.mode = MODE_PINGPONG;
			else if (!strcmp(v, "stream"))
				o.mode = MODE_STREAM;
			else
				bad = 1;
		} else if (!strcmp(a, "--sizes") && v) {
			o.nsizes = pc_parse_sizes(v, o.sizes, FRAME_SIZE);
			bad = o.nsizes < 0;
			sizes_set = true;
		} else if (!strcmp(a, "--batch") && v) {
			bad = pc_parse_ulong(v, 1, NTX / 4, &o.batch);
		} else if (!strcmp(a, "--warmup") && v) {
			bad = pc_parse_ulong(v, 0, 100000000, &o.warmup);
		} else if (!strcmp(a, "--iters") && v) {
			bad = pc_parse_ulong(v, 1, 1000000000, &o.iters);
		} else if (!strcmp(a, "--timeout-ms") && v) {
			bad = pc_parse_ulong(v, 1, 60000, &o.timeout_ms);
		} else if (!strcmp(a, "--duration") && v) {
			bad = pc_parse_double(v, 0.001, 3600, &o.duration);
			o.duration_set = true;
		} else if (!strcmp(a, "--idle-timeout") && v) {
			bad = pc_parse_double(v, 0.1, 86400, &o.idle_timeout);
		} else if (!strcmp(a, "--connect-timeout") && v) {
			bad = pc_parse_double(v, 0.1, 3600, &o.connect_timeout);
		} else {
			fprintf(stderr, "afxdp_raw: bad or incomplete argument '%s'\n", a);
			return -1;
		}
		if (bad) {
			fprintf(stderr, "afxdp_raw: bad value for %s: '%s'\n", a, v);
			return -1;
		}
		i += takes;
	}
	if (o.server == o.client) {
		fprintf(stderr, "afxdp_raw: give --server IFACE or --client IFACE\n");
		return -1;
	}
	if (o.mode == MODE_STREAM && !sizes_set) {
		o.sizes[0] = 128;
		o.nsizes = 1;
	}
	return 0;
}

static int silent(enum libbpf_print_level l, const char *f, va_list ap)
{
	return l == LIBBPF_WARN ? vfprintf(stderr, f, ap) : 0;
}

/* ---- set-up ---------------------------------------------------------- */

static int if_info(struct xs *x)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", o.ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr))
		err = -errno;
	else
		memcpy(x->mac, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
	if (!err && ioctl(fd, SIOCGIFMTU, &ifr))
		err = -errno;
	else if (!err)
		x->mtu = (unsigned int)ifr.ifr_mtu;
	close(fd);
	return err;
}

static void xs_close(struct xs *x)
{
	if (x->xsk)
		xsk_socket__delete(x->xsk);
	if (x->umem)
		xsk_umem__delete(x->umem);
	if (x->area)
		munmap(x->area, x->area_len);
	if (x->attached) {
		LIBBPF_OPTS(bpf_xdp_attach_opts, ao,
			    .old_prog_fd = bpf_program__fd(x->skel->progs.afxdp_raw));

		bpf_xdp_detach(x->ifindex, x->xdp_flags, &ao);
	}
	afxdp_raw_bpf__destroy(x->skel);
	memset(x, 0, sizeof(*x));
}

static int xs_open(struct xs *x)
{
	struct xsk_umem_config ucfg = {
		.fill_size = NRX,
		.comp_size = NTX,
		.frame_size = FRAME_SIZE,
		.frame_headroom = 0,
	};
	struct xsk_socket_config scfg = {
		.rx_size = NRX,
		.tx_size = NTX,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = XDP_COPY | XDP_USE_NEED_WAKEUP,
	};
	__u32 key = (__u32)o.queue, idx;
	int err, prog_fd;

	memset(x, 0, sizeof(*x));
	libbpf_set_print(silent);
	x->ifindex = (int)if_nametoindex(o.ifname);
	if (!x->ifindex) {
		fprintf(stderr, "afxdp_raw: no interface '%s'\n", o.ifname);
		return -ENODEV;
	}
	err = if_info(x);
	if (err) {
		fprintf(stderr, "afxdp_raw: %s: %s\n", o.ifname, strerror(-err));
		return err;
	}
	x->skel = afxdp_raw_bpf__open_and_load();
	if (!x->skel) {
		err = -errno;
		fprintf(stderr, "afxdp_raw: loading the XDP program: %s\n", strerror(-err));
		return err;
	}
	prog_fd = bpf_program__fd(x->skel->progs.afxdp_raw);
	x->xdp_flags = XDP_FLAGS_DRV_MODE | XDP_FLAGS_UPDATE_IF_NOEXIST;
	err = bpf_xdp_attach(x->ifindex, prog_fd, x->xdp_flags, NULL);
	if (err && err != -EBUSY && err != -EEXIST) {
		x->xdp_flags = XDP_FLAGS_SKB_MODE | XDP_FLAGS_UPDATE_IF_NOEXIST;
		err = bpf_xdp_attach(x->ifindex, prog_fd, x->xdp_flags, NULL);
	}
	if (err) {
		fprintf(stderr, "afxdp_raw: attaching XDP to %s: %s%s\n", o.ifname, strerror(-err),
			err == -EBUSY || err == -EEXIST ? " (another program is attached)" : "");
		goto fail;
	}
	x->xdp_flags &= ~(__u32)XDP_FLAGS_UPDATE_IF_NOEXIST;
	x->attached = true;

	x->area_len = (size_t)(NRX + NTX) * FRAME_SIZE;
	x->area = mmap(NULL, x->area_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (x->area == MAP_FAILED) {
		x->area = NULL;
		err = -ENOMEM;
		goto fail;
	}
	err = xsk_umem__create(&x->umem, x->area, x->area_len, &x->fq, &x->cq, &ucfg);
	if (err) {
		x->umem = NULL;
		fprintf(stderr, "afxdp_raw: UMEM: %s\n", strerror(-err));
		goto fail;
	}
	err = xsk_socket__create(&x->xsk, o.ifname, (__u32)o.queue, x->umem, &x->rx, &x->tx,
				 &scfg);
	if (err) {
		x->xsk = NULL;
		fprintf(stderr, "afxdp_raw: AF_XDP socket on %s queue %lu: %s\n", o.ifname,
			o.queue, strerror(-err));
		goto fail;
	}
	x->fd = xsk_socket__fd(x->xsk);
	if (bpf_map_update_elem(bpf_map__fd(x->skel->maps.raw_xsks), &key, &x->fd, 0)) {
		err = -errno;
		fprintf(stderr, "afxdp_raw: XSKMAP: %s\n", strerror(-err));
		goto fail;
	}
	if (xsk_ring_prod__reserve(&x->fq, NRX, &idx) != NRX) {
		err = -ENOMEM;
		goto fail;
	}
	for (__u32 i = 0; i < NRX; i++)
		*xsk_ring_prod__fill_addr(&x->fq, idx + i) = (uint64_t)i * FRAME_SIZE;
	xsk_ring_prod__submit(&x->fq, NRX);
	for (__u32 i = 0; i < NTX; i++)
		x->free_tx[i] = (uint64_t)(NRX + i) * FRAME_SIZE;
	x->nfree = NTX;
	return 0;
fail:
	xs_close(x);
	return err ? err : -EIO;
}

/* ---- frames ------------------------------------------------------------ */

static void kick(struct xs *x)
{
	if (!xsk_ring_prod__needs_wakeup(&x->tx))
		return;
	/* Copy mode sends a bounded batch per call and says EAGAIN while
	 * more wait. */
	for (int i = 0; i < 256; i++) {
		x->kicks++;
		if (sendto(x->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0 || errno != EAGAIN)
			break;
	}
}

static void reap(struct xs *x)
{
	__u32 idx, n = xsk_ring_cons__peek(&x->cq, NTX, &idx);

	for (__u32 i = 0; i < n; i++)
		x->free_tx[x->nfree++] = *xsk_ring_cons__comp_addr(&x->cq, idx + i);
	if (n)
		xsk_ring_cons__release(&x->cq, n);
}

/* Reserve @n TX frames; returns their UMEM addresses in @addr (0 on success). */
static int tx_get(struct xs *x, unsigned int n, uint64_t *addr)
{
	unsigned long long end = xwu_now_ns() + 1000000000ULL;

	reap(x);
	while (x->nfree < n) {
		kick(x);
		reap(x);
		if (xwu_now_ns() > end || pc_stop)
			return -ETIMEDOUT;
	}
	for (unsigned int i = 0; i < n; i++)
		addr[i] = x->free_tx[--x->nfree];
	return 0;
}

static unsigned int frame_fill(struct xs *x, uint64_t addr, uint8_t type, uint8_t flags,
			       uint32_t seq, const void *payload, unsigned long len)
{
	unsigned char *f = xsk_umem__get_data(x->area, addr);
	struct raw_hdr h = {
		.magic = htobe32(RAW_MAGIC),
		.type = type,
		.flags = flags,
		.seq = htobe32(seq),
		.len = htobe32((uint32_t)len),
	};
	uint16_t proto = htobe16(RAW_ETHERTYPE);
	unsigned int flen = ETH_HLEN + HDR_LEN + (unsigned int)len;

	memset(f, 0xff, ETH_ALEN);
	memcpy(f + ETH_ALEN, x->mac, ETH_ALEN);
	memcpy(f + 2 * ETH_ALEN, &proto, 2);
	memcpy(f + ETH_HLEN, &h, HDR_LEN);
	if (len && payload)
		memcpy(f + ETH_HLEN + HDR_LEN, payload, len);
	if (flen < MIN_FRAME) {
		memset(f + flen, 0, MIN_FRAME - flen);
		flen = MIN_FRAME;
	}
	return flen;
}

/* Put @n filled frames on the TX ring and kick. */
static int tx_post(struct xs *x, const uint64_t *addr, const unsigned int *len, unsigned int n)
{
	__u32 idx;

	if (xsk_ring_prod__reserve(&x->tx, n, &idx) != n)
		return -ENOSPC;
	for (unsigned int i = 0; i < n; i++) {
		struct xdp_desc *d = xsk_ring_prod__tx_desc(&x->tx, idx + i);

		d->addr = addr[i];
		d->len = len[i];
	}
	xsk_ring_prod__submit(&x->tx, n);
	kick(x);
	return 0;
}

static int send1(struct xs *x, uint8_t type, uint8_t flags, uint32_t seq, const void *payload,
		 unsigned long len)
{
	uint64_t addr;
	unsigned int flen;

	if (tx_get(x, 1, &addr))
		return -ETIMEDOUT;
	flen = frame_fill(x, addr, type, flags, seq, payload, len);
	return tx_post(x, &addr, &flen, 1);
}

/* A received frame: header fields and the payload, copied out of the UMEM
 * (as a receive into the application's buffer would). */
struct rx_frame {
	struct raw_hdr h;
	unsigned char payload[FRAME_SIZE];
};

/*
 * Spin on the RX ring until a frame of ours arrives, @deadline_ns passes
 * (-ETIMEDOUT) or a stop is requested (-EINTR).  The payload is copied out
 * and the UMEM frame given back to the fill ring before returning.
 */
static int rx_one(struct xs *x, struct rx_frame *out, unsigned long long deadline_ns)
{
	unsigned int spins = 0;

	for (;;) {
		__u32 idx, fidx;

		if (xsk_ring_cons__peek(&x->rx, 1, &idx) == 1) {
			const struct xdp_desc *d = xsk_ring_cons__rx_desc(&x->rx, idx);
			uint64_t addr = xsk_umem__extract_addr(d->addr);
			const unsigned char *f =
				xsk_umem__get_data(x->area, xsk_umem__add_offset_to_addr(d->addr));
			bool ours = false;

			if (d->len >= ETH_HLEN + HDR_LEN) {
				memcpy(&out->h, f + ETH_HLEN, HDR_LEN);
				out->h.seq = be32toh(out->h.seq);
				out->h.len = be32toh(out->h.len);
				ours = be32toh(out->h.magic) == RAW_MAGIC &&
				       out->h.len <= d->len - ETH_HLEN - HDR_LEN;
				if (ours)
					memcpy(out->payload, f + ETH_HLEN + HDR_LEN, out->h.len);
			}
			xsk_ring_cons__release(&x->rx, 1);
			if (xsk_ring_prod__reserve(&x->fq, 1, &fidx) == 1) {
				*xsk_ring_prod__fill_addr(&x->fq, fidx) = addr - addr % FRAME_SIZE;
				xsk_ring_prod__submit(&x->fq, 1);
			}
			if (ours)
				return 0;
			continue;
		}
		if (xsk_ring_prod__needs_wakeup(&x->fq))
			recvfrom(x->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
		if ((++spins & 63) == 0) {
			if (pc_stop)
				return -EINTR;
			if (xwu_now_ns() >= deadline_ns)
				return -ETIMEDOUT;
		}
	}
}

/* ---- server ------------------------------------------------------------ */

static int run_server(struct xs *x)
{
	unsigned long long idle_ns = (unsigned long long)(o.idle_timeout * 1e9);
	unsigned long long pings = 0, data = 0, cpu0 = 0;
	static struct rx_frame f;

	fprintf(stderr, "afxdp_raw: server on %s queue %lu (%s XDP, copy mode), busy-spin\n",
		o.ifname, o.queue, x->xdp_flags & XDP_FLAGS_SKB_MODE ? "generic" : "native");
	for (;;) {
		int err = rx_one(x, &f, xwu_now_ns() + idle_ns);

		if (err == -ETIMEDOUT) {
			fprintf(stderr, "afxdp_raw: idle for %.0f s, exiting\n", o.idle_timeout);
			break;
		}
		if (err)
			break;
		switch (f.h.type) {
		case T_HELLO:
			send1(x, T_HELLO_ACK, 0, f.h.seq, NULL, 0);
			break;
		case T_PING:
			/* The answer carries the message back. */
			send1(x, T_PONG, 0, f.h.seq, f.payload, f.h.len);
			pings++;
			break;
		case T_DATA:
			if (!data++)
				cpu0 = xwu_proc_cpu_us();
			if (f.h.flags & F_END)
				send1(x, T_ACK, 0, f.h.seq, NULL, 0);
			break;
		case T_BYE: /* the counts first: the client stops us once answered */
			fprintf(stderr, "afxdp_raw: %llu pings, %llu data frames; bye\n", pings,
				data);
			if (data)
				fprintf(stderr, "afxdp_raw: server CPU %.3f us per data frame\n",
					(double)(xwu_proc_cpu_us() - cpu0) / (double)data);
			send1(x, T_BYE, 0, f.h.seq, NULL, 0);
			return 0;
		default:
			break;
		}
	}
	return 0;
}

/* ---- client ------------------------------------------------------------ */

static struct rx_frame rxf; /* the client's receive buffer */

static int hello(struct xs *x)
{
	unsigned long long end = xwu_now_ns() + (unsigned long long)(o.connect_timeout * 1e9);
	struct rx_frame *f = &rxf;

	while (xwu_now_ns() < end && !pc_stop) {
		if (send1(x, T_HELLO, 0, 0, NULL, 0))
			return -EIO;
		if (!rx_one(x, f, xwu_now_ns() + 100000000ULL) && f->h.type == T_HELLO_ACK)
			return 0;
	}
	return -ETIMEDOUT;
}

/* One round trip; returns its time in ns or a negative error. */
static long long pp_round(struct xs *x, const unsigned char *sbuf, unsigned long size,
			  uint32_t seq, unsigned long long *retx)
{
	unsigned long long t0 = xwu_now_ns(), give_up = t0 + 5000000000ULL;
	struct rx_frame *f = &rxf;

	for (;;) {
		unsigned long long dl = xwu_now_ns() + o.timeout_ms * 1000000ULL;
		int err = send1(x, T_PING, 0, seq, sbuf, size);

		if (err)
			return err;
		for (;;) {
			err = rx_one(x, f, dl);
			if (err)
				break;
			if (f->h.type == T_PONG && f->h.seq == seq && f->h.len == size)
				return (long long)(xwu_now_ns() - t0);
		}
		if (err != -ETIMEDOUT)
			return err;
		if (xwu_now_ns() > give_up)
			return -ETIMEDOUT;
		(*retx)++;
	}
}

/* One stream batch, sequence numbers seq..seq+batch-1; returns ns or error. */
static long long st_batch(struct xs *x, const unsigned char *sbuf, unsigned long size,
			  uint32_t seq, unsigned long long *retx)
{
	unsigned long long t0 = xwu_now_ns(), give_up = t0 + 5000000000ULL;
	uint64_t addr[NTX / 4];
	unsigned int len[NTX / 4];
	uint32_t last = seq + (uint32_t)o.batch - 1;
	struct rx_frame *f = &rxf;
	int err;

	if (tx_get(x, (unsigned int)o.batch, addr))
		return -ETIMEDOUT;
	for (unsigned int i = 0; i < o.batch; i++)
		len[i] = frame_fill(x, addr[i], T_DATA, i + 1 == o.batch ? F_END : 0, seq + i, sbuf,
				    size);
	err = tx_post(x, addr, len, (unsigned int)o.batch);
	if (err)
		return err;
	for (;;) {
		err = rx_one(x, f, xwu_now_ns() + o.timeout_ms * 1000000ULL);
		if (!err && f->h.type == T_ACK && f->h.seq == last)
			return (long long)(xwu_now_ns() - t0);
		if (!err)
			continue;
		if (err != -ETIMEDOUT)
			return err;
		if (xwu_now_ns() > give_up)
			return -ETIMEDOUT;
		(*retx)++;
		err = send1(x, T_DATA, F_END, last, sbuf, size);
		if (err)
			return err;
	}
}

static unsigned char sbuf[FRAME_SIZE];

/* pc_measure()'s round: a ping-pong or a stream batch (the sequence
 * numbers are 32 bits on the wire). */
static long long client_round(void *ctx, unsigned long size, unsigned long long seq,
			      unsigned long long *retx)
{
	return o.mode == MODE_PINGPONG ? pp_round(ctx, sbuf, size, (uint32_t)seq, retx)
				       : st_batch(ctx, sbuf, size, (uint32_t)seq, retx);
}

static int run_client(struct xs *x)
{
	struct pc_run run = { "afxdp_raw", client_round, x, o.mode == MODE_PINGPONG,
			      o.mode == MODE_STREAM ? o.batch : 1, o.warmup, o.iters, o.duration,
			      o.duration_set };
	struct pc_result res[PC_MAX_SIZES];
	unsigned long max = x->mtu > HDR_LEN ? x->mtu - HDR_LEN : 0;
	unsigned long long seq = 1;
	int done = 0, rc = 1, err;

	memset(res, 0, sizeof(res));
	for (int i = 0; i < o.nsizes; i++)
		if (o.sizes[i] > max || o.sizes[i] > FRAME_SIZE - ETH_HLEN - HDR_LEN) {
			fprintf(stderr, "afxdp_raw: a %lu B message does not fit one frame (MTU %u, "
					"%u B header): this tool does not fragment\n",
				o.sizes[i], x->mtu, HDR_LEN);
			return 1;
		}
	for (unsigned int i = 0; i < sizeof(sbuf); i++)
		sbuf[i] = (unsigned char)i;
	err = hello(x);
	if (err) {
		fprintf(stderr, "afxdp_raw: no answer from a server within %.1f s\n",
			o.connect_timeout);
		return 1;
	}
	for (int i = 0; i < o.nsizes; i++) {
		if (pc_measure(&run, o.sizes[i], &seq, &res[i]))
			goto out;
		done++;
	}
	rc = 0;
out:
	/* Stop the server (it answers BYE); not fatal when it is gone. */
	for (int i = 0; i < 5; i++) {
		if (send1(x, T_BYE, 0, 0, NULL, 0))
			break;
		if (!rx_one(x, &rxf, xwu_now_ns() + 50000000ULL) && rxf.h.type == T_BYE)
			break;
	}
	if (done) {
		const char *test = o.mode == MODE_PINGPONG ? "pingpong" : "stream";

		if (o.json)
			pc_json_print("afxdp_raw", test, "busy-spin", "af_xdp-copy", res, done);
		else
			pc_text_print(test, "busy-spin", res, done);
	}
	return rc;
}

int main(int argc, char **argv)
{
	struct xs x;
	int rc;

	if (parse_args(argc, argv)) {
		usage(stderr);
		return 2;
	}
	pc_install_signals();
	if (xs_open(&x))
		return 1;
	rc = o.server ? run_server(&x) : run_client(&x);
	xs_close(&x);
	return rc;
}
