// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The end-to-end harness (xwt_e2e.h): the sender child in its own
 * namespace, frames and their payload pattern, the receiver's AF_XDP
 * socket, wake ring and checks, set-up and teardown.
 */
#include "xwt_e2e.h"
#include "rand.h"

volatile sig_atomic_t xwe_stop;
static struct xwe *xwe_g;	  /* for atexit / signals */
static volatile sig_atomic_t xwe_child_pid;

__attribute__((format(printf, 3, 4))) static int xwe_fail(struct xwe *e, int cls,
							  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->err, sizeof(e->err), fmt, ap);
	va_end(ap);
	return cls;
}

/* Write/read exactly @len bytes; read waits at most until @deadline_ns. */
static int xwe_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -errno ? -errno : -EIO;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

static int xwe_read_all(int fd, void *buf, size_t len, unsigned long long deadline_ns)
{
	char *p = buf;

	while (len) {
		unsigned long long now = xwu_now_ns(), ms;
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t r;
		int pr;

		if (now >= deadline_ns)
			return -ETIMEDOUT;
		ms = (deadline_ns - now) / 1000000ULL + 1;
		pr = poll(&pfd, 1, ms > 1000 ? 1000 : (int)ms);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			return -errno;
		if (pr == 0)
			continue;
		r = read(fd, p, len);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EPIPE;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

void xwe_sleep_us(unsigned long us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR && !xwe_stop)
		;
}

void xwe_wait_until(unsigned long long t)
{
	unsigned long long now = xwu_now_ns();

	if (t <= now)
		return;
	if (t - now > 20000) {
		struct timespec ts = { .tv_sec = (time_t)(t / 1000000000ULL),
				       .tv_nsec = (long)(t % 1000000000ULL) };

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR &&
		       !xwe_stop)
			;
		return;
	}
	while (xwu_now_ns() < t)
		__asm__ __volatile__("" ::: "memory");
}

__u32 xwe_rand(__u32 *s)
{
	if (!*s)
		*s = 0x9e3779b9u;
	return xwu_xorshift32(s);
}

/* Payload byte @j of the frame with sequence number @seq. */
static __u8 xwe_pattern(__u32 seq, __u32 j)
{
	__u32 x = seq * 2654435761u + j * 40503u + 0x5bd1e995u;

	return (__u8)((x >> 15) ^ (x >> 7) ^ j);
}

static int xwe_if_mac(const char *ifname, __u8 mac[6])
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr))
		err = -errno;
	else
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	close(fd);
	return err;
}

static int xwe_if_up(const char *ifname)
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr)) {
		err = -errno;
	} else {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr))
			err = -errno;
	}
	close(fd);
	return err;
}

