// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * xdp_cost - per-frame cost of the compiled XDP wake engine, measured with
 * BPF_PROG_TEST_RUN, next to a pass-only baseline program in the same run.
 *
 * Both skeletons are loaded directly with libbpf (no attach, no pins).  The
 * engine's maps are filled through the skeleton's fds: knob defaults, one
 * active endpoint, a wake ring buffer, and a real AF_XDP socket (copy mode,
 * on a veth inside a private network namespace that disappears with the
 * process) in the XSKMAP so that redirects succeed.
 *
 * Paths (each checked against the stats map, exit 1 if one misbehaves):
 *   a   pass-only program, foreign IPv4/TCP frame         (repeat = N)
 *   b   xw_xdp, same foreign frame -> XDP_PASS             (repeat = N)
 *   c   xw_xdp, MEDIUM fragment, marker policy, unarmed    (repeat = N)
 *   p   xw_xdp, SMALL LAT to a connected endpoint (XW_EPF_CONNS, a
 *       matching `conns` entry), marker, unarmed: the frame of a spinning
 *       ping-pong                                          (repeat = N)
 *   m   the same with a MEDIUM LAT fragment (last of 4)    (repeat = N)
 *   r   the raw AF_XDP bench program (bench/bpf/afxdp_raw.bpf.c), a bare
 *       redirect: the floor for p and m                   (repeat = N)
 *   x   xw_xdp, ours but bad version -> XDP_DROP           (repeat = N)
 *   z   xw_xdp, p's frame with another session -> XDP_DROP (the `conns`
 *       check at work)                                     (repeat = N)
 *   e   xw_xdp, stream policy, LAT|MORE inside a burst     (repeat = N)
 *   a1  pass-only program, foreign frame                   (repeat = 1 loop)
 *   b1  xw_xdp, foreign frame                              (repeat = 1 loop)
 *   d   xw_xdp, SMALL LAT, marker, armed: wake now         (repeat = 1 loop)
 *   e1  xw_xdp, stream, LAT|MORE, new batch: deferral start (repeat = 1 loop)
 *
 * Before measuring, the program's memo of its last `conns` lookup is checked
 * to follow every change that increments conns_gen (check_conn_memo).
 *
 * With repeat = N only the first iteration would find the receiver armed,
 * so the wake path is measured one frame per call, re-arming in between;
 * its baseline is the pass-only program measured the same way.
 *
 * Exit: 0 ok, 1 a path did not do what it claims (or setup failed),
 * 2 usage, 77 skipped (not root, no netns/veth/AF_XDP).
 */
#include <errno.h>
#include <endian.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/tcp.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/xsk.h>

#include "xdpwake_maps.h"
#include "xdpwake.skel.h"
#include "internal.h"
#include "xwt_xdp.h" /* the BPF_PROG_TEST_RUN harness, knob defaults, stats */
#include "bench_pass.skel.h"
#include "afxdp_raw.skel.h"
#include "json.h"
#include "shell.h"
#include "stats.h"

#define BENCH_EP 1u		/* endpoint id used by every xdpwake frame */
#define BENCH_PEER_EP 7u	/* the sending peer's endpoint id (src_ep) */
#define BENCH_SESSION 0x5e55100du /* the peer's session in every frame */
#define RAW_ETHERTYPE 0x88B6	/* afxdp_raw.bpf.c's AFXDP_RAW_ETHERTYPE */
#define IF_A "xa"
#define IF_B "xb"
#define UMEM_FRAMES 4096u
#define UMEM_FRAME_SIZE XSK_UMEM__DEFAULT_FRAME_SIZE
#define FRAME_MAX 2048
#define TARGET_RATIO 1.10
#define MAX_REPS 1000

/* ------------------------------------------------------------------ */
/* Options                                                             */
/* ------------------------------------------------------------------ */

static struct {
	long repeat;	/* iterations per BPF_PROG_TEST_RUN call (bulk paths) */
	long reps;	/* repetitions of every path                            */
	long calls;	/* calls per repetition for the repeat=1 paths          */
	int json;
	int quick;
} opt = {
	.repeat = 1000000,
	.reps = 7,
	.calls = 20000,
};

static char command_line[1024];

static void usage(FILE *f, const char *argv0)
{
	fprintf(f,
		"usage: %s [--repeat N] [--reps N] [--calls N] [--quick] [--json]\n"
		"  Per-frame cost of the xdpwake XDP program (BPF_PROG_TEST_RUN) against a\n"
		"  pass-only baseline measured in the same run.  Needs root.\n"
		"  --repeat N  iterations per test run for the bulk paths (default %ld)\n"
		"  --reps N    repetitions of each path; median/min/max reported (default %ld)\n"
		"  --calls N   test runs of one frame per repetition for the repeat=1 paths\n"
		"              (wake-now path and its baseline; default %ld)\n"
		"  --quick     --repeat 20000 --reps 3 --calls 2000 (runs in well under 5 s)\n"
		"  --json      machine-readable output on stdout\n"
		"exit: 0 ok, 1 a path misbehaved or setup failed, 2 usage, 77 skipped\n",
		argv0, opt.repeat, opt.reps, opt.calls);
}

static int parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static void parse_args(int argc, char **argv)
{
	long repeat = -1, reps = -1, calls = -1;
	size_t off = 0;

	for (int i = 0; i < argc && off < sizeof(command_line) - 1; i++) {
		int n = snprintf(command_line + off, sizeof(command_line) - off, "%s%s",
				 i ? " " : "", argv[i]);
		if (n < 0)
			break;
		off += (size_t)n;
	}
	if (off >= sizeof(command_line))
		off = sizeof(command_line) - 1;
	command_line[off] = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		long *dst = NULL, max = 0;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout, argv[0]);
			exit(0);
		} else if (!strcmp(a, "--json")) {
			opt.json = 1;
			continue;
		} else if (!strcmp(a, "--quick")) {
			opt.quick = 1;
			continue;
		} else if (!strcmp(a, "--repeat")) {
			dst = &repeat;
			max = INT_MAX;
		} else if (!strcmp(a, "--reps")) {
			dst = &reps;
			max = MAX_REPS;
		} else if (!strcmp(a, "--calls")) {
			dst = &calls;
			max = 100000000;
		} else {
			fprintf(stderr, "xdp_cost: unknown option '%s'\n", a);
			usage(stderr, argv[0]);
			exit(2);
		}
		if (i + 1 >= argc || parse_long(argv[i + 1], 1, max, dst)) {
			fprintf(stderr, "xdp_cost: %s needs a number in 1..%ld\n", a, max);
			exit(2);
		}
		i++;
	}
	if (opt.quick) {
		opt.repeat = 20000;
		opt.reps = 3;
		opt.calls = 2000;
	}
	if (repeat > 0)
		opt.repeat = repeat;
	if (reps > 0)
		opt.reps = reps;
	if (calls > 0)
		opt.calls = calls;
}

