// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Exhaustive and random frames through the real compiled XDP program with
 * BPF_PROG_TEST_RUN (one frame per call, ctx data_end = frame length):
 *
 *  1. EtherType sweep (encap eth): every EtherType 0..0xFFFF behind 0, 1 and
 *     2 VLAN tags (0x88A8 outer, 0x8100 inner), the body a valid SMALL for
 *     endpoint 0: only XW_DEFAULT_ETHERTYPE redirects; every other frame
 *     passes unmodified, and across the foreign sweep no drop_* counter and
 *     no frames_redirected moves while frames_passed grows by exactly the
 *     number of frames.
 *  2. UDP sweep (encap udp): IPv4/UDP to every destination port behind 0
 *     and 1 VLAN tag, queues 0 and 5 in use: only their ports
 *     (XW_DEFAULT_UDP_PORT + 0 and + 5) redirect, the rest passes
 *     unmodified; our EtherType frames now pass.
 *  3. Fuzz (encap eth+udp): random frames (lengths 14..1514, often with our
 *     EtherType / VLAN tags / IPv4+UDP to our port planted) and mutations of
 *     valid SMALL / MEDIUM / PULL frames (bit flips, byte changes, cuts).
 *     The verdict is always PASS, DROP or REDIRECT, or TX for a PROBE the
 *     program answers; a PASS leaves the frame unmodified; the counters add
 *     up: frames run = frames_passed + frames_ours, frames_ours =
 *     frames_redirected + probes_answered + all drop_*; the verdicts seen
 *     match those counters one to one.
 *
 * XW_SWEEP_SEED=<n> replays a fuzz run; XW_SWEEP_SCALE=<percent> scales
 * the fuzz counts (default 100: 200,000 + 200,000 frames).
 */
#include "xwt_xdp.h"

#define EP 0
#define EP_INACTIVE 1	/* never registered: drop_endpoint          */
#define EP_NOSOCK 2	/* active, no AF_XDP socket: drop_nosocket  */
#define EP_SESSION 4	/* active, session knob set: drop_session   */
#define EP_QUEUE1 8	/* active, bound to queue 1: drop_queue     */
#define FUZZ_RANDOM 200000
#define FUZZ_MUTATE 200000
#define MUTANTS_PER_BASE 8
#define MAX_REPORTS 25

static unsigned long long seed;
static int reports;

/* A check that prints only its first MAX_REPORTS failures. */
#define FCHECK(cond, ...)                                                           \
	do {                                                                        \
		xwt_checks++;                                                       \
		if (!(cond)) {                                                      \
			xwt_failures++;                                             \
			if (++reports <= MAX_REPORTS) {                             \
				fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, \
					#cond);                                     \
				fprintf(stderr, __VA_ARGS__);                       \
				fputc('\n', stderr);                                \
			} else if (reports == MAX_REPORTS + 1) {                    \
				fprintf(stderr, "(further failures not shown)\n");  \
			}                                                           \
		}                                                                   \
	} while (0)

/* ---- random numbers (xorshift64*) ---------------------------------------- */

static unsigned long long rng_state;

static __u64 rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

/* Uniform in [0, n). */
static __u32 rndn(__u32 n)
{
	return (__u32)(((rnd() >> 32) * (__u64)n) >> 32);
}

/* ---- running frames --------------------------------------------------------- */

struct tally {
	long long frames, bytes;
	long long v[XDP_REDIRECT + 2]; /* per verdict; last slot: anything else */
};

static __u8 out_buf[XWT_MAX_FRAME];

/* Run one frame; returns the verdict, sets *modified when data_out differs. */
static int run(struct xwt_xdp *x, const __u8 *buf, int len, __u32 queue, int *modified,
	       struct tally *t)
{
	int out_len = -1, v;

	v = xwt_run(x, buf, len, queue, &out_len, out_buf);
	*modified = out_len != len || memcmp(out_buf, buf, (size_t)len);
	if (t) {
		t->frames++;
		t->bytes += len;
		t->v[v >= XDP_ABORTED && v <= XDP_REDIRECT ? v : XDP_REDIRECT + 1]++;
	}
	return v;
}