void xwe_fmt_mac(const __u8 m[6], char out[18])
{
	snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

int xwe_parse_mac(const char *s, __u8 m[6])
{
	unsigned int b[6];

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
		return -EINVAL;
	for (int i = 0; i < 6; i++) {
		if (b[i] > 255)
			return -EINVAL;
		m[i] = (__u8)b[i];
	}
	return 0;
}

/* Offset of the xdpwake header in a frame built by xwt_build() (no VLAN). */
static int xwe_hdr_off(const __u8 *frame, int len)
{
	int eth = (int)sizeof(struct ethhdr), ihl;

	/* bytes, not structs: a received frame's IPv4 header may be unaligned */
	if (len < eth)
		return -1;
	if (((frame[12] << 8) | frame[13]) != ETH_P_IP)
		return eth;
	if (len < eth + (int)sizeof(struct iphdr))
		return -1;
	ihl = frame[eth] & 0x0f;
	if (ihl < 5)
		return -1;
	return eth + ihl * 4 + (int)sizeof(struct udphdr);
}

/* Flags of frame @i of command @c (@rnd: the frame's random draw). */
static __u8 xwe_flags(const struct xwe_cmd *c, __u32 i, __u32 rnd)
{
	__u32 g = c->group ? c->group : 1;
	bool last_in_group = (i % g) == g - 1 || i + 1 == c->n;
	__u8 f = 0;

	switch (c->lat) {
	case XWE_LAT_ALL: f |= XW_F_LAT; break;
	case XWE_LAT_LAST: f |= last_in_group ? XW_F_LAT : 0; break;
	case XWE_LAT_RAND: f |= (rnd & 1) ? XW_F_LAT : 0; break;
	default: break;
	}
	switch (c->more) {
	case XWE_MORE_ALL: f |= XW_F_MORE; break;
	case XWE_MORE_GROUP: f |= last_in_group ? 0 : XW_F_MORE; break;
	case XWE_MORE_BUT_LAST: f |= i + 1 == c->n ? 0 : XW_F_MORE; break;
	case XWE_MORE_RAND: f |= ((rnd >> 1) & 3) == 0 ? XW_F_MORE : 0; break;
	default: break;
	}
	return f;
}

/* Build frame @i of command @c into @buf (XWT_MAX_FRAME bytes); returns its length. */
static int xwe_build(const struct xwe_cmd *c, __u32 i, __u8 flags, const __u8 src_mac[6],
		     __u8 *buf)
{
	__u32 g = c->group ? c->group : 1, idx = i % g, seq = c->seq0 + i;
	struct xwt_frame f = {
		.encap = c->encap == XWT_ENC_UDP ? XWT_ENC_UDP : XWT_ENC_ETH,
		.ethertype = c->ethertype,
		.udp_port = c->udp_port,
		.type = c->type,
		.flags = flags,
		.dst_ep = c->dst_ep,
		.src_ep = 1,
		.payload_len = c->payload_len,
		.present = -1,
	};
	struct xw_hdr *h;
	__u8 *pl;
	int len, off;

	if (c->type == XW_PKT_SMALL) {
		f.frag_count = 1;
	} else if (c->type == XW_PKT_MEDIUM || c->type == XW_PKT_PULL_REPLY) {
		f.frag_idx = idx;
		f.frag_count = g;
		f.frag_off = idx * c->payload_len;
		f.msg_len = g * c->payload_len;
		f.msg_len_set = 1;
	} else {
		f.msg_len_set = 1; /* control frames: fragment fields 0 */
	}
	len = xwt_build(&f, buf);
	memcpy(buf, c->dst_mac, 6);
	memcpy(buf + 6, src_mac, 6);
	off = xwe_hdr_off(buf, len);
	h = (struct xw_hdr *)(buf + off);
	h->seq = htonl(seq);
	h->msg_id = htonl(c->msg_id0 + i / g);
	pl = (__u8 *)(h + 1);
	for (__u32 j = 0; j < c->payload_len; j++)
		pl[j] = xwe_pattern(seq, j);
	if (f.encap == XWT_ENC_UDP) {
		struct iphdr *ip = (struct iphdr *)(buf + sizeof(struct ethhdr));

		ip->check = 0;
		ip->check = xwt_ip_csum(ip, ip->ihl * 4);
	}
	return len;
}

/* Foreign traffic: an ARP request and an IPv4 ICMP echo request. */
static int xwe_build_foreign(int which, const __u8 dst[6], const __u8 src[6], __u8 *buf)
{
	struct ethhdr *eth = (struct ethhdr *)buf;
	__u8 *p = buf + sizeof(*eth);

	memset(buf, 0, 64);
	memcpy(eth->h_source, src, 6);
	if (which == 0) {
		static const __u8 arp[28] = { 0, 1, 8, 0, 6, 4, 0, 1 };

		memset(eth->h_dest, 0xff, 6);
		eth->h_proto = htons(ETH_P_ARP);
		memcpy(p, arp, sizeof(arp));
		memcpy(p + 8, src, 6);
		memcpy(p + 14, "\x0a\x00\x00\x01", 4);
		memcpy(p + 24, "\x0a\x00\x00\x02", 4);
		return 60;
	}
	/* (linux/icmp.h drags in linux/if.h, which clashes with net/if.h) */
	struct xwe_icmp {
		__u8 type, code;
		__u16 checksum;
		__be16 id, seq;
	} *ic;
	struct iphdr *ip = (struct iphdr *)p;

	ic = (struct xwe_icmp *)(p + sizeof(*ip));

	memcpy(eth->h_dest, dst, 6);
	eth->h_proto = htons(ETH_P_IP);
	ip->version = 4;
	ip->ihl = 5;
	ip->ttl = 64;
	ip->protocol = IPPROTO_ICMP;
	ip->tot_len = htons(sizeof(*ip) + sizeof(*ic) + 16);
	ip->saddr = htonl(0x0a000001);
	ip->daddr = htonl(0x0a000002);
	ip->check = xwt_ip_csum(ip, sizeof(*ip));
	ic->type = 8; /* echo request */
	ic->id = htons(0x7877);
	ic->seq = htons(1);
	for (int i = 0; i < 16; i++)
		((__u8 *)(ic + 1))[i] = (__u8)i;
	ic->checksum = xwt_ip_csum(ic, sizeof(*ic) + 16);
	return (int)(sizeof(*eth) + sizeof(*ip) + sizeof(*ic) + 16);
}

int xwe_tx_open(const char *ifname, int *ifindex, __u8 mac[6])
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	int fd, sndbuf = 1 << 21, err;

	*ifindex = (int)if_nametoindex(ifname);
	if (!*ifindex)
		return -ENODEV;
	err = xwe_if_mac(ifname, mac);
	if (err)
		return err;
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0); /* protocol 0: send only */
	if (fd < 0)
		return -errno;
	sll.sll_ifindex = *ifindex;
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		err = -errno;
		close(fd);
		return err;
	}
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	return fd;
}

