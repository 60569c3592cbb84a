// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The fault-injection harness (fault.h): three namespaces, the impairment
 * program on the middle's ingresses (tests/bpf/impair.bpf.c), the relay
 * process (delay, reordering), host processes and their channel.
 */
#include "fault.h"
#include "rand.h"
#include "impair.skel.h"

static __u64 xwf_exit_seed;
static pid_t xwf_exit_owner;

struct xwf_rq_frame {
	__u32 len;
	__u64 arrival, release;
	__u8 *buf;
};

struct xwf_rq {
	struct xwf_relay_cfg cfg;
	__u32 seq_seen;
	__u64 index;	  /* frames since the config          */
	__u64 rng;
	__u32 head, count, qmax;
	__u64 last_release;
	struct xwf_rq_frame q[XWF_RELAY_QMAX];
	struct xwf_rq_frame held;
	int held_valid;
	__u32 held_left;
	__u64 held_deadline;
	__u8 *store;	  /* XWF_RELAY_QMAX + 1 slots */
	__u32 slot;
	int out_ifindex;
};

#define XWF_RSTAT(t, dir, f) xwf_rstat(t, dir, offsetof(struct xwf_relay_stats, f))

struct xwf_run_arg {
	xwf_fn fn;
	void *arg;
	int self, chan, other;
};

static void xwf_print_seed(const struct xwf_topo *t)
{
	fprintf(stderr, "fault-injection seed 0x%llx (XWF_SEED=0x%llx repeats it)\n",
		(unsigned long long)t->seed, (unsigned long long)t->seed);
}

static void xwf_atexit(void)
{
	if (xwt_failures && getpid() == xwf_exit_owner)
		fprintf(stderr, "fault-injection seed 0x%llx (XWF_SEED=0x%llx repeats it)\n",
			(unsigned long long)xwf_exit_seed, (unsigned long long)xwf_exit_seed);
}

static int xwf_libbpf_silent(enum libbpf_print_level l, const char *f, va_list ap)
{
	if (l == LIBBPF_WARN && getenv("XWF_VERBOSE"))
		return vfprintf(stderr, f, ap);
	return 0;
}

void xwf_enter(struct xwf_topo *t, int host)
{
	REQUIRE(host >= 0 && host <= 2, "xwf_enter: host %d", host);
	if (t->host == host)
		return;
	REQUIRE(setns(t->ns[host], CLONE_NEWNET) == 0, "setns to %c: %s", "ABM"[host],
		strerror(errno));
	t->host = host;
}

int xwf_socket(struct xwf_topo *t, int host, int domain, int type, int proto)
{
	int prev = t->host, fd, err;

	xwf_enter(t, host);
	fd = socket(domain, type, proto);
	err = errno;
	xwf_enter(t, prev);
	errno = err;
	return fd;
}

__attribute__((format(printf, 3, 4))) int xwf_sh(struct xwf_topo *t, int host,
						 const char *fmt, ...)
{
	char cmd[4096];
	int prev = t->host, rc;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	xwf_enter(t, host);
	rc = xwt_sh("%s", cmd);
	xwf_enter(t, prev);
	return rc;
}

int xwf_ifindex(struct xwf_topo *t, int host)
{
	int prev = t->host, idx;

	xwf_enter(t, host);
	idx = (int)if_nametoindex(t->ifname[host]);
	xwf_enter(t, prev);
	return idx;
}

void xwf_ns_basics(void)
{
	xwt_no_ipv6();
	REQUIRE(xwt_sh("ip link set lo up") == 0, "lo up");
}

int xwf_running(const char *ifname)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), ok = 0;

	if (fd < 0)
		return 0;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0)
		ok = (ifr.ifr_flags & IFF_UP) && (ifr.ifr_flags & IFF_RUNNING);
	close(fd);
	return ok;
}