/* ---- counters --------------------------------------------------------------- */

#define C(name) ((int)(__builtin_offsetof(struct xw_map_stats, name) / 8))

static long long delta(const struct xw_stats *a, const struct xw_stats *b, int idx)
{
	return (long long)(xw_stat_value(b, idx) - xw_stat_value(a, idx));
}

static long long drops(const struct xw_stats *a, const struct xw_stats *b)
{
	long long d = 0;

	for (int i = 0; i < XW_STATS_NR; i++)
		if (!strncmp(xw_stat_name(i), "drop_", 5))
			d += delta(a, b, i);
	return d;
}

/* Across a phase: the counters add up, and match the verdicts seen. */
static void check_accounting(const char *phase, const struct xw_stats *a, const struct xw_stats *b,
			     const struct tally *t)
{
	long long passed = delta(a, b, C(frames_passed)), ours = delta(a, b, C(frames_ours)),
		  redir = delta(a, b, C(frames_redirected)), dropped = drops(a, b),
		  answered = delta(a, b, C(probes_answered)) + delta(a, b, C(probes_gone)),
		  bytes = delta(a, b, C(bytes_passed)) + delta(a, b, C(bytes_ours));

	/* Frames seen = passed + ours. */
	CHECK(passed + ours == t->frames, "%s: frames_passed %lld + frames_ours %lld, frames run %lld",
	      phase, passed, ours, t->frames);
	CHECK(bytes == t->bytes, "%s: bytes_passed + bytes_ours = %lld, bytes run %lld", phase,
	      bytes, t->bytes);
	CHECK(ours == redir + answered + dropped,
	      "%s: frames_ours %lld != frames_redirected %lld + probes_answered/gone %lld + drop_* %lld",
	      phase, ours, redir, answered, dropped);
	CHECK(answered == t->v[XDP_TX], "%s: probes_answered/gone +%lld, TX verdicts %lld", phase,
	      answered, t->v[XDP_TX]);
	CHECK(passed == t->v[XDP_PASS], "%s: frames_passed +%lld, PASS verdicts %lld", phase, passed,
	      t->v[XDP_PASS]);
	CHECK(redir == t->v[XDP_REDIRECT], "%s: frames_redirected +%lld, REDIRECT verdicts %lld",
	      phase, redir, t->v[XDP_REDIRECT]);
	CHECK(dropped == t->v[XDP_DROP], "%s: drop_* +%lld, DROP verdicts %lld", phase, dropped,
	      t->v[XDP_DROP]);
	CHECK(t->v[XDP_ABORTED] == 0 && t->v[XDP_REDIRECT + 1] == 0,
	      "%s: %lld ABORTED, %lld unknown verdicts", phase, t->v[XDP_ABORTED],
	      t->v[XDP_REDIRECT + 1]);
}

/* Nothing but frames_passed and bytes_passed moved. */
static void check_all_passed(const char *phase, const struct xw_stats *a, const struct xw_stats *b,
			     long long n)
{
	for (int i = 0; i < XW_STATS_NR; i++) {
		const char *name = xw_stat_name(i);
		long long d = delta(a, b, i);

		if (i == C(frames_passed))
			CHECK(d == n, "%s: %s +%lld, want +%lld", phase, name, d, n);
		else if (i != C(bytes_passed) && strncmp(name, "timer_", 6) && strncmp(name, "wake_", 5))
			CHECK(d == 0, "%s: %s changed by %lld (foreign frames only)", phase, name, d);
	}
}

/* ---- 1. EtherType sweep ------------------------------------------------------- */