static int xwe_tx_frame(int fd, int ifindex, const __u8 *buf, int len)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_ifindex = ifindex, .sll_halen = 6 };

	memcpy(sll.sll_addr, buf, 6);
	for (int tries = 0; tries < 1000; tries++) {
		ssize_t w = sendto(fd, buf, (size_t)len, 0, (struct sockaddr *)&sll, sizeof(sll));

		if (w == len)
			return 0;
		if (w >= 0)
			return -EMSGSIZE;
		if (errno != ENOBUFS && errno != EAGAIN && errno != EINTR)
			return -errno;
		xwe_sleep_us(50);
	}
	return -ENOBUFS;
}

int xwe_tx_run(int fd, int ifindex, const __u8 src_mac[6], const struct xwe_cmd *c,
	       __u64 *ts, __u32 max_ts)
{
	/* 2 (Ethernet) or 6 (IPv4/UDP) bytes in: the IPv4 header and the
	 * xdpwake header land on aligned addresses (sanitizer builds). */
	static __u8 store[XWT_MAX_FRAME + 16] __attribute__((aligned(16)));
	__u8 *buf = store + (c->op == XWE_OP_SEND && c->encap == XWT_ENC_UDP ? 6 : 2);
	__u32 g = c->group ? c->group : 1, seed = c->seed;
	unsigned long long prev = 0, gap, now;
	int len, err;

	if (c->op == XWE_OP_FOREIGN) {
		for (__u32 i = 0; i < c->n; i++) {
			len = xwe_build_foreign((int)(i & 1), c->dst_mac, src_mac, buf);
			if (ts && i < max_ts)
				ts[i] = xwu_now_ns();
			err = xwe_tx_frame(fd, ifindex, buf, len);
			if (err)
				return err;
		}
		return (int)c->n;
	}
	if (c->payload_len > XWT_MAX_FRAME - 128)
		return -EMSGSIZE;
	for (__u32 i = 0; i < c->n && !xwe_stop; i++) {
		__u32 rnd = xwe_rand(&seed);

		if (i > 0) {
			gap = (i % g == 0 && c->group_gap_us) ? c->group_gap_us : c->gap_us;
			if (c->rand_gap_us)
				gap += xwe_rand(&seed) % (c->rand_gap_us + 1);
			if (gap)
				xwe_wait_until(prev + gap * 1000ULL);
		}
		len = xwe_build(c, i, xwe_flags(c, i, rnd), src_mac, buf);
		now = xwu_now_ns();
		if (ts && i < max_ts)
			ts[i] = now;
		prev = now;
		err = xwe_tx_frame(fd, ifindex, buf, len);
		if (err)
			return err;
	}
	return xwe_stop ? -EINTR : (int)c->n;
}

__attribute__((noreturn)) static void xwe_sender_main(int cmd_fd, int rep_fd)
{
	static __u64 ts[XWE_MAX_SEND];
	struct xwe_reply rep = {};
	struct xwe_cmd c;
	int fd = -1, ifindex = 0, r;
	__u8 mac[6] = {};

	if (unshare(CLONE_NEWNET)) {
		rep.status = -errno;
		xwe_write_all(rep_fd, &rep, sizeof(rep));
		_exit(1);
	}
	xwt_no_ipv6();
	rep.pid = (__s32)getpid();
	if (xwe_write_all(rep_fd, &rep, sizeof(rep)))
		_exit(1);
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

	for (;;) {
		if (xwe_read_all(cmd_fd, &c, sizeof(c), ~0ULL))
			_exit(0); /* parent gone */
		memset(&rep, 0, sizeof(rep));
		switch (c.op) {
		case XWE_OP_START:
			c.ifname[IF_NAMESIZE - 1] = '\0';
			rep.status = xwe_if_up(c.ifname);
			if (!rep.status) {
				fd = xwe_tx_open(c.ifname, &ifindex, mac);
				if (fd < 0)
					rep.status = fd;
			}
			memcpy(rep.mac, mac, 6);
			if (xwe_write_all(rep_fd, &rep, sizeof(rep)))
				_exit(1);
			break;
		case XWE_OP_SEND:
		case XWE_OP_FOREIGN:
			r = fd < 0 ? -ENOTCONN : xwe_tx_run(fd, ifindex, mac, &c, ts, XWE_MAX_SEND);
			rep.status = r < 0 ? r : 0;
			rep.n = r < 0 ? 0 : (c.n < XWE_MAX_SEND ? c.n : XWE_MAX_SEND);
			if (xwe_write_all(rep_fd, &rep, sizeof(rep)) ||
			    (rep.n && xwe_write_all(rep_fd, ts, rep.n * sizeof(ts[0]))))
				_exit(1);
			break;
		default:
			_exit(0);
		}
	}
}