/* ------------------------------------------------------------------ */
/* Setup                                                               */
/* ------------------------------------------------------------------ */

struct bench {
	struct xw_xdp_bpf *xw;
	struct bench_pass_bpf *pass;
	struct afxdp_raw_bpf *raw;
	int xw_fd, pass_fd, raw_fd;
	int stats_fd, shared_fd, wstate_fd, policy_fd, coal_fd, ep_fd, conns_fd;
	int ring_fd;
	struct ring_buffer *rb;
	volatile struct xw_shared *sh; /* mmap of `shared`, whole array */
	size_t sh_len;
	int ncpus;
	int ifindex;
	void *umem_area;
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct xsk_ring_prod fill, tx;
	struct xsk_ring_cons comp, rx;
	/* ring records seen since the last reset, by kind and reason */
	unsigned long long rec_wake[XW_WAKE_REASON_MAX];
	unsigned long long rec_other;
};

static int ring_cb(void *ctx, void *data, size_t len)
{
	struct bench *b = ctx;
	const struct xw_wake_rec *r = data;

	if (len < sizeof(*r) || r->kind != XW_REC_WAKE || r->reason >= XW_WAKE_REASON_MAX)
		b->rec_other++;
	else
		b->rec_wake[r->reason]++;
	return 0;
}

static int set_knob(int fd, __u32 key, __u32 val)
{
	return bpf_map_update_elem(fd, &key, &val, BPF_ANY) ? -errno : 0;
}

/* Private netns, veth pair, AF_XDP socket bound to xa queue 0 (copy mode). */
static void setup_netns_xsk(struct bench *b)
{
	struct xsk_socket_config cfg = {
		.rx_size = XSK_RING_CONS__DEFAULT_NUM_DESCS,
		.tx_size = XSK_RING_PROD__DEFAULT_NUM_DESCS,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.xdp_flags = 0,
		.bind_flags = XDP_COPY,
	};
	size_t len = (size_t)UMEM_FRAMES * UMEM_FRAME_SIZE;
	int err;

	if (unshare(CLONE_NEWNET))
		xwt_skip("unshare(CLONE_NEWNET): %s", strerror(errno));
	if (xwu_sh("ip link set lo up"))
		xwt_skip("'ip link set lo up' failed (iproute2 missing?)");
	if (xwu_sh("ip link add " IF_A " type veth peer name " IF_B) ||
	    xwu_sh("ip link set " IF_A " up") || xwu_sh("ip link set " IF_B " up"))
		xwt_skip("cannot create the veth pair " IF_A "/" IF_B);
	b->ifindex = (int)if_nametoindex(IF_A);
	if (!b->ifindex)
		xwt_skip("if_nametoindex(" IF_A "): %s", strerror(errno));

	b->umem_area = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0);
	if (b->umem_area == MAP_FAILED)
		xwt_skip("mmap umem: %s", strerror(errno));
	err = xsk_umem__create(&b->umem, b->umem_area, len, &b->fill, &b->comp, NULL);
	if (err)
		xwt_skip("xsk_umem__create: %s", strerror(-err));
	err = xsk_socket__create(&b->xsk, IF_A, 0, b->umem, &b->rx, &b->tx, &cfg);
	if (err)
		xwt_skip("xsk_socket__create(" IF_A ", queue 0, copy mode): %s", strerror(-err));
}

static void die(const char *what, int err)
{
	fprintf(stderr, "xdp_cost: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static void setup_bpf(struct bench *b)
{
	struct xw_ep_entry epv = {
		.flags = XW_EPF_ACTIVE,
		.queue_id = 0,
		.owner_pid = (__u32)getpid(),
	};
	__u32 key = BENCH_EP, v;
	long page = sysconf(_SC_PAGESIZE);
	int err;

	libbpf_set_print(xwt_silent);
	b->pass = bench_pass_bpf__open_and_load();
	if (!b->pass)
		die("bench_pass_bpf__open_and_load", errno);
	b->xw = xw_xdp_bpf__open_and_load();
	if (!b->xw)
		die("xw_xdp_bpf__open_and_load", errno);
	b->raw = afxdp_raw_bpf__open_and_load();
	if (!b->raw)
		die("afxdp_raw_bpf__open_and_load", errno);
	b->pass_fd = bpf_program__fd(b->pass->progs.bench_pass);
	b->raw_fd = bpf_program__fd(b->raw->progs.afxdp_raw);
	b->ep_fd = bpf_map__fd(b->xw->maps.endpoints);
	b->conns_fd = bpf_map__fd(b->xw->maps.conns);
	b->xw_fd = bpf_program__fd(b->xw->progs.xw_xdp);
	b->stats_fd = bpf_map__fd(b->xw->maps.stats);
	b->shared_fd = bpf_map__fd(b->xw->maps.shared);
	b->wstate_fd = bpf_map__fd(b->xw->maps.wake_state);
	b->policy_fd = bpf_map__fd(b->xw->maps.k_policy);
	b->coal_fd = bpf_map__fd(b->xw->maps.k_coalesce_usecs);
	b->ncpus = libbpf_num_possible_cpus();
	if (b->ncpus <= 0)
		die("libbpf_num_possible_cpus", b->ncpus);

	err = xwt_write_defaults(b->xw->obj);
	if (err)
		die("writing knob defaults", err);
	if (bpf_map_update_elem(b->ep_fd, &key, &epv, BPF_ANY))
		die("endpoints update", errno);

	b->ring_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "xw_bench_ring", 0, 0, XW_RING_BYTES,
				    NULL);
	if (b->ring_fd < 0)
		die("bpf_map_create(RINGBUF)", errno);
	v = (__u32)b->ring_fd;
	if (bpf_map_update_elem(bpf_map__fd(b->xw->maps.wake_rings), &key, &v, BPF_ANY))
		die("wake_rings update", errno);
	b->rb = ring_buffer__new(b->ring_fd, ring_cb, b, NULL);
	if (!b->rb)
		die("ring_buffer__new", errno);

	v = (__u32)xsk_socket__fd(b->xsk);
	if (bpf_map_update_elem(bpf_map__fd(b->xw->maps.xsks), &key, &v, BPF_ANY))
		die("xsks update (AF_XDP socket)", errno);
	/* The raw program redirects to the socket of the queue (0). */
	key = 0;
	if (bpf_map_update_elem(bpf_map__fd(b->raw->maps.raw_xsks), &key, &v, BPF_ANY))
		die("raw_xsks update (AF_XDP socket)", errno);

	b->sh_len = (sizeof(struct xw_shared) * XW_MAX_ENDPOINTS + (size_t)page - 1) &
		    ~((size_t)page - 1);
	b->sh = mmap(NULL, b->sh_len, PROT_READ | PROT_WRITE, MAP_SHARED, b->shared_fd, 0);
	if (b->sh == MAP_FAILED)
		die("mmap shared map", errno);
}

static void teardown(struct bench *b)
{
	ring_buffer__free(b->rb);
	if (b->sh && b->sh != MAP_FAILED)
		munmap((void *)b->sh, b->sh_len);
	xw_xdp_bpf__destroy(b->xw);
	bench_pass_bpf__destroy(b->pass);
	afxdp_raw_bpf__destroy(b->raw);
	if (b->ring_fd > 0)
		close(b->ring_fd);
	xsk_socket__delete(b->xsk);
	xsk_umem__delete(b->umem);
	if (b->umem_area && b->umem_area != MAP_FAILED)
		munmap(b->umem_area, (size_t)UMEM_FRAMES * UMEM_FRAME_SIZE);
}

/* ------------------------------------------------------------------ */
/* Frames                                                              */
/* ------------------------------------------------------------------ */

struct frame {
	__u8 data[FRAME_MAX];
	__u32 len;
};

static const __u8 mac_dst[ETH_ALEN] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x0a };
static const __u8 mac_src[ETH_ALEN] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x0b };