void xwf_set(struct xwf_topo *t, int dir, const struct xwf_cfg *cfg)
{
	struct xwf_dir v;
	__u32 key = (__u32)dir;

	REQUIRE(dir == XWF_A_TO_B || dir == XWF_B_TO_A, "xwf_set: direction %d", dir);
	memset(&v, 0, sizeof(v));
	if (cfg)
		v.cfg = *cfg;
	REQUIRE(v.cfg.ndrop <= XWF_DROP_LIST_MAX, "xwf_set: %u drop list entries",
		v.cfg.ndrop);
	REQUIRE(bpf_map_update_elem(t->dirs_fd, &key, &v, BPF_F_LOCK) == 0, "xwf_set: %s",
		strerror(errno));
}

static struct xwf_global xwf_global_get(struct xwf_topo *t)
{
	struct xwf_global g;
	__u32 key = 0;

	REQUIRE(bpf_map_lookup_elem(t->global_fd, &key, &g) == 0, "global map: %s",
		strerror(errno));
	return g;
}

static void xwf_global_put(struct xwf_topo *t, const struct xwf_global *g)
{
	__u32 key = 0;

	REQUIRE(bpf_map_update_elem(t->global_fd, &key, g, 0) == 0, "global map: %s",
		strerror(errno));
}

void xwf_set_seed(struct xwf_topo *t, __u64 seed)
{
	struct xwf_global g = xwf_global_get(t);

	g.seed = seed;
	xwf_global_put(t, &g);
	t->seed = seed;
	xwf_exit_seed = seed;
}

struct xwf_counters xwf_counters(struct xwf_topo *t, int dir)
{
	struct xwf_counters c;
	__u32 key = (__u32)dir;

	REQUIRE(bpf_map_lookup_elem(t->counters_fd, &key, &c) == 0, "counters: %s",
		strerror(errno));
	return c;
}

void xwf_reset_counters(struct xwf_topo *t)
{
	struct xwf_counters c;

	memset(&c, 0, sizeof(c));
	for (__u32 key = 0; key < 2; key++)
		REQUIRE(bpf_map_update_elem(t->counters_fd, &key, &c, 0) == 0, "counters: %s",
			strerror(errno));
}

void xwf_blackhole_in(struct xwf_cfg *c, __u32 start_ms, __u32 dur_ms)
{
	__u64 now = xwu_now_ns();

	c->bh_start_ns = now + start_ms * 1000000ULL;
	c->bh_end_ns = c->bh_start_ns + dur_ms * 1000000ULL;
}

void xwf_blackhole_every(struct xwf_cfg *c, __u32 period_ms, __u32 on_ms)
{
	c->bh_base_ns = xwu_now_ns();
	c->bh_period_ns = period_ms * 1000000ULL;
	c->bh_on_ns = on_ms * 1000000ULL;
}

void xwf_relay(struct xwf_topo *t, int dir, const struct xwf_relay_cfg *rc)
{
	struct xwf_global g;

	REQUIRE(dir == XWF_A_TO_B || dir == XWF_B_TO_A, "xwf_relay: direction %d", dir);
	if (rc) {
		REQUIRE(rc->delay_us <= XWF_RELAY_DELAY_MAX && rc->jitter_us <= XWF_RELAY_DELAY_MAX &&
				rc->hold_max_us <= XWF_RELAY_DELAY_MAX,
			"xwf_relay: delay/jitter/hold above %u us", XWF_RELAY_DELAY_MAX);
		__atomic_add_fetch(&t->shm->seq[dir], 1, __ATOMIC_SEQ_CST);
		t->shm->cfg[dir] = *rc;
		__atomic_add_fetch(&t->shm->seq[dir], 1, __ATOMIC_SEQ_CST);
	}
	g = xwf_global_get(t);
	g.relay_on[dir] = rc != NULL;
	xwf_global_put(t, &g);
}

struct xwf_relay_stats xwf_relay_stats(struct xwf_topo *t, int dir)
{
	struct xwf_relay_stats s;
	__u64 *dst = (__u64 *)&s, *src = (__u64 *)&t->shm->stats[dir];