/* Kill and reap the sender (atexit, errors, teardown). */
static void xwe_kill_child(struct xwe *e)
{
	int st;

	if (!e || e->child <= 0)
		return;
	kill(e->child, SIGKILL);
	while (waitpid(e->child, &st, 0) < 0 && errno == EINTR)
		;
	e->child = 0;
	xwe_child_pid = 0;
}

static void xwe_atexit(void)
{
	xwe_kill_child(xwe_g);
}

/* Graceful mode: the first SIGINT/SIGTERM kills the sender and sets
 * xwe_stop (loops end, the caller cleans up and exits); a second one dies. */
static void xwe_on_signal(int sig)
{
	pid_t c = (pid_t)xwe_child_pid;

	if (c > 0)
		kill(c, SIGKILL);
	if (!xwe_stop) {
		xwe_stop = 1;
		return;
	}
	xwt_on_signal(sig); /* pins removed, then die of @sig */
}

static void xwe_on_signal_now(int sig)
{
	pid_t c = (pid_t)xwe_child_pid;

	if (c > 0)
		kill(c, SIGKILL);
	xwt_on_signal(sig);
}

void xwe_signals(bool graceful)
{
	struct sigaction sa = {};

	sa.sa_handler = graceful ? xwe_on_signal : xwe_on_signal_now;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART: blocking calls return EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = xwe_on_signal_now;
	sigaction(SIGABRT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static int xwe_spawn_sender(struct xwe *e)
{
	int cmdp[2], repp[2], err;
	struct xwe_reply rep;
	struct xwe_cmd c = { .op = XWE_OP_START };
	pid_t parent = getpid(), pid;

	if (pipe2(cmdp, O_CLOEXEC) || pipe2(repp, O_CLOEXEC))
		return xwe_fail(e, XWE_FAIL, "pipe: %s", strerror(errno));
	fcntl(repp[1], F_SETPIPE_SZ, 1 << 20);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return xwe_fail(e, XWE_FAIL, "fork: %s", strerror(errno));
	if (pid == 0) {
		/* Never return into the parent's code: no exit(), no atexit. */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGABRT, SIG_DFL);
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (getppid() != parent)
			_exit(1);
		close(cmdp[1]);
		close(repp[0]);
		xwe_sender_main(cmdp[0], repp[1]);
	}
	close(cmdp[0]);
	close(repp[1]);
	e->child = pid;
	xwe_child_pid = pid;
	e->cmd_fd = cmdp[1];
	e->rep_fd = repp[0];

	/* The child tells its pid once it has its own namespace. */
	err = xwe_read_all(e->rep_fd, &rep, sizeof(rep), xwu_now_ns() + 10000000000ULL);
	if (err)
		return xwe_fail(e, XWE_FAIL, "sender did not start: %s", strerror(-err));
	if (rep.status)
		return xwe_fail(e, XWE_SKIP, "sender: unshare(CLONE_NEWNET): %s",
				strerror(-rep.status));
	if (xwt_sh("ip link set %s netns %d", e->tx_if, rep.pid))
		return xwe_fail(e, XWE_SKIP, "cannot move %s into the sender's namespace", e->tx_if);
	snprintf(c.ifname, sizeof(c.ifname), "%s", e->tx_if);
	err = xwe_write_all(e->cmd_fd, &c, sizeof(c));
	if (!err)
		err = xwe_read_all(e->rep_fd, &rep, sizeof(rep), xwu_now_ns() + 10000000000ULL);
	if (err)
		return xwe_fail(e, XWE_FAIL, "sender: no answer: %s", strerror(-err));
	if (rep.status)
		return xwe_fail(e, rep.status == -EPERM || rep.status == -EAFNOSUPPORT ? XWE_SKIP
										       : XWE_FAIL,
				"sender: cannot open an AF_PACKET socket on %s: %s", e->tx_if,
				strerror(-rep.status));
	memcpy(e->tx_mac, rep.mac, 6);
	return 0;
}

int xwe_send(struct xwe *e, struct xwe_cmd *c, bool expect)
{
	if (e->send_pending || e->child <= 0)
		return -EBUSY;
	if (!c->op)
		c->op = XWE_OP_SEND;
	if (!c->dst_ep)
		c->dst_ep = (__u16)e->ep;
	memcpy(c->dst_mac, e->rx_mac, 6);
	c->seq0 = expect ? e->tx_seq : 0xF0000000u;
	if (expect)
		e->tx_seq += c->n;
	if (!c->seed)
		c->seed = c->seq0 * 2654435761u + 1;
	if (xwe_write_all(e->cmd_fd, c, sizeof(*c)))
		return -EPIPE;
	e->send_pending = 1;
	return 0;
}

int xwe_send_wait(struct xwe *e, __u64 *ts, __u32 max, int timeout_ms)
{
	unsigned long long deadline = xwu_now_ns() + (unsigned long long)timeout_ms * 1000000ULL;
	struct xwe_reply rep;
	__u64 t;
	int err;

	if (!e->send_pending)
		return -EINVAL;
	err = xwe_read_all(e->rep_fd, &rep, sizeof(rep), deadline);
	if (err)
		return err;
	for (__u32 i = 0; i < rep.n; i++) {
		err = xwe_read_all(e->rep_fd, &t, sizeof(t), deadline);
		if (err)
			return err;
		if (ts && i < max)
			ts[i] = t;
	}
	e->send_pending = 0;
	return rep.status ? rep.status : (int)rep.n;
}

int xwe_send_sync(struct xwe *e, struct xwe_cmd *c, bool expect, __u64 *ts,
		  __u32 max)
{
	int err = xwe_send(e, c, expect);

	return err ? err : xwe_send_wait(e, ts, max, 30000);
}

static int xwe_rec_cb(void *ctx, void *data, size_t len)
{
	struct xwe *e = ctx;

	if (len != sizeof(struct xw_wake_rec) || e->nrecs >= XWE_MAX_RECS) {
		e->recs_dropped++;
		return 0;
	}
	memcpy(&e->recs[e->nrecs++], data, sizeof(struct xw_wake_rec));
	return 0;
}

static void xwe_log_cb(enum xw_log_level level, const char *msg, void *ctx)
{
	fprintf(stderr, "libxdpwake: %s\n", msg);
}

int xwe_poll_recs(struct xwe *e)
{
	int before = e->nrecs;

	ring_buffer__consume(e->rb);
	return e->nrecs - before;
}

int xwe_wait(struct xwe *e, unsigned long long deadline_ns)
{
	int before = e->nrecs, r;

	for (int iter = 0; iter < 1000000 && !xwe_stop; iter++) {
		unsigned long long now;
		long ms;

		ring_buffer__consume(e->rb);
		if (e->nrecs > before)
			return e->nrecs - before;
		now = xwu_now_ns();
		if (now >= deadline_ns)
			return 0;
		ms = (long)((deadline_ns - now + 999999ULL) / 1000000ULL);
		r = ring_buffer__poll(e->rb, ms > 1000 ? 1000 : (int)ms);
		if (r < 0 && r != -EINTR)
			return r;
	}
	return e->nrecs - before;
}

/* Check one received frame against what the sender put in it. */
static void xwe_verify(struct xwe *e, const __u8 *p, __u32 len)
{
	const xwe_hdr_u *h;
	__u32 seq, plen;
	int off = xwe_hdr_off(p, (int)len);

	if (off < 0 || len < (__u32)off + XW_HDR_LEN) {
		e->bad_frames++;
		snprintf(e->bad_msg, sizeof(e->bad_msg), "frame of %u bytes without a header", len);
		return;
	}
	h = (const xwe_hdr_u *)(p + off);
	seq = ntohl(h->seq);
	plen = ntohs(h->payload_len);
	if (e->on_frame)
		e->on_frame(e, h, len, e->on_frame_ctx);
	if (h->version != XW_VERSION || ntohs(h->dst_ep) != e->ep ||
	    len < (__u32)off + XW_HDR_LEN + plen) {
		e->bad_frames++;
		snprintf(e->bad_msg, sizeof(e->bad_msg),
			 "seq %u: bad header (version %u, dst_ep %u, payload %u, frame %u)", seq,
			 h->version, ntohs(h->dst_ep), plen, len);
		return;
	}
	if (seq != e->rx_seq) {
		if (e->lenient && (__s32)(seq - e->rx_seq) > 0) {
			e->rx_lost += seq - e->rx_seq;
		} else {
			e->bad_frames++;
			snprintf(e->bad_msg, sizeof(e->bad_msg), "seq %u, expected %u", seq,
				 e->rx_seq);
		}
	}
	e->rx_seq = seq + 1;
	for (__u32 j = 0; j < plen; j++) {
		const __u8 *pl = p + off + XW_HDR_LEN;

		if (pl[j] != xwe_pattern(seq, j)) {
			e->bad_frames++;
			snprintf(e->bad_msg, sizeof(e->bad_msg),
				 "seq %u: payload byte %u is %#x, expected %#x", seq, j, pl[j],
				 xwe_pattern(seq, j));
			return;
		}
	}
}

__u32 xwe_rx_visible(struct xwe *e)
{
	return xsk_cons_nb_avail(&e->rx, XWE_RING_DESCS);
}

/*
 * Give free UMEM frames to the kernel.  The fill ring can look full for a
 * moment after the RX ring shows frames (the kernel publishes its fill
 * consumer index after the RX producer), so frames that do not fit wait in
 * free_addrs for the next call instead of blocking the RX ring.
 */
static void xwe_refill(struct xwe *e)
{
	__u32 n = e->nfree, idx = 0, room;

	if (!n)
		return;
	room = xsk_prod_nb_free(&e->fq, n);
	if (n > room)
		n = room;
	if (!n || xsk_ring_prod__reserve(&e->fq, n, &idx) != n)
		return;
	for (__u32 i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&e->fq, idx + i) = e->free_addrs[--e->nfree];
	xsk_ring_prod__submit(&e->fq, n);
}

int xwe_drain(struct xwe *e)
{
	__u32 idx = 0, n, total = 0;

	for (int round = 0; round < 64; round++) {
		n = xsk_ring_cons__peek(&e->rx, 64, &idx);
		if (!n)
			break;
		for (__u32 i = 0; i < n; i++) {
			const struct xdp_desc *d = xsk_ring_cons__rx_desc(&e->rx, idx + i);

			xwe_verify(e, xsk_umem__get_data(e->umem_area, d->addr), d->len);
			if (e->nfree < XWE_NUM_FRAMES)
				e->free_addrs[e->nfree++] = d->addr & ~(__u64)(XWE_FRAME_SIZE - 1);
		}
		xsk_ring_cons__release(&e->rx, n);
		total += n;
		e->consumed += n;
		__atomic_store_n(&e->sh->consumed, e->consumed, __ATOMIC_RELEASE);
		xwe_refill(e);
	}
	if (!total)
		xwe_refill(e);
	return (int)total;
}

int xwe_drain_until(struct xwe *e, __u64 target, unsigned long long deadline_ns)
{
	int total = 0;

	for (long spin = 0; e->consumed < target && spin < 100000000L && !xwe_stop; spin++) {
		int n = xwe_drain(e);

		total += n;
		if (n)
			continue;
		if ((spin & 63) == 63) {
			if (xwu_now_ns() >= deadline_ns)
				break;
			if (spin > 4096)
				sched_yield();
		}
	}
	return total;
}

struct xw_stats xwe_stats(struct xwe *e, int ep)
{
	XW_OPTS(xw_stats, s);

	if (xw_iface__stats(e->iface, ep, &s))
		memset(&s, 0, sizeof(s));
	return s;
}

static int xwe_setup_xsk(struct xwe *e, const char *ifname, __u16 bind_flags)
{
	struct xsk_umem_config ucfg = {
		.fill_size = XWE_RING_DESCS,
		.comp_size = 64,
		.frame_size = XWE_FRAME_SIZE,
		.frame_headroom = 0,
	};
	struct xsk_socket_config cfg = {
		.rx_size = XWE_RING_DESCS,
		.tx_size = 0,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = bind_flags,
	};
	__u32 idx = 0;
	int err;

	e->umem_len = (size_t)XWE_NUM_FRAMES * XWE_FRAME_SIZE;
	e->umem_area = mmap(NULL, e->umem_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0);
	if (e->umem_area == MAP_FAILED) {
		e->umem_area = NULL;
		return xwe_fail(e, XWE_FAIL, "UMEM mmap: %s", strerror(errno));
	}
	err = xsk_umem__create(&e->umem, e->umem_area, e->umem_len, &e->fq, &e->cq, &ucfg);
	if (err) {
		e->umem = NULL;
		return xwe_fail(e, XWE_SKIP, "AF_XDP unavailable: xsk_umem__create: %s",
				strerror(-err));
	}
	err = xsk_socket__create(&e->xsk, ifname, 0, e->umem, &e->rx, NULL, &cfg);
	if (err) {
		e->xsk = NULL;
		return xwe_fail(e, XWE_SKIP, "AF_XDP socket on %s queue 0 (%s mode): %s", ifname,
				bind_flags & XDP_COPY ? "copy" : "default", strerror(-err));
	}
	if (xsk_ring_prod__reserve(&e->fq, XWE_RING_DESCS, &idx) != XWE_RING_DESCS)
		return xwe_fail(e, XWE_FAIL, "cannot fill the fill ring");
	for (__u32 i = 0; i < XWE_RING_DESCS; i++)
		*xsk_ring_prod__fill_addr(&e->fq, idx + i) = (__u64)i * XWE_FRAME_SIZE;
	xsk_ring_prod__submit(&e->fq, XWE_RING_DESCS);
	e->nfree = 0;
	for (__u32 i = XWE_NUM_FRAMES; i > XWE_RING_DESCS; i--)
		e->free_addrs[e->nfree++] = (__u64)(i - 1) * XWE_FRAME_SIZE;
	return 0;
}

/* Register endpoint e->ep: socket in `xsks`, a ring in `wake_rings`, the
 * `endpoints` entry, the mmapped `shared` entry. */
static int xwe_register(struct xwe *e)
{
	struct xw_ep_entry ep = { .flags = XW_EPF_ACTIVE, .queue_id = 0,
				  .owner_pid = (__u32)getpid() };
	int fd = xsk_socket__fd(e->xsk);
	__u32 q0 = 0, pid = (__u32)getpid();

	if (bpf_map_update_elem(xw_iface__map_fd(e->iface, "xsks"), &e->ep, &fd, BPF_ANY))
		return xwe_fail(e, XWE_FAIL, "xsks[%u]: %s", e->ep, strerror(errno));
	/* Queue 0 in use, as the library's port marks it: its UDP port is
	 * ours (proto.h, "Per-queue UDP ports"). */
	if (bpf_map_update_elem(xw_iface__map_fd(e->iface, "udp_queues"), &q0, &pid, BPF_ANY))
		return xwe_fail(e, XWE_FAIL, "udp_queues[0]: %s", strerror(errno));
	e->ring_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "xwe_wake", 0, 0, XW_RING_BYTES, NULL);
	if (e->ring_fd < 0)
		return xwe_fail(e, XWE_SKIP, "BPF ring buffer: %s", strerror(errno));
	if (bpf_map_update_elem(xw_iface__map_fd(e->iface, "wake_rings"), &e->ep, &e->ring_fd,
				BPF_ANY))
		return xwe_fail(e, XWE_FAIL, "wake_rings[%u]: %s", e->ep, strerror(errno));
	e->rb = ring_buffer__new(e->ring_fd, xwe_rec_cb, e, NULL);
	if (!e->rb)
		return xwe_fail(e, XWE_FAIL, "ring_buffer__new: %s", strerror(errno));
	e->sh = xwi_iface_shared(e->iface, e->ep);
	if (!e->sh)
		return xwe_fail(e, XWE_FAIL, "mmap of the shared map: %s", strerror(errno));
	__atomic_store_n(&e->sh->armed, 0, __ATOMIC_SEQ_CST);
	e->consumed = xwe_produced(e);
	__atomic_store_n(&e->sh->consumed, e->consumed, __ATOMIC_SEQ_CST);
	if (bpf_map_update_elem(xw_iface__map_fd(e->iface, "endpoints"), &e->ep, &ep, BPF_ANY))
		return xwe_fail(e, XWE_FAIL, "endpoints[%u]: %s", e->ep, strerror(errno));
	return 0;
}