/* A foreign frame: IPv4/TCP, 64 bytes of Ethernet frame (no FCS). */
static void build_foreign(struct frame *f)
{
	struct ethhdr *eth = (struct ethhdr *)f->data;
	struct iphdr *ip = (struct iphdr *)(eth + 1);
	struct tcphdr *tcp = (struct tcphdr *)(ip + 1);
	__u32 payload = 10;

	memset(f, 0, sizeof(*f));
	memcpy(eth->h_dest, mac_dst, ETH_ALEN);
	memcpy(eth->h_source, mac_src, ETH_ALEN);
	eth->h_proto = htons(ETH_P_IP);
	ip->version = 4;
	ip->ihl = 5;
	ip->ttl = 64;
	ip->protocol = 6; /* TCP */
	ip->tot_len = htons((__u16)(sizeof(*ip) + sizeof(*tcp) + payload));
	ip->saddr = htonl(0x0a000002);
	ip->daddr = htonl(0x0a000001);
	tcp->source = htons(40000);
	tcp->dest = htons(5201);
	tcp->seq = htonl(1);
	tcp->doff = 5;
	tcp->ack = 1;
	tcp->window = htons(65535);
	f->len = (__u32)(sizeof(*eth) + sizeof(*ip) + sizeof(*tcp) + payload);
}

struct xw_frame_spec {
	__u8 version, type, flags;
	__u32 msg_len, frag_off, frag_idx, frag_count;
	__u16 payload_len;
};

static void build_xw(struct frame *f, const struct xw_frame_spec *s)
{
	struct ethhdr *eth = (struct ethhdr *)f->data;
	struct xw_hdr *h = (struct xw_hdr *)(eth + 1);
	__u8 *pl = (__u8 *)(h + 1);

	memset(f, 0, sizeof(*f));
	memcpy(eth->h_dest, mac_dst, ETH_ALEN);
	memcpy(eth->h_source, mac_src, ETH_ALEN);
	eth->h_proto = htons(XW_DEFAULT_ETHERTYPE);
	h->version = s->version;
	h->type = s->type;
	h->flags = s->flags;
	h->dst_ep = htons(BENCH_EP);
	h->src_ep = htons(BENCH_PEER_EP);
	h->session = htonl(BENCH_SESSION);
	h->seq = htonl(100);
	h->ack = htonl(50);
	h->msg_id = htonl(9);
	h->msg_len = htonl(s->msg_len);
	h->frag_off = htonl(s->frag_off);
	h->frag_idx = htonl(s->frag_idx);
	h->frag_count = htonl(s->frag_count);
	h->payload_len = htons(s->payload_len);
	h->match = htobe64(0x1122334455667788ULL);
	for (__u32 i = 0; i < s->payload_len; i++)
		pl[i] = (__u8)i;
	f->len = (__u32)(sizeof(*eth) + sizeof(*h) + s->payload_len);
}

/* ------------------------------------------------------------------ */
/* Stats                                                               */
/* ------------------------------------------------------------------ */

#define NSTAT XW_STATS_NR

/* Sum of the per-CPU values of one stats key, as an array of counters. */
static int read_stats(struct bench *b, __u32 key, __u64 out[NSTAT])
{
	struct xw_map_stats sum = {};
	int err = xwt_read_stats(b->stats_fd, key, &sum);

	memcpy(out, &sum, sizeof(__u64) * NSTAT);
	return err;
}

enum {
#define XW__STAT_IDX(name, desc) ST_##name,
	XW_STATS(XW__STAT_IDX)
#undef XW__STAT_IDX
};

static const char *const stat_names[NSTAT] = {
#define XW__STAT_NAME(name, desc) #name,
	XW_STATS(XW__STAT_NAME)
#undef XW__STAT_NAME
};

/* ------------------------------------------------------------------ */
/* Paths                                                               */
/* ------------------------------------------------------------------ */

enum path_kind {
	P_PASS,		/* a  */
	P_FOREIGN,	/* b  */
	P_REDIRECT,	/* c  */
	P_PING,		/* p  */
	P_PINGM,	/* m  */
	P_RAW,		/* r  */
	P_DROP,		/* x  */
	P_STALE,	/* z  */
	P_DEFER,	/* e  */
	P_PASS1,	/* a1 */
	P_FOREIGN1,	/* b1 */
	P_WAKE1,	/* d  */
	P_DEFER1,	/* e1 */
	P_TIMER1,	/* c1 */
	P__N,
};

struct path {
	const char *id;
	const char *name;
	int use_xw;	    /* xw_xdp (else bench_pass) */
	int loop;	    /* repeat = 1, opt.calls calls per repetition */
	__u32 policy;
	int arm;	    /* store armed = 1 before every call */
	int new_batch;	    /* consumed = produced before every call (loop) */
	__u32 want_ret;
	int base;	    /* baseline path for the ratio */
	const struct frame *frame;
	int conns;	    /* endpoint has XW_EPF_CONNS and a matching `conns` entry */
	int raw;	    /* the raw AF_XDP redirect program (use_xw = 0) */
	/* results */
	double ns[MAX_REPS];
	int nrep;
	unsigned long long frames;
	unsigned long long bad_ret, bad_ret_val, run_err;
	__u64 d_ep[NSTAT], d_if[NSTAT];
	unsigned long long rec_wake[XW_WAKE_REASON_MAX], rec_other;
	unsigned long long sh_wakes;
	double med, min, max;
};

static struct frame fr_foreign, fr_medium, fr_small_lat, fr_lat_more, fr_badver;
static struct frame fr_medium_lat, fr_raw, fr_stale;
static struct path paths[P__N];