	for (size_t i = 0; i < sizeof(s) / 8; i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
	return s;
}

int xwf_relay_drain(struct xwf_topo *t, int dir, int timeout_ms)
{
	__u64 end = xwu_now_ns() + (__u64)timeout_ms * 1000000ULL;

	for (;;) {
		struct xwf_relay_stats s = xwf_relay_stats(t, dir);

		/* received is counted before a frame is queued (or held),
		 * sent only once sendto() returned, after the peer got it */
		if (s.received == s.sent + s.overflow + s.oversize + s.errors)
			return 0;
		if (xwu_now_ns() > end)
			return -ETIMEDOUT;
		usleep(1000);
	}
}

static void xwf_rstat(struct xwf_topo *t, int dir, size_t field_off)
{
	__u64 *p = (__u64 *)((char *)&t->shm->stats[dir] + field_off);

	__atomic_add_fetch(p, 1, __ATOMIC_RELAXED);
}

static void xwf_rq_push(struct xwf_topo *t, int dir, struct xwf_rq *q, const __u8 *buf,
			__u32 len, __u64 arrival)
{
	struct xwf_rq_frame *f;
	__u64 rel = arrival + q->cfg.delay_us * 1000ULL;
	__u32 tail;

	if (q->count >= q->qmax) {
		XWF_RSTAT(t, dir, overflow);
		return;
	}
	if (q->cfg.jitter_us) {
		rel += (xwu_xorshift64(&q->rng) % (q->cfg.jitter_us + 1ULL)) * 1000ULL;
	}
	if (rel < q->last_release)
		rel = q->last_release;
	q->last_release = rel;
	tail = (q->head + q->count) % XWF_RELAY_QMAX;
	f = &q->q[tail];
	memcpy(f->buf, buf, len);
	f->len = len;
	f->arrival = arrival;
	f->release = rel;
	q->count++;
}

static void xwf_rq_release_held(struct xwf_topo *t, int dir, struct xwf_rq *q)
{
	if (!q->held_valid)
		return;
	q->held_valid = 0;
	xwf_rq_push(t, dir, q, q->held.buf, q->held.len, q->held.arrival);
}

static void xwf_rq_frame_in(struct xwf_topo *t, int dir, struct xwf_rq *q,
			    const __u8 *buf, __u32 len, __u64 now)
{
	__u64 i = q->index++;

	if (q->cfg.reorder_every && q->cfg.reorder_by && i % q->cfg.reorder_every == 0 &&
	    !q->held_valid) {
		memcpy(q->held.buf, buf, len);
		q->held.len = len;
		q->held.arrival = now;
		q->held_valid = 1;
		q->held_left = q->cfg.reorder_by;
		q->held_deadline = now + (q->cfg.hold_max_us ? q->cfg.hold_max_us
							     : XWF_RELAY_HOLD_DEF) * 1000ULL;
		XWF_RSTAT(t, dir, held);
		return;
	}
	xwf_rq_push(t, dir, q, buf, len, now);
	if (q->held_valid && --q->held_left == 0)
		xwf_rq_release_held(t, dir, q);
}

/* A new config from xwf_relay() (seqlock): frame numbers restart. */
static void xwf_rq_refresh(struct xwf_topo *t, int dir, struct xwf_rq *q)
{
	__u32 s1 = __atomic_load_n(&t->shm->seq[dir], __ATOMIC_ACQUIRE), s2;
	struct xwf_relay_cfg c;

	if (s1 == q->seq_seen || (s1 & 1))
		return;
	c = t->shm->cfg[dir];
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	s2 = __atomic_load_n(&t->shm->seq[dir], __ATOMIC_ACQUIRE);
	if (s1 != s2)
		return;
	xwf_rq_release_held(t, dir, q);
	q->cfg = c;
	q->seq_seen = s1;
	q->index = 0;
	q->qmax = c.queue_max && c.queue_max < XWF_RELAY_QMAX ? c.queue_max : XWF_RELAY_QMAX;
}

/* The relay process: forked by xwf_setup() in M; never returns. */
__attribute__((noreturn)) static void xwf_relay_main(struct xwf_topo *t)
{
	static struct xwf_rq rq[2];
	struct pollfd pfd[2];
	struct sockaddr_ll sll;
	__u32 slot = t->mtu + 64;
	static __u8 rbuf[65536];
	int txfd, big = 8 << 20, one = 1;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != t->owner)
		_exit(0);
	prctl(PR_SET_TIMERSLACK, 1UL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	txfd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (txfd < 0)
		_exit(2);
	for (int dir = 0; dir < 2; dir++) {
		struct xwf_rq *q = &rq[dir];
		/* Protocol 0 until bound: a socket made with ETH_P_ALL takes
		 * the frames of every interface of M until its bind, and the
		 * relay forwarded those it had caught there - to the host
		 * they had reached already (duplicates in a clean phase). */
		int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

		if (fd < 0)
			_exit(2);
		setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
		setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
		memset(&sll, 0, sizeof(sll));
		sll.sll_family = AF_PACKET;
		sll.sll_protocol = htons(ETH_P_ALL);
		sll.sll_ifindex = t->m_ifindex[2 + dir];
		if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)))
			_exit(2);
		pfd[dir].fd = fd;
		pfd[dir].events = POLLIN;
		q->store = calloc(XWF_RELAY_QMAX + 1, slot);
		if (!q->store)
			_exit(2);
		for (int i = 0; i < XWF_RELAY_QMAX; i++)
			q->q[i].buf = q->store + (size_t)i * slot;
		q->held.buf = q->store + (size_t)XWF_RELAY_QMAX * slot;
		q->slot = slot;
		q->qmax = XWF_RELAY_QMAX;
		q->rng = (t->seed ^ (0x9E3779B97F4A7C15ULL * (dir + 1))) | 1;
		q->out_ifindex = t->m_ifindex[dir ^ 1];
		q->seq_seen = ~0u;
	}
	__atomic_store_n(&t->shm->ready, 1, __ATOMIC_RELEASE);
	for (;;) {
		__u64 now = xwu_now_ns(), next = now + 20000000ULL;
		struct timespec ts;

		if (getppid() != t->owner)
			_exit(0);
		for (int dir = 0; dir < 2; dir++) {
			struct xwf_rq *q = &rq[dir];

			xwf_rq_refresh(t, dir, q);
			if (q->held_valid && now >= q->held_deadline) {
				XWF_RSTAT(t, dir, held_late);
				xwf_rq_release_held(t, dir, q);
			}
			while (q->count && q->q[q->head].release <= now) {
				struct xwf_rq_frame *f = &q->q[q->head];

				memset(&sll, 0, sizeof(sll));
				sll.sll_family = AF_PACKET;
				sll.sll_ifindex = q->out_ifindex;
				sll.sll_halen = 6;
				memcpy(sll.sll_addr, f->buf, 6);
				if (sendto(txfd, f->buf, f->len, 0, (struct sockaddr *)&sll,
					   sizeof(sll)) == (ssize_t)f->len)
					XWF_RSTAT(t, dir, sent);
				else
					XWF_RSTAT(t, dir, errors);
				q->head = (q->head + 1) % XWF_RELAY_QMAX;
				q->count--;
			}
			if (q->count && q->q[q->head].release < next)
				next = q->q[q->head].release;
			if (q->held_valid && q->held_deadline < next)
				next = q->held_deadline;
		}
		now = xwu_now_ns();
		if (next < now)
			next = now;
		ts.tv_sec = (time_t)((next - now) / 1000000000ULL);
		ts.tv_nsec = (long)((next - now) % 1000000000ULL);
		if (ppoll(pfd, 2, &ts, NULL) <= 0)
			continue;
		now = xwu_now_ns();
		for (int dir = 0; dir < 2; dir++) {
			if (!(pfd[dir].revents & POLLIN))
				continue;
			for (int k = 0; k < 256; k++) {
				struct sockaddr_ll from;
				socklen_t fl = sizeof(from);
				ssize_t n = recvfrom(pfd[dir].fd, rbuf, sizeof(rbuf), MSG_TRUNC,
						     (struct sockaddr *)&from, &fl);

				if (n < 0)
					break;
				if (from.sll_pkttype == PACKET_OUTGOING)
					continue;
				XWF_RSTAT(t, dir, received);
				if ((size_t)n > slot || (size_t)n > sizeof(rbuf)) {
					XWF_RSTAT(t, dir, oversize);
					continue;
				}
				xwf_rq_refresh(t, dir, &rq[dir]);
				xwf_rq_frame_in(t, dir, &rq[dir], rbuf, (__u32)n, now);
			}
		}
	}
}