static void ethertype_sweep(struct xwt_xdp *x)
{
	__u8 buf[XWT_MAX_FRAME];
	XW_OPTS(xw_stats, a);
	XW_OPTS(xw_stats, b);
	struct tally t = { 0 };
	long long foreign = 0;
	int len[3], et_off[3], v, mod, bad_verdict = 0, bad_mod = 0;

	xwt_set_knob(x, "encap", 0, XW_ENCAP_ETH);
	/* The body must be a valid SMALL for EP 0, so that only the EtherType
	 * decides.  With no tag, EtherType 0x8100/0x88A8 makes the program
	 * read the header's first 4 bytes as a VLAN tag: its inner type is
	 * (flags << 8 | rsvd0) = 0, never ours, so such frames pass. */
	for (int tags = 0; tags <= 2; tags++) {
		struct xwt_frame f = { .vlans = tags, .type = XW_PKT_SMALL, .frag_count = 1,
				       .payload_len = 8, .present = -1, .dst_ep = EP };
		const unsigned char *h;

		len[tags] = xwt_build(&f, buf);
		et_off[tags] = 12 + 4 * tags;
		/* The header is not aligned in the frame: read bytes. */
		h = buf + et_off[tags] + 2;
		REQUIRE(len[tags] >= 64, "frame of %d bytes", len[tags]);
		REQUIRE(((h[XW_OFFSETOF(struct xw_hdr, flags)] << 8) |
			 h[XW_OFFSETOF(struct xw_hdr, rsvd0)]) != XW_DEFAULT_ETHERTYPE,
			"inner type");
		a = xwt_stats(x);
		v = run(x, buf, len[tags], 0, &mod, NULL);
		b = xwt_stats(x);
		CHECK(v == XDP_REDIRECT, "%d tag(s), EtherType %#06x: %s, want REDIRECT", tags,
		      XW_DEFAULT_ETHERTYPE, xwt_verdict(v));
		CHECK(delta(&a, &b, C(frames_redirected)) == 1, "%d tag(s): not counted redirected",
		      tags);
	}

	a = xwt_stats(x);
	for (int tags = 0; tags <= 2; tags++) {
		struct xwt_frame f = { .vlans = tags, .type = XW_PKT_SMALL, .frag_count = 1,
				       .payload_len = 8, .present = -1, .dst_ep = EP };

		xwt_build(&f, buf);
		for (__u32 et = 0; et <= 0xFFFF; et++) {
			if (et == XW_DEFAULT_ETHERTYPE)
				continue;
			buf[et_off[tags]] = (__u8)(et >> 8);
			buf[et_off[tags] + 1] = (__u8)et;
			v = run(x, buf, len[tags], 0, &mod, &t);
			foreign++;
			if (v != XDP_PASS)
				bad_verdict++;
			if (mod)
				bad_mod++;
			FCHECK(v == XDP_PASS, "%d tag(s), EtherType %#06x: %s, want PASS", tags, et,
			       xwt_verdict(v));
			FCHECK(!mod, "%d tag(s), EtherType %#06x: passed frame modified", tags, et);
		}
	}
	b = xwt_stats(x);
	check_all_passed("EtherType sweep", &a, &b, foreign);
	check_accounting("EtherType sweep", &a, &b, &t);
	printf("EtherType sweep: %lld foreign frames (0, 1, 2 VLAN tags): %lld passed, "
	       "%d other verdicts, %d modified; EtherType %#06x redirected with 0, 1, 2 tags\n",
	       foreign, t.v[XDP_PASS], bad_verdict, bad_mod, XW_DEFAULT_ETHERTYPE);
}

/* ---- 2. UDP port sweep ---------------------------------------------------------- */