static void define_paths(void)
{
	struct xw_frame_spec medium = {
		/* fragment 2 of 4 of a 4096-byte message, no LAT (mid-stream) */
		.version = XW_VERSION, .type = XW_PKT_MEDIUM, .flags = 0,
		.msg_len = 4096, .frag_off = 1024, .frag_idx = 1, .frag_count = 4,
		.payload_len = 1024,
	};
	struct xw_frame_spec small_lat = {
		.version = XW_VERSION, .type = XW_PKT_SMALL, .flags = XW_F_LAT | XW_F_LAST,
		.msg_len = 64, .frag_off = 0, .frag_idx = 0, .frag_count = 1,
		.payload_len = 64,
	};
	struct xw_frame_spec medium_lat = {
		/* the last fragment of a 4096-byte message, LAT */
		.version = XW_VERSION, .type = XW_PKT_MEDIUM, .flags = XW_F_LAT | XW_F_LAST,
		.msg_len = 4096, .frag_off = 3072, .frag_idx = 3, .frag_count = 4,
		.payload_len = 1024,
	};
	struct xw_frame_spec lat_more = small_lat, badver = small_lat;

	lat_more.flags = XW_F_LAT | XW_F_MORE | XW_F_LAST;
	badver.version = XW_VERSION + 1;

	build_foreign(&fr_foreign);
	build_xw(&fr_medium, &medium);
	build_xw(&fr_small_lat, &small_lat);
	build_xw(&fr_lat_more, &lat_more);
	build_xw(&fr_badver, &badver);
	build_xw(&fr_medium_lat, &medium_lat);
	/* The raw program's frame: the SMALL one under its EtherType. */
	fr_raw = fr_small_lat;
	fr_stale = fr_small_lat;
	((struct xw_hdr *)(fr_stale.data + sizeof(struct ethhdr)))->session =
		htonl(BENCH_SESSION + 1);
	((struct ethhdr *)fr_raw.data)->h_proto = htons(RAW_ETHERTYPE);

	paths[P_PASS] = (struct path){ "a", "pass-only baseline, foreign IPv4/TCP", 0, 0,
				       0, 0, 0, XDP_PASS, P_PASS, &fr_foreign };
	paths[P_FOREIGN] = (struct path){ "b", "xw_xdp foreign IPv4/TCP -> PASS", 1, 0,
					  XW_POLICY_MARKER, 0, 0, XDP_PASS, P_PASS,
					  &fr_foreign };
	paths[P_REDIRECT] = (struct path){ "c", "xw_xdp MEDIUM redirect, receiver spinning",
					   1, 0, XW_POLICY_MARKER, 0, 0, XDP_REDIRECT,
					   P_PASS, &fr_medium };
	paths[P_PING] = (struct path){ "p", "xw_xdp SMALL LAT, conns, spinning (ping-pong)",
				       1, 0, XW_POLICY_MARKER, 0, 0, XDP_REDIRECT, P_PASS,
				       &fr_small_lat, .conns = 1 };
	paths[P_PINGM] = (struct path){ "m", "xw_xdp MEDIUM LAT, conns, spinning", 1, 0,
					XW_POLICY_MARKER, 0, 0, XDP_REDIRECT, P_PASS,
					&fr_medium_lat, .conns = 1 };
	paths[P_RAW] = (struct path){ "r", "raw AF_XDP redirect (afxdp_raw), SMALL", 0, 0,
				      0, 0, 0, XDP_REDIRECT, P_PASS, &fr_raw, .raw = 1 };
	paths[P_DROP] = (struct path){ "x", "xw_xdp ours, bad version -> DROP", 1, 0,
				       XW_POLICY_MARKER, 0, 0, XDP_DROP, P_PASS, &fr_badver };
	paths[P_STALE] = (struct path){ "z", "xw_xdp conns, stale session -> DROP", 1, 0,
					XW_POLICY_MARKER, 0, 0, XDP_DROP, P_PASS, &fr_stale,
					.conns = 1 };
	paths[P_DEFER] = (struct path){ "e", "xw_xdp stream LAT|MORE, armed, burst deferred", 1,
					0, XW_POLICY_STREAM, 1, 0, XDP_REDIRECT, P_PASS,
					&fr_lat_more };
	paths[P_PASS1] = (struct path){ "a1", "pass-only baseline, foreign, repeat=1", 0, 1,
					0, 0, 0, XDP_PASS, P_PASS1, &fr_foreign };
	paths[P_FOREIGN1] = (struct path){ "b1", "xw_xdp foreign -> PASS, repeat=1", 1, 1,
					   XW_POLICY_MARKER, 0, 0, XDP_PASS, P_PASS1,
					   &fr_foreign };
	paths[P_WAKE1] = (struct path){ "d", "xw_xdp SMALL LAT wake now (armed), repeat=1",
					1, 1, XW_POLICY_MARKER, 1, 0, XDP_REDIRECT, P_PASS1,
					&fr_small_lat };
	paths[P_DEFER1] = (struct path){ "e1", "xw_xdp stream LAT|MORE defer start, repeat=1",
					 1, 1, XW_POLICY_STREAM, 1, 1, XDP_REDIRECT, P_PASS1,
					 &fr_lat_more };
	paths[P_TIMER1] = (struct path){ "c1", "xw_xdp MEDIUM armed, timeout rule, repeat=1",
					 1, 1, XW_POLICY_MARKER, 1, 1, XDP_REDIRECT, P_PASS1,
					 &fr_medium };
}

/* BPF_PROG_TEST_RUN through the tests' harness (tests/lib/xwt_xdp.c). */
static int test_run(struct bench *b, int prog_fd, const struct frame *f, int repeat,
		    __u32 *retval, __u32 *duration)
{
	struct xwt_run_args a = { .prog_fd = prog_fd, .ifindex = b->ifindex, .queue = 0,
				  .buf = f->data, .len = f->len, .repeat = repeat };
	struct xwt_run_res r;
	int err = xwt_test_run(&a, &r);

	if (err)
		return err;
	*retval = r.retval;
	*duration = r.duration;
	return 0;
}

/* One test run of path @p's frame: a failed run and a verdict other than
 * the path's counted in @p; the kernel's ns per iteration in *@duration. */
static int path_run(struct bench *b, struct path *p, int prog_fd, int repeat, __u32 *duration)
{
	__u32 ret = 0;
	int err = test_run(b, prog_fd, p->frame, repeat, &ret, duration);

	if (err) {
		p->run_err++;
		return err;
	}
	if (ret != p->want_ret) {
		p->bad_ret++;
		p->bad_ret_val = ret;
	}
	return 0;
}