static int xwf_tc_attach(int ifindex, int prog_fd)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = BPF_TC_INGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .prog_fd = prog_fd);
	int err = bpf_tc_hook_create(&hook);

	if (err && err != -EEXIST)
		return err;
	return bpf_tc_attach(&hook, &opts);
}

void xwf_setup(struct xwf_topo *t, const struct xwf_opts *o)
{
	static const __u8 macs[4][6] = { { 0x02, 0x78, 0, 0, 0, 0x0a }, { 0x02, 0x78, 0, 0, 0, 0x0b },
					 { 0x02, 0x78, 0, 0, 1, 0x0a }, { 0x02, 0x78, 0, 0, 1, 0x0b } };
	const char *mif[4] = { "xwfma", "xwfmb", "xwfpa1", "xwfpb1" };
	struct xwf_global g;
	const char *env;
	char nsp[2][64];
	int err, prog_fd;

	xwt_require_root();
	memset(t, 0, sizeof(*t));
	t->self = -1;
	t->chan = -1;
	t->owner = getpid();
	t->mtu = o && o->mtu ? o->mtu : 1500;
	t->seed = o ? o->seed : 0;
	env = getenv("XWF_SEED");
	if (env && *env)
		t->seed = strtoull(env, NULL, 0);
	if (!t->seed) {
		if (getrandom(&t->seed, sizeof(t->seed), 0) != sizeof(t->seed))
			t->seed = xwu_now_ns() ^ ((__u64)getpid() << 32);
		t->seed |= 1;
	}
	xwf_exit_seed = t->seed;
	xwf_exit_owner = getpid();
	atexit(xwf_atexit);
	if (!(o && o->quiet))
		printf("fault-injection seed 0x%llx (XWF_SEED=0x%llx repeats it)\n",
		       (unsigned long long)t->seed, (unsigned long long)t->seed);
	snprintf(t->ifname[0], IF_NAMESIZE, "xwfa");
	snprintf(t->ifname[1], IF_NAMESIZE, "xwfb");
	memcpy(t->mac[0], macs[0], 6);
	memcpy(t->mac[1], macs[1], 6);
	snprintf(t->ip[0], sizeof(t->ip[0]), XWF_IP_A);
	snprintf(t->ip[1], sizeof(t->ip[1]), XWF_IP_B);

	/* Three anonymous namespaces, each held by an fd: A, B, then M. */
	for (int h = 0; h < 3; h++) {
		if (unshare(CLONE_NEWNET))
			xwt_skip("unshare(CLONE_NEWNET): %s", strerror(errno));
		t->ns[h] = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		REQUIRE(t->ns[h] >= 0, "open netns: %s", strerror(errno));
		xwf_ns_basics();
	}
	t->host = XWF_HOST_M;
	for (int h = 0; h < 2; h++)
		snprintf(nsp[h], sizeof(nsp[h]), "/proc/%d/fd/%d", (int)getpid(), t->ns[h]);
#define XWF_MAC(m) m[0], m[1], m[2], m[3], m[4], m[5]
#define XWF_MACF "%02x:%02x:%02x:%02x:%02x:%02x"
	if (xwt_sh("ip link add xwfma address " XWF_MACF " mtu %u type veth peer name xwfa address "
		   XWF_MACF " mtu %u",
		   XWF_MAC(macs[2]), t->mtu, XWF_MAC(macs[0]), t->mtu))
		xwt_skip("cannot create a veth pair");
	REQUIRE(xwt_sh("ip link add xwfmb address " XWF_MACF " mtu %u type veth peer name xwfb "
		       "address " XWF_MACF " mtu %u",
		       XWF_MAC(macs[3]), t->mtu, XWF_MAC(macs[1]), t->mtu) == 0,
		"veth B");
	REQUIRE(xwt_sh("ip link add xwfpa0 mtu %u type veth peer name xwfpa1 mtu %u && "
		       "ip link add xwfpb0 mtu %u type veth peer name xwfpb1 mtu %u",
		       t->mtu, t->mtu, t->mtu, t->mtu) == 0,
		"relay pipes");
	REQUIRE(xwt_sh("ip link set xwfa netns %s && ip link set xwfb netns %s", nsp[0], nsp[1]) == 0,
		"move the host ends");
	REQUIRE(xwt_sh("for i in xwfma xwfmb xwfpa0 xwfpa1 xwfpb0 xwfpb1; do "
		       "ip link set $i up || exit 1; done") == 0,
		"M links up");
	for (int i = 0; i < 4; i++) {
		t->m_ifindex[i] = (int)if_nametoindex(mif[i]);
		REQUIRE(t->m_ifindex[i] > 0, "%s: no ifindex", mif[i]);
	}
	for (int h = 0; h < 2; h++) {
		xwf_enter(t, h);
		REQUIRE(xwt_sh("ip addr add %s/24 dev %s && ip link set %s up", t->ip[h],
			       t->ifname[h], t->ifname[h]) == 0,
			"%s up", t->ifname[h]);
	}
	xwf_enter(t, XWF_HOST_M);

	/* The impairment program on M's two ingresses. */
	libbpf_set_print(xwf_libbpf_silent);
	t->skel = impair_bpf__open_and_load();
	if (!t->skel)
		xwt_skip("cannot load tests/bpf/impair.bpf.c: %s", strerror(errno));
	REQUIRE(bpf_map__value_size(t->skel->maps.xwf_dirs) == sizeof(struct xwf_dir) &&
			bpf_map__value_size(t->skel->maps.xwf_counters) ==
				sizeof(struct xwf_counters) &&
			bpf_map__value_size(t->skel->maps.xwf_global) == sizeof(struct xwf_global),
		"impair.bpf.o is older than tests/fault_maps.h: rebuild it");
	t->dirs_fd = bpf_map__fd(t->skel->maps.xwf_dirs);
	t->counters_fd = bpf_map__fd(t->skel->maps.xwf_counters);
	t->global_fd = bpf_map__fd(t->skel->maps.xwf_global);
	memset(&g, 0, sizeof(g));
	g.seed = t->seed;
	g.ifindex[0] = (__u32)t->m_ifindex[0];
	g.ifindex[1] = (__u32)t->m_ifindex[1];
	g.pipe[0] = if_nametoindex("xwfpa0");
	g.pipe[1] = if_nametoindex("xwfpb0");
	g.ethertype = XW_DEFAULT_ETHERTYPE;
	g.udp_port = XW_DEFAULT_UDP_PORT;
	xwf_global_put(t, &g);
	prog_fd = bpf_program__fd(t->skel->progs.xwf_impair);
	for (int i = 0; i < 2; i++) {
		err = xwf_tc_attach(t->m_ifindex[i], prog_fd);
		if (err)
			xwt_skip("tc clsact ingress on %s: %s", mif[i], strerror(-err));
	}

	/* The relay. */
	t->shm = mmap(NULL, sizeof(*t->shm), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		      -1, 0);
	REQUIRE(t->shm != MAP_FAILED, "mmap: %s", strerror(errno));
	memset(t->shm, 0, sizeof(*t->shm));
	fflush(NULL);
	t->relay_pid = fork();
	REQUIRE(t->relay_pid >= 0, "fork: %s", strerror(errno));
	if (t->relay_pid == 0)
		xwf_relay_main(t);
	/* Its sockets bound before any phase can turn it on (10 s bound) */
	for (int i = 0; i < 10000 && !__atomic_load_n(&t->shm->ready, __ATOMIC_ACQUIRE); i++) {
		REQUIRE(waitpid(t->relay_pid, NULL, WNOHANG) == 0, "the relay exited at start");
		usleep(1000);
	}
	REQUIRE(__atomic_load_n(&t->shm->ready, __ATOMIC_ACQUIRE), "the relay not ready after 10 s");

	/* Carrier on both host ends. */
	for (int h = 0; h < 2; h++) {
		int up = 0;

		xwf_enter(t, h);
		for (int i = 0; i < 200 && !(up = xwf_running(t->ifname[h])); i++)
			usleep(10000);
		REQUIRE(up, "%s: no carrier after 2 s", t->ifname[h]);
	}
	xwf_enter(t, XWF_HOST_M);
}