static void udp_sweep(struct xwt_xdp *x)
{
	__u8 buf[XWT_MAX_FRAME];
	XW_OPTS(xw_stats, a);
	XW_OPTS(xw_stats, b);
	struct tally t = { 0 };
	long long foreign = 0;
	int len, port_off, v, mod, bad_verdict = 0, bad_mod = 0;

	xwt_set_knob(x, "encap", 0, XW_ENCAP_UDP);
	/* Queues 0 and 5 in use: their ports (udp_port, udp_port + 5) are
	 * ours, every other port passes, those of the other queues too. */
	xwt_set_queue(x, 5, (__u32)getpid());
	a = xwt_stats(x);
	for (int tags = 0; tags <= 1; tags++) {
		struct xwt_frame f = { .encap = XWT_ENC_UDP, .vlans = tags, .type = XW_PKT_SMALL,
				       .frag_count = 1, .payload_len = 8, .present = -1,
				       .dst_ep = EP };

		len = xwt_build(&f, buf);
		port_off = 14 + 4 * tags + 20 + 2;
		REQUIRE(buf[port_off] == (XW_DEFAULT_UDP_PORT >> 8) &&
				buf[port_off + 1] == (XW_DEFAULT_UDP_PORT & 0xFF),
			"UDP port offset");
		for (__u32 port = 0; port <= 0xFFFF; port++) {
			if (port == XW_DEFAULT_UDP_PORT || port == XW_DEFAULT_UDP_PORT + 5)
				continue;
			buf[port_off] = (__u8)(port >> 8);
			buf[port_off + 1] = (__u8)port;
			v = run(x, buf, len, 0, &mod, &t);
			foreign++;
			if (v != XDP_PASS)
				bad_verdict++;
			if (mod)
				bad_mod++;
			FCHECK(v == XDP_PASS, "UDP, %d tag(s), port %u: %s, want PASS", tags, port,
			       xwt_verdict(v));
			FCHECK(!mod, "UDP, %d tag(s), port %u: passed frame modified", tags, port);
		}
	}
	/* Our EtherType is not ours in UDP-only mode. */
	for (int tags = 0; tags <= 2; tags++) {
		struct xwt_frame f = { .vlans = tags, .type = XW_PKT_SMALL, .frag_count = 1,
				       .payload_len = 8, .present = -1, .dst_ep = EP };

		len = xwt_build(&f, buf);
		v = run(x, buf, len, 0, &mod, &t);
		foreign++;
		CHECK(v == XDP_PASS && !mod, "encap udp, EtherType %#06x, %d tag(s): %s%s",
		      XW_DEFAULT_ETHERTYPE, tags, xwt_verdict(v), mod ? ", modified" : "");
	}
	b = xwt_stats(x);
	check_all_passed("UDP sweep", &a, &b, foreign);
	check_accounting("UDP sweep", &a, &b, &t);

	for (int tags = 0; tags <= 1; tags++) {
		struct xwt_frame f = { .encap = XWT_ENC_UDP, .vlans = tags, .type = XW_PKT_SMALL,
				       .frag_count = 1, .payload_len = 8, .present = -1,
				       .dst_ep = EP };

		for (int q = 0; q <= 5; q += 5) {
			f.udp_port = (__u16)(XW_DEFAULT_UDP_PORT + q);
			len = xwt_build(&f, buf);
			a = xwt_stats(x);
			v = run(x, buf, len, 0, &mod, NULL);
			b = xwt_stats(x);
			CHECK(v == XDP_REDIRECT, "UDP, %d tag(s), port %u: %s, want REDIRECT", tags,
			      f.udp_port, xwt_verdict(v));
			CHECK(delta(&a, &b, C(frames_redirected)) == 1, "UDP, %d tag(s), port %u: "
			      "not counted", tags, f.udp_port);
		}
	}
	xwt_set_queue(x, 5, 0);
	printf("UDP sweep: %lld foreign frames (ports 0..65535 but %u and %u (queues 0 and 5 in "
	       "use), 0 and 1 VLAN tag; EtherType %#06x): %lld passed, %d other verdicts, %d "
	       "modified; ports %u and %u redirected\n",
	       foreign, XW_DEFAULT_UDP_PORT, XW_DEFAULT_UDP_PORT + 5, XW_DEFAULT_ETHERTYPE,
	       t.v[XDP_PASS], bad_verdict, bad_mod, XW_DEFAULT_UDP_PORT, XW_DEFAULT_UDP_PORT + 5);
}

/* ---- 3. fuzz -------------------------------------------------------------------- */

static void fuzz_check(int v, int mod, const char *kind, long long i, int len)
{
	FCHECK(v == XDP_PASS || v == XDP_DROP || v == XDP_REDIRECT || v == XDP_TX,
	       "%s frame %lld (len %d, seed %#llx): verdict %d (%s)", kind, i, len, seed, v,
	       xwt_verdict(v));
	FCHECK(v != XDP_PASS || !mod, "%s frame %lld (len %d, seed %#llx): passed frame modified",
	       kind, i, len, seed);
}