/* Fresh per-endpoint engine state for the next measurement. */
static int reset_state(struct bench *b, const struct path *p)
{
	struct xw_ep_entry epv = {
		.flags = XW_EPF_ACTIVE | (p->conns ? XW_EPF_CONNS : 0),
		.queue_id = 0,
		.owner_pid = (__u32)getpid(),
	};
	struct xw_conn_key ck = {
		.src_ep = BENCH_PEER_EP,
		.dst_ep = BENCH_EP,
	};
	struct xw_wake_state ws;
	struct xw_shared shv;
	__u32 key = BENCH_EP, sess = BENCH_SESSION;

	/* Rewriting the value cancels and frees a running bpf_timer. */
	memset(&ws, 0, sizeof(ws));
	if (bpf_map_update_elem(b->wstate_fd, &key, &ws, BPF_ANY))
		return -errno;
	if (set_knob(b->policy_fd, key, p->policy))
		return -errno;
	/* As the library registers a connected peer (Ethernet mode). */
	memcpy(ck.peer_mac, mac_src, ETH_ALEN);
	if (p->conns ? bpf_map_update_elem(b->conns_fd, &ck, &sess, BPF_ANY)
		     : (bpf_map_delete_elem(b->conns_fd, &ck) && errno != ENOENT))
		return -errno;
	/* conns_gen only grows, and grows after a change of `conns` (maps.h). */
	memset(&shv, 0, sizeof(shv));
	shv.conns_gen = b->sh[BENCH_EP].conns_gen + 1;
	if (bpf_map_update_elem(b->shared_fd, &key, &shv, BPF_ANY))
		return -errno;
	if (bpf_map_update_elem(b->ep_fd, &key, &epv, BPF_ANY))
		return -errno;
	/* Deferred and coalesced wakes stay pending for the whole run, so an
	 * armed receiver stays armed (its timer never fires mid-measurement). */
	if (set_knob(b->coal_fd, key, 10000000))
		return -errno;
	ring_buffer__consume(b->rb);
	memset(b->rec_wake, 0, sizeof(b->rec_wake));
	b->rec_other = 0;
	return 0;
}