void xwf_clear(struct xwf_topo *t)
{
	for (int d = 0; d < 2; d++) {
		xwf_set(t, d, NULL);
		xwf_relay(t, d, NULL);
	}
}

void xwf_teardown(struct xwf_topo *t)
{
	if (getpid() != t->owner)
		return;
	if (t->relay_pid > 0) {
		kill(t->relay_pid, SIGKILL);
		waitpid(t->relay_pid, NULL, 0);
		t->relay_pid = 0;
	}
	if (t->skel) {
		impair_bpf__destroy(t->skel);
		t->skel = NULL;
	}
	if (t->shm && t->shm != MAP_FAILED)
		munmap(t->shm, sizeof(*t->shm));
	t->shm = NULL;
	for (int h = 0; h < 3; h++)
		if (t->ns[h] > 0)
			close(t->ns[h]);
	memset(t->ns, 0, sizeof(t->ns));
}

pid_t xwf_spawn(struct xwf_topo *t, int host, xwf_fn fn, void *arg)
{
	pid_t parent = getpid(), pid;

	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0, "fork: %s", strerror(errno));
	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	xwt_pin_dir[0] = 0; /* own bpffs pins (xwt_pin_root()) */
	xwt_failures = 0;   /* the child's own verdict, not the parent's */
	xwf_enter(t, host);
	{
		int rc = fn(t, arg);

		exit(rc ? rc : xwt_failures ? 1 : 0);
	}
}