/* Random bytes, often with parts of our encapsulation planted so that the
 * parser gets past the first checks. */
static int random_frame(__u8 *buf)
{
	int len = 14 + (int)rndn(1514 - 14 + 1), off = 12, tags;
	__u32 r = rndn(16);

	for (int i = 0; i < len; i += 8) {
		__u64 w = rnd();

		memcpy(buf + i, &w, (size_t)(len - i < 8 ? len - i : 8));
	}
	if (r < 4)
		return len; /* pure noise */
	/* VLAN tags: 0..3, either TPID, sometimes cut short by len. */
	tags = (int)rndn(4);
	for (int i = 0; i < tags && off + 4 <= len; i++) {
		buf[off] = rndn(2) ? 0x81 : 0x88;
		buf[off + 1] = buf[off] == 0x81 ? 0x00 : 0xA8;
		off += 4;
	}
	if (off + 2 > len)
		return len;
	if (r < 10) {
		/* our EtherType, header mostly sane */
		buf[off] = XW_DEFAULT_ETHERTYPE >> 8;
		buf[off + 1] = XW_DEFAULT_ETHERTYPE & 0xFF;
		off += 2;
		if (off + 2 <= len && rndn(2)) {
			buf[off] = XW_VERSION;
			buf[off + 1] = (__u8)rndn(XW_PKT_TYPE_MAX + 1);
		}
		if (off + 6 <= len && rndn(2)) {
			buf[off + 4] = 0;
			buf[off + 5] = (__u8)rndn(10);
		}
	} else {
		/* IPv4 / UDP, our port most of the time */
		buf[off] = 0x08;
		buf[off + 1] = 0x00;
		off += 2;
		if (off + 20 > len)
			return len;
		buf[off] = (__u8)(rndn(4) ? 0x45 : (0x40 | rndn(16)));
		buf[off + 9] = rndn(8) ? IPPROTO_UDP : (__u8)rnd();
		if (rndn(4)) {
			buf[off + 6] = 0;
			buf[off + 7] = 0;
		}
		if (rndn(2)) {
			__u16 tot = (__u16)(len - off - rndn(8));

			buf[off + 2] = (__u8)(tot >> 8);
			buf[off + 3] = (__u8)tot;
		}
		off += (buf[off] & 0x0F) * 4;
		if (off + 8 > len)
			return len;
		if (rndn(8)) {
			buf[off + 2] = XW_DEFAULT_UDP_PORT >> 8;
			buf[off + 3] = XW_DEFAULT_UDP_PORT & 0xFF;
		}
		if (rndn(2)) {
			__u16 ulen = (__u16)(len - off - rndn(8));

			buf[off + 4] = (__u8)(ulen >> 8);
			buf[off + 5] = (__u8)ulen;
		}
		off += 8;
		if (off + 2 <= len && rndn(4)) {
			buf[off] = XW_VERSION;
			buf[off + 1] = (__u8)rndn(XW_PKT_TYPE_MAX + 1);
		}
	}
	return len;
}

/* A valid SMALL, MEDIUM or PULL frame for EP, Ethernet or UDP. */
static int valid_frame(__u8 *buf, struct xwt_frame *f)
{
	memset(f, 0, sizeof(*f));
	f->encap = rndn(2) ? XWT_ENC_UDP : XWT_ENC_ETH;
	f->vlans = (int)rndn(3);
	f->ip_opt_words = f->encap == XWT_ENC_UDP && !rndn(4) ? (int)rndn(4) : 0;
	f->dst_ep = EP;
	f->src_ep = (__u16)rndn(64);
	f->flags = (__u8)rndn(8);
	f->present = -1;
	f->pad = rndn(4) ? 0 : (int)rndn(64);
	switch (rndn(3)) {
	case 0:
		f->type = XW_PKT_SMALL;
		f->frag_count = 1;
		f->payload_len = (__u16)rndn(1200);
		break;
	case 1:
		f->type = XW_PKT_MEDIUM;
		f->frag_count = 1 + rndn(16);
		f->frag_idx = rndn(f->frag_count);
		f->payload_len = (__u16)rndn(1200);
		f->frag_off = f->frag_idx * 1200;
		f->msg_len = f->frag_off + f->payload_len + rndn(4000);
		break;
	default:
		f->type = XW_PKT_PULL;
		f->frag_count = 1 + rndn(100);
		f->frag_idx = rndn(f->frag_count);
		f->msg_len = 1 + rndn(1 << 20);
		f->frag_off = rndn(f->msg_len + 1);
		f->payload_len = sizeof(struct xw_pull_req);
		break;
	}
	return xwt_build(f, buf);
}