int xwe_setup(struct xwe *e, const struct xwe_opts *o)
{
	int err, mode;

	memset(e, 0, sizeof(*e));
	e->cmd_fd = e->rep_fd = e->ring_fd = -1;
	e->ep = o->ep;
	e->veth = !o->iface;
	e->tx_seq = e->rx_seq = 1;
	xwe_g = e;
	if (e->ep >= XW_MAX_ENDPOINTS)
		return xwe_fail(e, XWE_FAIL, "endpoint %u out of range", e->ep);
	if (geteuid() != 0)
		return xwe_fail(e, XWE_SKIP, "needs root (CAP_NET_ADMIN, CAP_BPF, CAP_SYS_ADMIN)");
	xw_set_log(xwe_log_cb, NULL, XW_LOG_ERROR);
	libbpf_set_print(xwt_silent);
	atexit(xwe_atexit);

	if (e->veth) {
		if (unshare(CLONE_NEWNET))
			return xwe_fail(e, XWE_SKIP, "unshare(CLONE_NEWNET): %s", strerror(errno));
		/* No IPv6 autoconfiguration chatter on the link. */
		xwt_no_ipv6();
		if (xwt_sh("ip link set lo up"))
			return xwe_fail(e, XWE_SKIP, "ip link set lo up failed (iproute2 missing?)");
		snprintf(e->rx_if, sizeof(e->rx_if), "xwr%d", (int)(getpid() % 10000));
		snprintf(e->tx_if, sizeof(e->tx_if), "xws%d", (int)(getpid() % 10000));
		if (xwt_sh("ip link add %s type veth peer name %s", e->rx_if, e->tx_if))
			return xwe_fail(e, XWE_SKIP, "cannot create a veth pair (veth module?)");
		if (xwt_sh("ip link set %s up", e->rx_if))
			return xwe_fail(e, XWE_FAIL, "cannot bring %s up", e->rx_if);
		err = xwe_spawn_sender(e);
		if (err)
			return err;
	} else {
		snprintf(e->rx_if, sizeof(e->rx_if), "%s", o->iface ? o->iface : "");
	}
	/* Signal handlers after the fork: the child keeps the defaults. */
	if (e->veth)
		xwt_pin_root();
	xwe_signals(o->graceful_signals);

	err = xwe_if_mac(e->rx_if, e->rx_mac);
	if (err)
		return xwe_fail(e, XWE_FAIL, "%s: %s", e->rx_if, strerror(-err));

	mode = o->mode ? o->mode : (e->veth ? XW_MODE_NATIVE : XW_MODE_AUTO);
	/* Not XW_OPTS(): it can leave stack garbage in the struct's tail
	 * padding, which xw_iface__open() rejects as an unknown field. */
	struct xw_iface_opts io;

	memset(&io, 0, sizeof(io));
	io.sz = sizeof(io);
	io.pin_root = o->pin_root ? o->pin_root : (e->veth ? xwt_pin_root() : NULL);
	io.mode = (enum xw_xdp_mode)mode;
	err = xw_iface__open(e->rx_if, &io, &e->iface);
	if (err)
		return xwe_fail(e, err == -EOPNOTSUPP || err == -EPERM || err == -ENOSYS ? XWE_SKIP
											  : XWE_FAIL,
				"xw_iface__open(%s): %s", e->rx_if, xw_strerror(err));
	e->attached = e->iface->skel != NULL;
	snprintf(e->pin_dir, sizeof(e->pin_dir), "%s", xw_iface__pin_dir(e->iface));

	err = xwe_setup_xsk(e, e->rx_if, e->veth ? XDP_COPY : 0);
	if (err && !e->veth && e->xsk == NULL && e->umem) {
		/* a driver without zero-copy support that also refuses the default */
		xsk_umem__delete(e->umem);
		munmap(e->umem_area, e->umem_len);
		e->umem = NULL;
		err = xwe_setup_xsk(e, e->rx_if, XDP_COPY);
	}
	if (err)
		return err;
	return xwe_register(e);
}