static int measure(struct bench *b, struct path *p)
{
	int prog_fd = p->use_xw ? b->xw_fd : p->raw ? b->raw_fd : b->pass_fd;
	__u64 ep0[NSTAT], if0[NSTAT], ep1[NSTAT], if1[NSTAT];
	volatile struct xw_shared *shp = &b->sh[BENCH_EP];
	__u64 wakes0;
	__u32 dur = 0;
	double ns;
	int err;

	if (p->use_xw && (err = reset_state(b, p)))
		return err;
	wakes0 = shp->wakes;
	if ((err = read_stats(b, BENCH_EP, ep0)) || (err = read_stats(b, XW_STATS_IFACE, if0)))
		return err;

	if (!p->loop) {
		/* Only the first frame can find the receiver armed (it
		 * matters to the timer's wake, not to the frame path). */
		if (p->arm)
			shp->armed = 1;
		err = path_run(b, p, prog_fd, (int)opt.repeat, &dur);
		if (err)
			return err;
		ns = dur;
		p->frames += (unsigned long long)opt.repeat;
	} else {
		unsigned long long sum = 0;

		for (long i = 0; i < opt.calls; i++) {
			if (p->new_batch)
				shp->consumed = shp->produced;
			if (p->arm)
				shp->armed = 1;
			err = path_run(b, p, prog_fd, 1, &dur);
			if (err)
				return err;
			sum += dur;
			if ((i & 127) == 127)
				ring_buffer__consume(b->rb);
		}
		ns = (double)sum / (double)opt.calls;
		p->frames += (unsigned long long)opt.calls;
	}
	ring_buffer__consume(b->rb);

	if ((err = read_stats(b, BENCH_EP, ep1)) || (err = read_stats(b, XW_STATS_IFACE, if1)))
		return err;
	for (int i = 0; i < NSTAT; i++) {
		p->d_ep[i] += ep1[i] - ep0[i];
		p->d_if[i] += if1[i] - if0[i];
	}
	for (int i = 0; i < XW_WAKE_REASON_MAX; i++)
		p->rec_wake[i] += b->rec_wake[i];
	p->rec_other += b->rec_other;
	p->sh_wakes += shp->wakes - wakes0;
	p->ns[p->nrep++] = ns;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Correctness of each path                                            */
/* ------------------------------------------------------------------ */

static int failures;

/* One frame through xw_xdp, which must return @want. */
static void memo_step(struct bench *b, const char *what, const struct frame *f, __u32 want)
{
	__u32 ret = 0, dur;
	int err = test_run(b, b->xw_fd, f, 1, &ret, &dur);

	if (err || ret != want) {
		fprintf(stderr, "UNEXPECTED conns memo: %s: XDP action %u (err %d), expected %u\n",
			what, ret, err, want);
		failures++;
	}
}

/*
 * The program's memo of its last `conns` lookup follows every change that
 * increments conns_gen: a changed session, a deleted entry, and its own
 * deletion on a CONNECT from a restarted peer.
 */
static void check_conn_memo(struct bench *b)
{
	struct xw_conn_key ck = { .src_ep = BENCH_PEER_EP, .dst_ep = BENCH_EP };
	struct xw_frame_spec connect = {
		.version = XW_VERSION, .type = XW_PKT_CONNECT, .frag_count = 1,
	};
	volatile struct xw_shared *shp = &b->sh[BENCH_EP];
	struct frame fr_connect, fr_new;
	__u32 sess = BENCH_SESSION + 1, v;
	__u64 gen;
	int err;

	memcpy(ck.peer_mac, mac_src, ETH_ALEN);
	build_xw(&fr_connect, &connect);
	((struct xw_hdr *)(fr_connect.data + sizeof(struct ethhdr)))->session =
		htonl(BENCH_SESSION + 2);
	fr_new = fr_small_lat;
	((struct xw_hdr *)(fr_new.data + sizeof(struct ethhdr)))->session =
		htonl(BENCH_SESSION + 2);

	if ((err = reset_state(b, &paths[P_PING])))
		die("conns memo: reset", err);
	memo_step(b, "registered session", &fr_small_lat, XDP_REDIRECT);
	memo_step(b, "registered session, again (memo)", &fr_small_lat, XDP_REDIRECT);
	memo_step(b, "another session (memo)", &fr_stale, XDP_DROP);
	/* The peer's session changes. */
	if (bpf_map_update_elem(b->conns_fd, &ck, &sess, BPF_ANY))
		die("conns memo: update", errno);
	__atomic_fetch_add(&shp->conns_gen, 1, __ATOMIC_SEQ_CST);
	memo_step(b, "old session after the change", &fr_small_lat, XDP_DROP);
	memo_step(b, "new session after the change", &fr_stale, XDP_REDIRECT);
	/* The connection is gone: the library checks alone. */
	if (bpf_map_delete_elem(b->conns_fd, &ck))
		die("conns memo: delete", errno);
	__atomic_fetch_add(&shp->conns_gen, 1, __ATOMIC_SEQ_CST);
	memo_step(b, "any session after the delete", &fr_small_lat, XDP_REDIRECT);
	memo_step(b, "any session after the delete, again", &fr_stale, XDP_REDIRECT);
	/* Registered again, then the peer restarts: its CONNECT deletes the
	 * entry, and the program increments conns_gen itself. */
	sess = BENCH_SESSION;
	if (bpf_map_update_elem(b->conns_fd, &ck, &sess, BPF_ANY))
		die("conns memo: update", errno);
	__atomic_fetch_add(&shp->conns_gen, 1, __ATOMIC_SEQ_CST);
	memo_step(b, "registered again", &fr_small_lat, XDP_REDIRECT);
	memo_step(b, "new incarnation before its CONNECT", &fr_new, XDP_DROP);
	gen = shp->conns_gen;
	memo_step(b, "the new incarnation's CONNECT", &fr_connect, XDP_REDIRECT);
	if (!bpf_map_lookup_elem(b->conns_fd, &ck, &v) || shp->conns_gen != gen + 1) {
		fprintf(stderr, "UNEXPECTED conns memo: after a CONNECT with a new session the "
				"entry %s, conns_gen +%llu (expected deleted, +1)\n",
			bpf_map_lookup_elem(b->conns_fd, &ck, &v) ? "is gone" : "is still there",
			(unsigned long long)(shp->conns_gen - gen));
		failures++;
	}
	memo_step(b, "new incarnation after its CONNECT", &fr_new, XDP_REDIRECT);
}

__attribute__((format(printf, 2, 3))) static void fail(const struct path *p, const char *fmt,
						       ...)
{
	va_list ap;

	fprintf(stderr, "UNEXPECTED path %s (%s): ", p->id, p->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	failures++;
}

#define EXPECT(p, cond, ...)                       \
	do {                                       \
		if (!(cond))                       \
			fail(p, __VA_ARGS__);      \
	} while (0)

/* Every drop counter of @d must be zero. */
static void expect_no_drops(const struct path *p, const __u64 *d, const char *key)
{
	for (int i = ST_drop_short; i <= ST_drop_nosocket; i++)
		EXPECT(p, d[i] == 0, "%s.%s = %llu, expected 0", key, stat_names[i],
		       (unsigned long long)d[i]);
}

static void check_path(const struct path *p)
{
	const __u64 *e = p->d_ep, *g = p->d_if;
	unsigned long long n = p->frames, lat;

	EXPECT(p, p->bad_ret == 0, "XDP action %llu in %llu runs, expected %u",
	       p->bad_ret_val, p->bad_ret, p->want_ret);
	if (!p->use_xw)
		return;
	/* Every frame is seen once, on the interface key: passed or ours. */
	EXPECT(p, g[ST_frames_passed] + g[ST_frames_ours] == n,
	       "iface.frames_passed + frames_ours = %llu, expected %llu",
	       (unsigned long long)(g[ST_frames_passed] + g[ST_frames_ours]), n);

	switch (p - paths) {
	case P_FOREIGN:
	case P_FOREIGN1:
		EXPECT(p, g[ST_frames_passed] == n, "iface.frames_passed = %llu, expected %llu",
		       (unsigned long long)g[ST_frames_passed], n);
		EXPECT(p, g[ST_frames_ours] == 0, "iface.frames_ours = %llu, expected 0",
		       (unsigned long long)g[ST_frames_ours]);
		EXPECT(p, e[ST_frames_redirected] == 0, "ep.frames_redirected = %llu",
		       (unsigned long long)e[ST_frames_redirected]);
		break;
	case P_DROP:
		EXPECT(p, g[ST_frames_ours] == n, "iface.frames_ours = %llu, expected %llu",
		       (unsigned long long)g[ST_frames_ours], n);
		EXPECT(p, g[ST_drop_version] == n, "iface.drop_version = %llu, expected %llu",
		       (unsigned long long)g[ST_drop_version], n);
		EXPECT(p, e[ST_frames_redirected] == 0, "ep.frames_redirected = %llu",
		       (unsigned long long)e[ST_frames_redirected]);
		break;
	case P_REDIRECT: /* unmarked */
	case P_PING:	 /* LAT */
	case P_PINGM:	 /* LAT */
		lat = p - paths == P_REDIRECT ? 0 : n;
		expect_no_drops(p, g, "iface");
		expect_no_drops(p, e, "ep");
		EXPECT(p, e[ST_frames_redirected] == n, "ep.frames_redirected = %llu, expected %llu",
		       (unsigned long long)e[ST_frames_redirected], n);
		EXPECT(p, e[ST_lat_frames] == lat, "ep.lat_frames = %llu, expected %llu",
		       (unsigned long long)e[ST_lat_frames], lat);
		EXPECT(p, e[ST_wake_marker] == 0 && p->sh_wakes == 0,
		       "ep.wake_marker = %llu, shared.wakes +%llu: an unarmed receiver was woken",
		       (unsigned long long)e[ST_wake_marker], p->sh_wakes);
		/* Not armed: the receiver is running, no batch, no timer. */
		EXPECT(p, e[ST_wake_unarmed] == n && e[ST_timer_starts] == 0,
		       "ep.wake_unarmed = %llu, timer_starts = %llu: expected %llu and 0",
		       (unsigned long long)e[ST_wake_unarmed],
		       (unsigned long long)e[ST_timer_starts], n);
		break;
	case P_STALE:
		EXPECT(p, e[ST_drop_session] == n && e[ST_frames_redirected] == 0,
		       "ep.drop_session = %llu, ep.frames_redirected = %llu, expected %llu and 0",
		       (unsigned long long)e[ST_drop_session],
		       (unsigned long long)e[ST_frames_redirected], n);
		break;
	case P_TIMER1:
		expect_no_drops(p, e, "ep");
		EXPECT(p, e[ST_frames_redirected] == n, "ep.frames_redirected = %llu, expected %llu",
		       (unsigned long long)e[ST_frames_redirected], n);
		EXPECT(p, e[ST_wake_marker] + e[ST_wake_frames] + e[ST_wake_timeout] == 0 &&
			  e[ST_wake_unarmed] == 0 && e[ST_timer_starts] >= 1,
		       "armed unmarked frame: wakes %llu, unarmed %llu, timer_starts %llu: "
		       "expected no wake, a running timer",
		       (unsigned long long)(e[ST_wake_marker] + e[ST_wake_frames] +
					    e[ST_wake_timeout]),
		       (unsigned long long)e[ST_wake_unarmed],
		       (unsigned long long)e[ST_timer_starts]);
		break;
	case P_DEFER:
		expect_no_drops(p, e, "ep");
		EXPECT(p, e[ST_frames_redirected] == n, "ep.frames_redirected = %llu, expected %llu",
		       (unsigned long long)e[ST_frames_redirected], n);
		EXPECT(p, e[ST_lat_frames] == n && e[ST_more_frames] == n,
		       "ep.lat_frames = %llu, ep.more_frames = %llu, expected %llu",
		       (unsigned long long)e[ST_lat_frames],
		       (unsigned long long)e[ST_more_frames], n);
		EXPECT(p, e[ST_deferrals] >= (unsigned long long)p->nrep,
		       "ep.deferrals = %llu, expected >= 1 per repetition",
		       (unsigned long long)e[ST_deferrals]);
		EXPECT(p, e[ST_wake_marker] == 0, "ep.wake_marker = %llu, expected 0 (deferred)",
		       (unsigned long long)e[ST_wake_marker]);
		break;
	case P_WAKE1:
		expect_no_drops(p, e, "ep");
		EXPECT(p, e[ST_frames_redirected] == n, "ep.frames_redirected = %llu, expected %llu",
		       (unsigned long long)e[ST_frames_redirected], n);
		EXPECT(p, e[ST_wake_marker] == n, "ep.wake_marker = %llu, expected %llu",
		       (unsigned long long)e[ST_wake_marker], n);
		EXPECT(p, e[ST_wake_unarmed] == 0 && e[ST_wake_ringfull] == 0 &&
			  e[ST_wake_noring] == 0,
		       "ep.wake_unarmed = %llu, wake_ringfull = %llu, wake_noring = %llu",
		       (unsigned long long)e[ST_wake_unarmed],
		       (unsigned long long)e[ST_wake_ringfull],
		       (unsigned long long)e[ST_wake_noring]);
		EXPECT(p, p->rec_wake[XW_WAKE_MARKER] == n && p->sh_wakes == n,
		       "ring records (marker) = %llu, shared.wakes +%llu, expected %llu",
		       p->rec_wake[XW_WAKE_MARKER], p->sh_wakes, n);
		break;
	case P_DEFER1:
		expect_no_drops(p, e, "ep");
		EXPECT(p, e[ST_frames_redirected] == n, "ep.frames_redirected = %llu, expected %llu",
		       (unsigned long long)e[ST_frames_redirected], n);
		EXPECT(p, e[ST_deferrals] == n, "ep.deferrals = %llu, expected %llu",
		       (unsigned long long)e[ST_deferrals], n);
		EXPECT(p, e[ST_wake_marker] == 0 && e[ST_wake_stream] == 0,
		       "ep.wake_marker = %llu, wake_stream = %llu: a deferred wake was sent at once",
		       (unsigned long long)e[ST_wake_marker],
		       (unsigned long long)e[ST_wake_stream]);
		break;
	}
}

/* ------------------------------------------------------------------ */
/* Output                                                              */
/* ------------------------------------------------------------------ */

static void summarize(struct path *p)
{
	double s[MAX_REPS];
	int n = p->nrep;

	memcpy(s, p->ns, sizeof(double) * (size_t)n);
	xwu_sort(s, (size_t)n);
	p->min = s[0];
	p->max = s[n - 1];
	p->med = xwu_median(s, (size_t)n);
}

/* Median over repetitions of the per-repetition ratio p/base (paired). */
static double paired_ratio(const struct path *p, const struct path *base)
{
	double r[MAX_REPS];
	int n = p->nrep < base->nrep ? p->nrep : base->nrep;

	for (int i = 0; i < n; i++)
		r[i] = base->ns[i] > 0 ? p->ns[i] / base->ns[i] : 0;
	xwu_sort(r, (size_t)n);
	return xwu_median(r, (size_t)n);
}

static double ratio_of(const struct path *p)
{
	const struct path *base = &paths[p->base];

	return base->med > 0 ? p->med / base->med : 0;
}

struct machine {
	char kernel[128];
	char cpu[256];
	long nproc;
};

static void machine_info(struct machine *m)
{
	struct utsname u;
	char line[512];
	FILE *f;

	snprintf(m->kernel, sizeof(m->kernel), "%s", uname(&u) ? "?" : u.release);
	snprintf(m->cpu, sizeof(m->cpu), "?");
	f = fopen("/proc/cpuinfo", "r");
	if (f) {
		while (fgets(line, sizeof(line), f)) {
			char *c = strchr(line, ':');

			if (!strncmp(line, "model name", 10) && c) {
				c++;
				while (*c == ' ' || *c == '\t')
					c++;
				c[strcspn(c, "\n")] = 0;
				snprintf(m->cpu, sizeof(m->cpu), "%s", c);
				break;
			}
		}
		fclose(f);
	}
	m->nproc = sysconf(_SC_NPROCESSORS_ONLN);
}

static void target_line(char *buf, size_t len, double ratio)
{
	if (ratio <= TARGET_RATIO)
		snprintf(buf, len, "target <= %.2fx: met", TARGET_RATIO);
	else
		snprintf(buf, len, "target <= %.2fx: MISSED by %.1f%%", TARGET_RATIO,
			 (ratio / TARGET_RATIO - 1.0) * 100.0);
}

static void print_text(const struct machine *m)
{
	double rb = ratio_of(&paths[P_FOREIGN]);
	double rb1 = ratio_of(&paths[P_FOREIGN1]);
	char tgt[96];

	printf("xdp_cost: per-frame cost of xw_xdp with BPF_PROG_TEST_RUN\n");
	printf("machine: kernel %s, CPU %s, nproc %ld\n", m->kernel, m->cpu, m->nproc);
	printf("command: %s\n", command_line);
	printf("bulk paths: repeat=%ld per run; repeat=1 paths: %ld runs of one frame; "
	       "%ld repetitions each (interleaved)\n",
	       opt.repeat, opt.calls, opt.reps);
	printf("ns/frame: kernel-measured (opts.duration); ratio: median / median of the "
	       "baseline measured the same way (a or a1)\n\n");
	printf("%-3s %-46s | %9s | %8s | %8s | %s\n", "", "path", "ns/frame", "min", "max",
	       "ratio vs pass");
	printf("%-3s %-46s | %9s | %8s | %8s | %s\n", "", "", "(median)", "", "", "");
	for (int i = 0; i < P__N; i++) {
		const struct path *p = &paths[i];

		printf("%-3s %-46s | %9.1f | %8.1f | %8.1f | %5.2fx (vs %s)\n", p->id, p->name,
		       p->med, p->min, p->max, ratio_of(p), paths[p->base].id);
	}
	target_line(tgt, sizeof(tgt), rb);
	printf("\nforeign traffic (b vs a, repeat=%ld): %.3fx (paired per-repetition median "
	       "%.3fx) -- %s\n",
	       opt.repeat, rb, paired_ratio(&paths[P_FOREIGN], &paths[P_PASS]), tgt);
	printf("foreign traffic (b1 vs a1, repeat=1): %.3fx (includes the fixed test-run "
	       "timing overhead)\n",
	       rb1);
	printf("wake now (d vs a1, repeat=1): %.3fx, %.1f ns over pass-only\n",
	       ratio_of(&paths[P_WAKE1]), paths[P_WAKE1].med - paths[P_PASS1].med);
	printf("ping-pong frame (p vs r, repeat=%ld): %.2fx the raw AF_XDP redirect, "
	       "%.1f ns over it (MEDIUM, m: %.1f ns over it)\n",
	       opt.repeat, paths[P_RAW].med > 0 ? paths[P_PING].med / paths[P_RAW].med : 0,
	       paths[P_PING].med - paths[P_RAW].med, paths[P_PINGM].med - paths[P_RAW].med);

	printf("\nwhat each path did (sums over all repetitions, endpoint %u):\n", BENCH_EP);
	for (int i = 0; i < P__N; i++) {
		const struct path *p = &paths[i];
		const __u64 *e = p->d_ep, *g = p->d_if;

		if (!p->use_xw) {
			printf("  %-3s %llu frames, all %s\n", p->id, p->frames,
			       p->raw ? "XDP_REDIRECT" : "XDP_PASS");
			continue;
		}
		printf("  %-3s %llu frames: passed %llu, dropped(version) %llu, "
		       "dropped(session) %llu, redirected %llu, "
		       "lat %llu, more %llu, wake_marker %llu, wake_frames %llu, wake_timeout %llu, "
		       "wake_unarmed %llu, deferrals %llu, timer_starts %llu, timer_fires %llu, "
		       "ring wake records %llu\n",
		       p->id, p->frames, (unsigned long long)g[ST_frames_passed],
		       (unsigned long long)g[ST_drop_version],
		       (unsigned long long)e[ST_drop_session],
		       (unsigned long long)e[ST_frames_redirected],
		       (unsigned long long)e[ST_lat_frames], (unsigned long long)e[ST_more_frames],
		       (unsigned long long)e[ST_wake_marker], (unsigned long long)e[ST_wake_frames],
		       (unsigned long long)e[ST_wake_timeout],
		       (unsigned long long)e[ST_wake_unarmed], (unsigned long long)e[ST_deferrals],
		       (unsigned long long)e[ST_timer_starts], (unsigned long long)e[ST_timer_fires],
		       p->rec_wake[XW_WAKE_MARKER] + p->rec_wake[XW_WAKE_TIMEOUT] +
			       p->rec_wake[XW_WAKE_STREAM] + p->rec_wake[XW_WAKE_FRAMES] +
			       p->rec_wake[XW_WAKE_EVERY]);
	}
	printf("\ncorrectness: %s\n", failures ? "FAILED (see UNEXPECTED lines on stderr)"
					       : "every path did what it claims");
}

static void print_json(const struct machine *m)
{
	double rb = ratio_of(&paths[P_FOREIGN]);

	json_obj_begin();
	json_kv_str("bench", "xdp_cost");
	json_key("machine");
	json_obj_begin();
	json_kv_str("kernel", m->kernel);
	json_kv_str("cpu", m->cpu);
	json_kv_i64("nproc", m->nproc);
	json_obj_end();
	json_kv_str("command", command_line);
	json_kv_i64("repeat", opt.repeat);
	json_kv_i64("calls", opt.calls);
	json_kv_i64("reps", opt.reps);
	json_key("paths");
	json_arr_begin();
	for (int i = 0; i < P__N; i++) {
		const struct path *p = &paths[i];

		json_obj_begin();
		json_kv_str("id", p->id);
		json_kv_str("name", p->name);
		json_kv_i64("repeat", p->loop ? 1L : opt.repeat);
		json_kv_double("median_ns", p->med);
		json_kv_double("min_ns", p->min);
		json_kv_double("max_ns", p->max);
		json_kv_str("baseline", paths[p->base].id);
		json_kv_double("ratio", ratio_of(p));
		json_kv_u64("frames", p->frames);
		json_key("samples_ns");
		json_arr_begin();
		for (int r = 0; r < p->nrep; r++)
			json_double(p->ns[r]);
		json_arr_end();
		json_key("stats_ep");
		json_obj_begin();
		for (int s = 0; s < NSTAT; s++)
			json_kv_u64(stat_names[s], p->d_ep[s]);
		json_obj_end();
		json_key("stats_iface");
		json_obj_begin();
		for (int s = 0; s < NSTAT; s++)
			json_kv_u64(stat_names[s], p->d_if[s]);
		json_obj_end();
		json_obj_end();
	}
	json_arr_end();
	json_key("foreign_target");
	json_obj_begin();
	json_kv_double("ratio", rb);
	json_kv_double("paired_ratio", paired_ratio(&paths[P_FOREIGN], &paths[P_PASS]));
	json_kv_double("target", TARGET_RATIO);
	json_kv_bool("met", rb <= TARGET_RATIO);
	json_obj_end();
	json_kv_bool("checks_ok", !failures);
	json_obj_end();
}

int main(int argc, char **argv)
{
	struct bench b = { .ring_fd = -1 };
	struct machine m;
	int err;

	parse_args(argc, argv);
	if (geteuid() != 0)
		xwt_skip("needs root (CAP_NET_ADMIN, CAP_BPF, CAP_SYS_ADMIN)");
	setvbuf(stdout, NULL, _IOLBF, 0);

	setup_netns_xsk(&b);
	setup_bpf(&b);
	define_paths();
	machine_info(&m);
	check_conn_memo(&b);

	/* Warm-up: one short run of every path, results dropped. */
	{
		long r = opt.repeat, c = opt.calls;

		opt.repeat = r < 10000 ? r : 10000;
		opt.calls = c < 200 ? c : 200;
		for (int i = 0; i < P__N; i++) {
			struct path *p = &paths[i];

			if ((err = measure(&b, p)))
				die(p->name, err);
			memset(p->d_ep, 0, sizeof(p->d_ep));
			memset(p->d_if, 0, sizeof(p->d_if));
			memset(p->rec_wake, 0, sizeof(p->rec_wake));
			p->rec_other = 0;
			p->sh_wakes = 0;
			p->frames = 0;
			p->nrep = 0;
			p->bad_ret = 0;
		}
		opt.repeat = r;
		opt.calls = c;
	}

	/* Interleave the paths so that machine noise hits them alike. */
	for (long r = 0; r < opt.reps; r++)
		for (int i = 0; i < P__N; i++)
			if ((err = measure(&b, &paths[i])))
				die(paths[i].name, err);

	for (int i = 0; i < P__N; i++) {
		summarize(&paths[i]);
		check_path(&paths[i]);
	}
	if (opt.json)
		print_json(&m);
	else
		print_text(&m);
	teardown(&b);
	return failures ? 1 : 0;
}