/* Flip bits, change bytes, cut or extend: mostly in the headers. */
static int mutate(__u8 *buf, int len)
{
	int n = 1 + (int)rndn(4), hdr_end = 14 + 8 + 24 + 8 + XW_HDR_LEN;

	for (int i = 0; i < n; i++) {
		int span = rndn(8) ? (hdr_end < len ? hdr_end : len) : len;
		int pos = (int)rndn((__u32)span);

		switch (rndn(8)) {
		case 0:
		case 1:
		case 2:
		case 3:
			buf[pos] ^= (__u8)(1u << rndn(8));
			break;
		case 4:
		case 5:
			buf[pos] = (__u8)rnd();
			break;
		case 6:
			buf[pos] = rndn(2) ? 0x00 : 0xFF;
			break;
		default:
			if (rndn(2)) {
				len = 14 + (int)rndn((__u32)(len - 14 + 1)); /* cut */
			} else {
				int more = (int)rndn(64);

				if (len + more > 1514)
					more = 1514 - len;
				for (int k = 0; k < more; k++)
					buf[len + k] = (__u8)rnd();
				len += more;
			}
			break;
		}
	}
	return len;
}

static long long scaled(long long n, int scale)
{
	long long s = n * scale / 100;

	return s < 1 ? 1 : s;
}

static void fuzz(struct xwt_xdp *x, int scale)
{
	__u8 buf[XWT_MAX_FRAME], base[XWT_MAX_FRAME];
	long long n_random = scaled(FUZZ_RANDOM, scale), n_mut = scaled(FUZZ_MUTATE, scale);
	struct tally tr = { 0 }, tm = { 0 }, tb = { 0 }, all;
	XW_OPTS(xw_stats, a);
	XW_OPTS(xw_stats, b);
	XW_OPTS(xw_stats, m);
	struct xwt_frame f;
	int len, blen = 0, v, mod, base_bad = 0;
	__u32 queue;

	xwt_set_knob(x, "encap", 0, XW_ENCAP_ALL);
	a = xwt_stats(x);
	for (long long i = 0; i < n_random; i++) {
		len = random_frame(buf);
		queue = rndn(8) ? 0 : 1;
		v = run(x, buf, len, queue, &mod, &tr);
		fuzz_check(v, mod, "random", i, len);
	}
	m = xwt_stats(x);
	check_accounting("random frames", &a, &m, &tr);

	for (long long i = 0; i < n_mut; i++) {
		if (i % MUTANTS_PER_BASE == 0) {
			blen = valid_frame(base, &f);
			v = run(x, base, blen, 0, &mod, &tb);
			if (v != XDP_REDIRECT)
				base_bad++;
			FCHECK(v == XDP_REDIRECT && !mod,
			       "valid %s frame (%s, %d tags, len %d, seed %#llx): %s%s",
			       xw_pkt_type_name(f.type), f.encap == XWT_ENC_UDP ? "udp" : "eth",
			       f.vlans, blen, seed, xwt_verdict(v), mod ? ", modified" : "");
		}
		memcpy(buf, base, sizeof(buf));
		len = mutate(buf, blen);
		queue = rndn(16) ? 0 : 1;
		v = run(x, buf, len, queue, &mod, &tm);
		fuzz_check(v, mod, "mutated", i, len);
	}
	b = xwt_stats(x);
	all = tm;
	all.frames += tb.frames;
	all.bytes += tb.bytes;
	for (size_t k = 0; k < sizeof(all.v) / sizeof(all.v[0]); k++)
		all.v[k] += tb.v[k];
	check_accounting("mutated frames", &m, &b, &all);

	printf("fuzz (seed %#llx): %lld random frames: %lld PASS, %lld DROP, %lld REDIRECT\n", seed,
	       tr.frames, tr.v[XDP_PASS], tr.v[XDP_DROP], tr.v[XDP_REDIRECT]);
	printf("fuzz: %lld valid frames (%d not redirected), %lld mutations: %lld PASS, %lld DROP, "
	       "%lld REDIRECT\n",
	       tb.frames, base_bad, tm.frames, tm.v[XDP_PASS], tm.v[XDP_DROP], tm.v[XDP_REDIRECT]);
	printf("fuzz: counters over both phases:");
	for (int i = 0; i < XW_STATS_NR; i++) {
		const char *name = xw_stat_name(i);

		if (!strncmp(name, "drop_", 5) || !strncmp(name, "frames_", 7))
			printf(" %s=%lld", name, delta(&a, &b, i));
	}
	printf("\n");
	/* Every drop reason is reachable from these frames; a reason never
	 * hit means the fuzzer is not reaching that check any more. */
	for (int i = 0; i < XW_STATS_NR; i++)
		if (!strncmp(xw_stat_name(i), "drop_", 5))
			CHECK(scale < 100 || delta(&a, &b, i) > 0, "fuzz never hit %s (seed %#llx)",
			      xw_stat_name(i), seed);
}