int xwe_teardown(struct xwe *e, bool detach)
{
	struct xw_ep_entry none = {};
	int err = 0;

	/* Detach first: the veth pair vanishes with the sender's namespace. */
	if (e->iface) {
		bpf_map_update_elem(xw_iface__map_fd(e->iface, "endpoints"), &e->ep, &none, BPF_ANY);
		bpf_map_delete_elem(xw_iface__map_fd(e->iface, "xsks"), &e->ep);
		bpf_map_delete_elem(xw_iface__map_fd(e->iface, "wake_rings"), &e->ep);
		if (detach)
			err = xw_iface__detach(e->iface);
		else
			xw_iface__close(e->iface);
		e->iface = NULL;
		e->sh = NULL;
	}
	if (e->child > 0 && e->cmd_fd >= 0) {
		struct xwe_cmd q = { .op = XWE_OP_QUIT };

		xwe_write_all(e->cmd_fd, &q, sizeof(q));
	}
	xwe_kill_child(e);
	ring_buffer__free(e->rb);
	e->rb = NULL;
	if (e->ring_fd >= 0)
		close(e->ring_fd);
	e->ring_fd = -1;
	if (e->xsk)
		xsk_socket__delete(e->xsk);
	e->xsk = NULL;
	if (e->umem)
		xsk_umem__delete(e->umem);
	e->umem = NULL;
	if (e->umem_area)
		munmap(e->umem_area, e->umem_len);
	e->umem_area = NULL;
	if (e->cmd_fd >= 0)
		close(e->cmd_fd);
	if (e->rep_fd >= 0)
		close(e->rep_fd);
	e->cmd_fd = e->rep_fd = -1;
	return err;
}