int xwf_join(struct xwf_topo *t, pid_t pid, int timeout_ms)
{
	__u64 end = xwu_now_ns() + (__u64)timeout_ms * 1000000ULL;
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		if (r < 0)
			return -1;
		if (xwu_now_ns() > end) {
			fprintf(stderr, "fault harness: child %d still running after %d ms: killed\n",
				(int)pid, timeout_ms);
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		usleep(2000);
	}
}

static int xwf_run_child(struct xwf_topo *t, void *p)
{
	struct xwf_run_arg *ra = p;

	close(ra->other);
	t->self = ra->self;
	t->chan = ra->chan;
	return ra->fn(t, ra->arg);
}

int xwf_run(struct xwf_topo *t, xwf_fn fn_a, xwf_fn fn_b, void *arg,
	    int timeout_ms)
{
	struct xwf_run_arg ra[2];
	pid_t pid[2];
	int sv[2], rc[2];

	REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0, "socketpair");
	for (int h = 0; h < 2; h++) {
		ra[h].fn = h ? fn_b : fn_a;
		ra[h].arg = arg;
		ra[h].self = h;
		ra[h].chan = sv[h];
		ra[h].other = sv[h ^ 1];
		pid[h] = xwf_spawn(t, h, xwf_run_child, &ra[h]);
	}
	close(sv[0]);
	close(sv[1]);
	{
		__u64 end = xwu_now_ns() + (__u64)timeout_ms * 1000000ULL;

		for (int h = 0; h < 2; h++) {
			__u64 now = xwu_now_ns();

			rc[h] = xwf_join(t, pid[h], now < end ? (int)((end - now) / 1000000ULL) : 0);
		}
	}
	if (rc[0] || rc[1]) {
		fprintf(stderr, "fault harness: host A exit %d, host B exit %d\n", rc[0], rc[1]);
		xwf_print_seed(t);
		/* A host that died left its XDP program attached (its pins
		 * went with its pin directory): the next run starts clean. */
		for (int h = 0; h < 2; h++)
			xwf_sh(t, h, "ip link set dev %s xdp off 2>/dev/null", t->ifname[h]);
		return 1;
	}
	return 0;
}