int main(void)
{
	const char *s = getenv("XW_SWEEP_SEED"), *sc = getenv("XW_SWEEP_SCALE");
	int scale = sc ? atoi(sc) : 100;
	unsigned long long t0, t1, t2, t3;
	XW_OPTS(xw_stats, total);
	struct xwt_xdp x;

	seed = s ? strtoull(s, NULL, 0) : (xwu_now_ns() ^ ((unsigned long long)getpid() << 32));
	if (!seed)
		seed = 0x9E3779B97F4A7C15ULL;
	rng_state = seed;
	if (scale < 1)
		scale = 1;

	xwt_setup(&x, EP);
	xwt_set_endpoint(&x, EP_NOSOCK, XW_EPF_ACTIVE, 0);
	xwt_set_endpoint(&x, EP_SESSION, XW_EPF_ACTIVE, 0);
	xwt_set_knob(&x, "session", EP_SESSION, 0x1234);
	xwt_set_endpoint(&x, EP_QUEUE1, XW_EPF_ACTIVE, 1);

	t0 = xwu_now_ns();
	ethertype_sweep(&x);
	t1 = xwu_now_ns();
	udp_sweep(&x);
	t2 = xwu_now_ns();
	fuzz(&x, scale);
	t3 = xwu_now_ns();

	total = xwt_stats(&x);
	CHECK(total.frames_ours == total.frames_redirected + total.probes_answered +
					   total.probes_gone + drops(&(struct xw_stats){ 0 }, &total),
	      "whole run: frames_ours %llu != redirected %llu + answered %llu + gone %llu + drops %lld",
	      (unsigned long long)total.frames_ours, (unsigned long long)total.frames_redirected,
	      (unsigned long long)total.probes_answered, (unsigned long long)total.probes_gone,
	      drops(&(struct xw_stats){ 0 }, &total));
	printf("%llu frames in %.1f s (EtherType sweep %.1f s, UDP sweep %.1f s, fuzz %.1f s; "
	       "%.2f us per frame)\n",
	       (unsigned long long)(total.frames_passed + total.frames_ours), (t3 - t0) / 1e9,
	       (t1 - t0) / 1e9, (t2 - t1) / 1e9, (t3 - t2) / 1e9,
	       (t3 - t0) / 1e3 / (double)(total.frames_passed + total.frames_ours + 1));
	xwt_teardown(&x);
	if (xwt_failures)
		fprintf(stderr, "seed %#llx (replay: XW_SWEEP_SEED=%#llx)\n", seed, seed);
	return xwt_done();
}
