// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The fault-injection harness (tests/lib/fault.h, tests/bpf/impair.bpf.c) tested
 * with raw frames, not the library: this process creates AF_PACKET sockets
 * in hosts A and B (no XDP program is attached), sends numbered xdpwake
 * frames through the impairing middle namespace and checks what arrives:
 * clean, drop list, random drop (same seed -> same losses), bursty drop,
 * one-bit corruption, truncation, duplication, blackholes (window and
 * periodic), relay delay and reordering, and that traffic that is not
 * xdpwake's (another EtherType, another UDP port, ARP + IP) is untouched.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <netinet/in.h>
#include <linux/ip.h>
#include <linux/udp.h>

#include "fault.h"

#define FMAX 1600
#define RMAX 5000
#define ETH_OTHER 0x88B6

static struct xwf_topo T;
static int txs[2], rxs[2], ifx[2];

struct rxf {
	__u32 seq, msg, len;
	__u8 type;
	__u64 t_rx; /* CLOCK_REALTIME, kernel receive time */
	__u8 data[FMAX];
};
static struct rxf got[RMAX];
static int ngot;
static int collect_any; /* every frame of our EtherType is this phase's, in order */
static __u64 t_send[RMAX]; /* CLOCK_REALTIME */
static __u64 m_send[RMAX]; /* CLOCK_MONOTONIC */

static __u64 real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

enum { ENC_ETH, ENC_UDP };

/* Frame @seq of @phase from host @from: deterministic bytes. */
static __u32 build(__u8 *f, int from, __u32 phase, __u32 seq, __u8 type, int enc, __u16 ethertype,
		   __u16 port)
{
	__u32 plen = 4 + (seq * 37 + phase * 11) % 900, off = 14;
	struct xw_hdr h;

	memcpy(f, T.mac[from ^ 1], 6);
	memcpy(f + 6, T.mac[from], 6);
	if (enc == ENC_UDP) {
		struct iphdr ip;
		struct udphdr u;

		f[12] = 0x08;
		f[13] = 0x00;
		memset(&ip, 0, sizeof(ip));
		ip.version = 4;
		ip.ihl = 5;
		ip.ttl = 64;
		ip.protocol = IPPROTO_UDP;
		ip.tot_len = htons((__u16)(20 + 8 + XW_HDR_LEN + plen));
		ip.saddr = inet_addr(T.ip[from]);
		ip.daddr = inet_addr(T.ip[from ^ 1]);
		ip.check = xwt_ip_csum(&ip, sizeof(ip));
		memcpy(f + 14, &ip, sizeof(ip));
		u.source = htons(port);
		u.dest = htons(port);
		u.len = htons((__u16)(8 + XW_HDR_LEN + plen));
		u.check = 0;
		memcpy(f + 34, &u, sizeof(u));
		off = 42;
	} else {
		f[12] = (__u8)(ethertype >> 8);
		f[13] = (__u8)ethertype;
	}
	memset(&h, 0, sizeof(h));
	h.version = XW_VERSION;
	h.type = type;
	h.dst_ep = htons(1);
	h.src_ep = htons(1);
	h.seq = htonl(seq);
	h.msg_id = htonl(phase);
	h.msg_len = htonl(plen);
	h.frag_count = htonl(1);
	h.payload_len = htons((__u16)plen);
	h.match = htobe64(0x1234567800000000ULL | seq);
	memcpy(f + off, &h, sizeof(h));
	off += XW_HDR_LEN;
	for (__u32 i = 0; i < plen; i++)
		f[off + i] = (__u8)(seq * 7 + phase * 13 + i * 31 + (i >> 8));
	return off + plen;
}

/* xdpwake frames (what M's tc program counts as seen) sent from each host
 * since the last phase_begin(). */
static __u64 ours_sent[2];

static void tx(int from, const __u8 *f, __u32 len)
{
	struct sockaddr_ll sll;
	__u16 et = (__u16)(f[12] << 8 | f[13]);

	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_ifindex = ifx[from];
	sll.sll_halen = 6;
	memcpy(sll.sll_addr, f, 6);
	REQUIRE(sendto(txs[from], f, len, 0, (struct sockaddr *)&sll, sizeof(sll)) == (ssize_t)len,
		"sendto: %s", strerror(errno));
	if (et == XW_DEFAULT_ETHERTYPE ||
	    (et == ETH_P_IP && len >= 42 && f[23] == IPPROTO_UDP &&
	     (((f[34] << 8) | f[35]) == XW_DEFAULT_UDP_PORT ||
	      ((f[36] << 8) | f[37]) == XW_DEFAULT_UDP_PORT)))
		ours_sent[from]++;
}

struct sendspec {
	int from, enc;
	__u32 phase, n, gap_us;
	__u16 ethertype, port;
	int no_marker;
};

/* n frames seq 0..n-1 (type SMALL), then a marker (type CLOSE, seq n). */
static void send_frames(const struct sendspec *s)
{
	__u8 f[FMAX];
	__u16 et = s->ethertype ? s->ethertype : XW_DEFAULT_ETHERTYPE;
	__u16 port = s->port ? s->port : XW_DEFAULT_UDP_PORT;

	REQUIRE(s->n < RMAX, "n");
	for (__u32 i = 0; i <= s->n; i++) {
		__u32 len;

		if (i == s->n && s->no_marker)
			break;
		len = build(f, s->from, s->phase, i, i == s->n ? XW_PKT_CLOSE : XW_PKT_SMALL, s->enc,
			    et, port);
		t_send[i] = real_ns();
		m_send[i] = xwu_now_ns();
		tx(s->from, f, len);
		if (s->gap_us)
			usleep(s->gap_us);
		else if (i % 16 == 15)
			usleep(100);
	}
}

/* Frames of @phase arriving at host @to, until the marker and @want data
 * frames (or the marker and linger_ms), or timeout_ms. */
static void collect(int to, __u32 phase, __u32 want, int linger_ms, int timeout_ms,
		    __u16 ethertype, __u16 port)
{
	__u64 end = xwu_now_ns() + (__u64)timeout_ms * 1000000ULL, marker_t = 0;
	__u16 et = ethertype ? ethertype : XW_DEFAULT_ETHERTYPE;
	__u16 pt = port ? port : XW_DEFAULT_UDP_PORT;
	__u32 data = 0;

	ngot = 0;
	for (int spins = 0; spins < 1000000; spins++) {
		__u64 now = xwu_now_ns();
		struct pollfd p = { .fd = rxs[to], .events = POLLIN };
		char cbuf[256];
		struct iovec iov;
		struct msghdr mh;
		struct sockaddr_ll from;
		struct rxf *r = &got[ngot < RMAX ? ngot : RMAX - 1];
		struct xw_hdr h;
		ssize_t n;
		int off;

		if (marker_t && data >= want)
			break;
		if (marker_t && now > marker_t + (__u64)linger_ms * 1000000ULL)
			break;
		if (now > end)
			break;
		if (poll(&p, 1, 5) <= 0)
			continue;
		iov.iov_base = r->data;
		iov.iov_len = FMAX;
		memset(&mh, 0, sizeof(mh));
		mh.msg_name = &from;
		mh.msg_namelen = sizeof(from);
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		n = recvmsg(rxs[to], &mh, MSG_DONTWAIT);
		if (n < 0)
			continue;
		if (from.sll_pkttype == PACKET_OUTGOING || n < 14)
			continue;
		off = -1;
		if (((r->data[12] << 8) | r->data[13]) == et)
			off = 14;
		else if (r->data[12] == 0x08 && r->data[13] == 0 && n >= 42 && r->data[23] == 17 &&
			 ((r->data[36] << 8) | r->data[37]) == pt)
			off = 42;
		if (off < 0)
			continue;
		memset(&h, 0, sizeof(h));
		if (n >= off + 24)
			memcpy(&h, r->data + off, 24);
		if (collect_any && (n < off + 24 || h.type != XW_PKT_CLOSE ||
				    ntohl(h.msg_id) != phase)) {
			/* corrupt or truncated: numbered by arrival */
			h.type = XW_PKT_SMALL;
			h.seq = htonl((__u32)ngot);
			h.msg_id = htonl(phase);
		}
		if (ntohl(h.msg_id) != phase)
			continue;
		r->seq = ntohl(h.seq);
		r->msg = phase;
		r->len = (__u32)n;
		r->type = h.type;
		r->t_rx = 0;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPNS) {
				struct timespec ts;

				memcpy(&ts, CMSG_DATA(c), sizeof(ts));
				r->t_rx = (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
			}
		if (!r->t_rx)
			r->t_rx = real_ns();
		if (h.type == XW_PKT_CLOSE) {
			if (!marker_t)
				marker_t = xwu_now_ns();
			continue;
		}
		data++;
		REQUIRE(ngot < RMAX - 1, "too many frames");
		ngot++;
	}
}

static int cnt_seq(__u32 seq)
{
	int c = 0;

	for (int i = 0; i < ngot; i++)
		c += got[i].seq == seq;
	return c;
}

/* lost[seq] = 1 for seqs that did not arrive; returns their number. */
static int losses(__u32 n, __u8 *lost)
{
	int k = 0;

	memset(lost, 1, n);
	for (int i = 0; i < ngot; i++)
		if (got[i].seq < n)
			lost[got[i].seq] = 0;
	for (__u32 i = 0; i < n; i++)
		k += lost[i];
	return k;
}

/*
 * When M decided on frame i, as an interval of CLOCK_MONOTONIC: not
 * before it was sent (m_send), not after it arrived at B (its kernel
 * receive time) or, if it was lost, after the next later frame that
 * arrived (frames keep their order on this path); UINT64_MAX if none.
 * Classifying frames by these intervals instead of by send time +- a
 * margin holds however late the sender or the softirq ran.
 */
static void decided(__u32 n, const __u8 *lost, __u64 *lo, __u64 *hi)
{
	__u64 next = UINT64_MAX;

	for (__u32 i = 0; i < n; i++)
		hi[i] = UINT64_MAX;
	for (int g = 0; g < ngot; g++) {
		__u32 q = got[g].seq;

		/* t_rx is CLOCK_REALTIME: to MONOTONIC via the frame's own
		 * pair of send stamps, taken back to back */
		if (q < n)
			hi[q] = got[g].t_rx - (t_send[q] - m_send[q]);
	}
	for (__u32 i = n; i-- > 0;) {
		lo[i] = m_send[i];
		if (lost[i])
			hi[i] = next;
		else if (hi[i] < next)
			next = hi[i];
	}
}

static struct xwf_cfg small_only(void)
{
	struct xwf_cfg c;

	memset(&c, 0, sizeof(c));
	c.type_mask = XWF_TYPE(XW_PKT_SMALL);
	return c;
}

/*
 * A phase ends when M has decided on every xdpwake frame it sent: a
 * phase's collect() may stop before the last frames of the phase passed
 * M (lost ones are not waited for; a frame can sit in the sending CPU's
 * receive backlog while later ones, sent from the other CPU, pass), and
 * such a frame must not meet the next phase's config (the relay of
 * t_relay_delay would forward and count it as one of its own).
 */
static void phase_begin(void)
{
	for (int dir = 0; dir < 2; dir++) {
		__u64 seen = 0, t0 = xwu_now_ns(), late = 0;

		for (int i = 0; i < 5000; i++) {
			seen = xwf_counters(&T, dir).seen;
			if (i == 0)
				late = ours_sent[dir] - seen;
			if (seen >= ours_sent[dir])
				break;
			usleep(1000);
		}
		if (late && seen == ours_sent[dir])
			printf("phase end: M saw the last %llu frames %c->%c %.1f ms after the phase\n",
			       (unsigned long long)late, "AB"[dir], "BA"[dir],
			       (xwu_now_ns() - t0) / 1e6);
		CHECK(seen == ours_sent[dir], "%c->%c: M saw %llu of the %llu xdpwake frames sent",
		      "AB"[dir], "BA"[dir], (unsigned long long)seen,
		      (unsigned long long)ours_sent[dir]);
		ours_sent[dir] = 0;
	}
	xwf_clear(&T);
	xwf_reset_counters(&T);
}

/* ---------------------------------------------------------------- */

static void t_clean(void)
{
	__u8 f[FMAX];

	for (int dir = 0; dir < 2; dir++) {
		__u32 n = dir ? 100 : 200, ph = 100 + (__u32)dir, ok = 0;
		struct sendspec s = { .from = dir, .phase = ph, .n = n };
		struct xwf_counters c;
		struct xwf_cfg cfg = small_only();

		phase_begin();
		xwf_set(&T, dir, &cfg);
		send_frames(&s);
		collect(dir ^ 1, ph, n, 50, 3000, 0, 0);
		CHECK((__u32)ngot == n, "clean %c: %d of %u frames arrived", "AB"[dir], ngot, n);
		if ((__u32)ngot != n) {
			/* seen once in a loaded run (208 of 200, the middle's
			 * counters clean): which frames came twice, and when */
			for (int i = 0; i < ngot; i++)
				if (cnt_seq(got[i].seq) != 1)
					fprintf(stderr, "  arrival %d: seq %u (%d times) len %u at %.3f ms\n",
						i, got[i].seq, cnt_seq(got[i].seq), got[i].len,
						(double)(got[i].t_rx - t_send[0]) / 1e6);
		}
		for (int i = 0; i < ngot; i++) {
			__u32 len = build(f, dir, ph, got[i].seq, XW_PKT_SMALL, ENC_ETH,
					  XW_DEFAULT_ETHERTYPE, 0);

			ok += got[i].seq == (__u32)i && got[i].len == len &&
			      !memcmp(got[i].data, f, len);
		}
		CHECK(ok == n, "clean %c: %u of %u frames in order and unmodified", "AB"[dir], ok, n);
		c = xwf_counters(&T, dir);
		CHECK(c.seen == n + 1 && c.matched == n && c.dropped == 0 && c.blackholed == 0 &&
			      c.corrupted == 0 && c.truncated == 0 && c.duplicated == 0 && c.errors == 0,
		      "clean %c counters: seen %llu matched %llu dropped %llu", "AB"[dir],
		      (unsigned long long)c.seen, (unsigned long long)c.matched,
		      (unsigned long long)c.dropped);
	}
	printf("clean: 200 A->B + 100 B->A frames, all in order, byte for byte\n");
}

static void t_drop_list(void)
{
	__u32 list_a[] = { 0, 5, 17, 99, 150, 199 }, list_b[] = { 3 };
	__u8 lost[RMAX];

	for (int dir = 0; dir < 2; dir++) {
		__u32 *list = dir ? list_b : list_a, nl = dir ? 1 : 6, n = 200, ph = 200 + (__u32)dir;
		struct sendspec s = { .from = dir, .phase = ph, .n = n };
		struct xwf_cfg cfg = small_only();
		struct xwf_counters c;
		int k, exact = 1;

		phase_begin();
		cfg.ndrop = nl;
		memcpy(cfg.drop_idx, list, nl * sizeof(__u32));
		xwf_set(&T, dir, &cfg);
		send_frames(&s);
		collect(dir ^ 1, ph, n, 50, 3000, 0, 0);
		k = losses(n, lost);
		for (__u32 i = 0; i < n; i++) {
			int want = 0;

			for (__u32 j = 0; j < nl; j++)
				want |= list[j] == i;
			if (lost[i] != want)
				exact = 0;
		}
		c = xwf_counters(&T, dir);
		CHECK(exact && k == (int)nl, "drop list %c: %d lost, not exactly the list", "AB"[dir],
		      k);
		CHECK(c.dropped == nl && c.dropped_list == nl, "drop list %c: counters %llu/%llu",
		      "AB"[dir], (unsigned long long)c.dropped, (unsigned long long)c.dropped_list);
		/* The other direction is untouched meanwhile. */
		CHECK(xwf_counters(&T, dir ^ 1).dropped == 0, "other direction dropped");
	}
	printf("drop list: exactly frames 0 5 17 99 150 199 (A->B) and 3 (B->A) lost\n");
}

static int random_run(__u32 ph, __u32 n, __u8 *lost)
{
	struct sendspec s = { .from = 0, .phase = ph, .n = n };
	struct xwf_cfg cfg = small_only();
	struct xwf_counters c;
	int k;

	phase_begin();
	cfg.drop_p = XWF_P(0.10);
	xwf_set(&T, XWF_A_TO_B, &cfg);
	send_frames(&s);
	collect(1, ph, n, 50, 5000, 0, 0);
	k = losses(n, lost);
	c = xwf_counters(&T, XWF_A_TO_B);
	CHECK(c.dropped == (__u64)k && c.matched == n, "random drop: %d lost, counter %llu", k,
	      (unsigned long long)c.dropped);
	CHECK(ngot + k == (int)n, "random drop: %d arrived + %d lost != %u (duplicates?)", ngot, k,
	      n);
	return k;
}

static void t_random(void)
{
	static __u8 l1[RMAX], l2[RMAX], l3[RMAX];
	__u32 n = 1000;
	int k1, k2, k3;

	/* Same seed, same frame sequence: the same frames lost. */
	k1 = random_run(300, n, l1);
	k2 = random_run(300, n, l2);
	CHECK(k1 >= 50 && k1 <= 150, "10%% drop: %d of %u lost", k1, n);
	CHECK(k1 == k2 && !memcmp(l1, l2, n), "same seed: %d then %d lost, different frames", k1,
	      k2);
	/* Another seed: other frames. */
	xwf_set_seed(&T, T.seed ^ 0x5555AAAA5555AAAAULL);
	k3 = random_run(300, n, l3);
	xwf_set_seed(&T, T.seed ^ 0x5555AAAA5555AAAAULL);
	CHECK(memcmp(l1, l3, n) != 0, "another seed lost the same %d frames", k3);
	printf("random 10%% drop: %d of %u lost, the same %d with the same seed, %d others with "
	       "another seed\n", k1, n, k2, k3);
}

static void t_bursty(void)
{
	static __u8 lost[RMAX];
	__u32 n = 2000, ph = 400;
	struct sendspec s = { .from = 0, .phase = ph, .n = n };
	struct xwf_cfg cfg = small_only();
	struct xwf_counters c;
	int k, runs = 0;

	phase_begin();
	cfg.ge_p_gb = XWF_P(0.02);
	cfg.ge_p_bg = XWF_P(0.25);
	cfg.ge_drop_bad = XWF_ALWAYS;
	xwf_set(&T, XWF_A_TO_B, &cfg);
	send_frames(&s);
	collect(1, ph, n, 50, 5000, 0, 0);
	k = losses(n, lost);
	for (__u32 i = 0; i < n; i++)
		runs += lost[i] && (i == 0 || !lost[i - 1]);
	c = xwf_counters(&T, XWF_A_TO_B);
	CHECK(k > 0 && runs > 0, "Gilbert-Elliott: nothing lost");
	CHECK(runs && (double)k / runs >= 1.5, "Gilbert-Elliott: %d lost in %d runs (mean %.2f, "
	      "want bursts)", k, runs, runs ? (double)k / runs : 0.0);
	CHECK(c.dropped_bad == (__u64)k && c.dropped == (__u64)k, "Gilbert-Elliott counters %llu",
	      (unsigned long long)c.dropped_bad);
	printf("bursty drop: %d of %u lost in %d bursts (mean %.1f)\n", k, n, runs,
	       runs ? (double)k / runs : 0.0);
}

/* Number of differing bits, and the first one's bit offset. */
static int bitdiff(const __u8 *a, const __u8 *b, __u32 len, __u32 *first)
{
	int d = 0;

	*first = ~0u;
	for (__u32 i = 0; i < len; i++) {
		__u8 x = a[i] ^ b[i];

		if (x && *first == ~0u)
			*first = i * 8 + (__u32)__builtin_ctz(x);
		d += __builtin_popcount(x);
	}
	return d;
}

static void t_corrupt(void)
{
	__u8 f[FMAX];
	struct {
		__u32 p, off, n;
	} cases[] = { { XWF_ALWAYS, 0, 200 }, { XWF_P(0.25), 0, 400 }, { XWF_ALWAYS, XW_HDR_LEN, 100 } };

	for (int k = 0; k < 3; k++) {
		__u32 ph = 500 + (__u32)k, n = cases[k].n, minbit = (14 + cases[k].off) * 8;
		struct sendspec s = { .from = 0, .phase = ph, .n = n };
		struct xwf_cfg cfg = small_only();
		struct xwf_counters c;
		int one = 0, zero = 0, bad = 0;
		__u32 last = 0;

		phase_begin();
		cfg.corrupt_p = cases[k].p;
		cfg.corrupt_off = cases[k].off;
		xwf_set(&T, XWF_A_TO_B, &cfg);
		send_frames(&s);
		collect_any = 1;
		collect(1, ph, n, 50, 3000, 0, 0);
		collect_any = 0;
		for (int i = 0; i < ngot; i++) {
			__u32 len = build(f, 0, ph, got[i].seq, XW_PKT_SMALL, ENC_ETH,
					  XW_DEFAULT_ETHERTYPE, 0), first;
			int d;

			if (got[i].len != len) {
				bad++;
				continue;
			}
			d = bitdiff(got[i].data, f, len, &first);
			if (d == 0)
				zero++;
			else if (d == 1 && first >= minbit)
				one++, last = first;
			else
				bad++;
		}
		c = xwf_counters(&T, XWF_A_TO_B);
		CHECK((__u32)ngot == n && bad == 0, "corrupt %d: %d of %u arrived, %d with a wrong "
		      "length or more than one bit / a bit before %u", k, ngot, n, bad, minbit);
		CHECK(c.corrupted == (__u64)one, "corrupt %d: %d frames one bit off, counter %llu", k,
		      one, (unsigned long long)c.corrupted);
		if (cases[k].p == XWF_ALWAYS)
			CHECK(one == (int)n && c.last_bit == last, "corrupt %d: %d of %u, last bit "
			      "%u (counter %llu)", k, one, n, last, (unsigned long long)c.last_bit);
		else
			CHECK(one > 50 && one < 150, "corrupt 25%%: %d of %u", one, n);
		printf("corruption %d: %d of %u frames differ in exactly one bit at or after bit "
		       "%u\n", k, one, n, minbit);
	}
}

static void t_truncate(void)
{
	__u8 f[FMAX];
	__u32 n = 200, ph = 600;
	struct sendspec s = { .from = 0, .phase = ph, .n = n };
	struct xwf_cfg cfg = small_only();
	struct xwf_counters c;
	int shorter = 0;
	__u32 minlen = ~0u;

	phase_begin();
	cfg.trunc_p = XWF_ALWAYS;
	xwf_set(&T, XWF_A_TO_B, &cfg);
	send_frames(&s);
	collect_any = 1;
	collect(1, ph, n, 50, 3000, 0, 0);
	collect_any = 0;
	for (int i = 0; i < ngot; i++) {
		__u32 len = build(f, 0, ph, got[i].seq, XW_PKT_SMALL, ENC_ETH,
				  XW_DEFAULT_ETHERTYPE, 0);

		shorter += got[i].len < len && got[i].len > 14 && !memcmp(got[i].data, f, got[i].len);
		if (got[i].len < minlen)
			minlen = got[i].len;
	}
	c = xwf_counters(&T, XWF_A_TO_B);
	CHECK((__u32)ngot == n && shorter == (int)n, "truncate: %d of %u arrived, %d shorter "
	      "prefixes", ngot, n, shorter);
	CHECK(c.truncated == n, "truncate counter %llu", (unsigned long long)c.truncated);
	printf("truncation: %d of %u frames cut (shortest %u bytes), prefixes intact\n", shorter, n,
	       minlen);
}

static void t_dup(void)
{
	__u8 f[FMAX];
	struct {
		__u32 p, n;
	} cases[] = { { XWF_ALWAYS, 100 }, { XWF_P(0.3), 400 } };

	for (int k = 0; k < 2; k++) {
		__u32 n = cases[k].n, ph = 700 + (__u32)k;
		struct sendspec s = { .from = 0, .phase = ph, .n = n };
		struct xwf_cfg cfg = small_only();
		struct xwf_counters c;
		int twice = 0, once = 0, bad = 0;

		phase_begin();
		cfg.dup_p = cases[k].p;
		xwf_set(&T, XWF_A_TO_B, &cfg);
		send_frames(&s);
		collect(1, ph, ~0u, 100, 3000, 0, 0);
		for (__u32 i = 0; i < n; i++) {
			int m = cnt_seq(i);

			twice += m == 2;
			once += m == 1;
			bad += m < 1 || m > 2;
		}
		for (int i = 0; i < ngot; i++) {
			__u32 len = build(f, 0, ph, got[i].seq, XW_PKT_SMALL, ENC_ETH,
					  XW_DEFAULT_ETHERTYPE, 0);

			bad += got[i].len != len || memcmp(got[i].data, f, len);
		}
		c = xwf_counters(&T, XWF_A_TO_B);
		CHECK(bad == 0 && (__u64)ngot == n + c.duplicated && c.duplicated == (__u64)twice,
		      "dup %d: %d frames for %u sent, %d twice, %d bad, counter %llu", k, ngot, n,
		      twice, bad, (unsigned long long)c.duplicated);
		if (k == 0)
			CHECK(twice == (int)n, "dup 100%%: %d of %u twice", twice, n);
		else
			CHECK(twice > 60 && twice < 180, "dup 30%%: %d of %u twice", twice, n);
		printf("duplication %d: %d of %u frames delivered twice, identical\n", k, twice, n);
	}
}

static void t_blackhole(void)
{
	__u8 lost[RMAX];
	__u32 n = 200, ph = 800;
	struct sendspec s = { .from = 0, .phase = ph, .n = n, .gap_us = 2000 };
	struct xwf_cfg cfg = small_only();
	struct xwf_counters c;
	static __u64 lo[RMAX], hi[RMAX];
	int k, in_ok = 0, in_n = 0, out_ok = 0, out_n = 0, before = 0, after = 0;

	/* A window from +100 ms, 200 ms long; one frame every ~2 ms. */
	phase_begin();
	xwf_blackhole_in(&cfg, 100, 200);
	xwf_set(&T, XWF_A_TO_B, &cfg);
	send_frames(&s);
	collect(1, ph, n, 50, 3000, 0, 0);
	k = losses(n, lost);
	decided(n, lost, lo, hi);
	/* A frame decided wholly inside the window was lost, one decided
	 * wholly outside it arrived; the window was met (frames lost, and
	 * frames arrived from before it and from after it). */
	for (__u32 i = 0; i < n; i++) {
		if (lo[i] >= cfg.bh_start_ns && hi[i] < cfg.bh_end_ns)
			in_n++, in_ok += lost[i];
		else if (hi[i] < cfg.bh_start_ns || lo[i] >= cfg.bh_end_ns)
			out_n++, out_ok += !lost[i];
		before += !lost[i] && lo[i] < cfg.bh_start_ns;
		after += !lost[i] && lo[i] >= cfg.bh_end_ns;
	}
	c = xwf_counters(&T, XWF_A_TO_B);
	CHECK(in_ok == in_n && out_ok == out_n && k > 0 && before > 0 && after > 0,
	      "blackhole window: %d/%d inside lost, %d/%d outside arrived (%d lost, %d arrived "
	      "from before, %d from after)", in_ok, in_n, out_ok, out_n, k, before, after);
	CHECK(c.blackholed == (__u64)k && c.dropped == 0, "blackhole counter %llu, %d lost",
	      (unsigned long long)c.blackholed, k);
	printf("blackhole window: %d frames sent inside lost, %d outside all arrived\n", in_n,
	       out_n);

	/* Periodic: 20 ms out of every 60 ms. */
	phase_begin();
	ph = 801;
	s.phase = ph;
	s.n = 150;
	cfg = small_only();
	xwf_blackhole_every(&cfg, 60, 20);
	xwf_set(&T, XWF_A_TO_B, &cfg);
	send_frames(&s);
	collect(1, ph, s.n, 50, 3000, 0, 0);
	k = losses(s.n, lost);
	in_ok = in_n = out_ok = out_n = 0;
	decided(s.n, lost, lo, hi);
	/* decided wholly within one on phase: lost; within one off phase:
	 * arrived */
	for (__u32 i = 0; i < s.n; i++) {
		__u64 a = lo[i] - cfg.bh_base_ns, b = hi[i] - cfg.bh_base_ns;

		if (lo[i] < cfg.bh_base_ns || hi[i] == UINT64_MAX ||
		    a / cfg.bh_period_ns != b / cfg.bh_period_ns)
			continue;
		if (b % cfg.bh_period_ns < cfg.bh_on_ns)
			in_n++, in_ok += lost[i];
		else if (a % cfg.bh_period_ns >= cfg.bh_on_ns)
			out_n++, out_ok += !lost[i];
	}
	c = xwf_counters(&T, XWF_A_TO_B);
	CHECK(in_ok == in_n && out_ok == out_n && k > 0 && k < (int)s.n,
	      "periodic blackhole: %d/%d in the on phase lost, %d/%d off arrived", in_ok, in_n,
	      out_ok, out_n);
	CHECK(c.blackholed == (__u64)k, "periodic blackhole counter %llu, %d lost",
	      (unsigned long long)c.blackholed, k);
	printf("periodic blackhole: %d of %u lost (%d in the on phases checked, %d off)\n", k, s.n,
	       in_n, out_n);
}

static void t_relay_delay(void)
{
	__u32 n = 20, ph = 900, delay_us = 30000;
	struct sendspec s = { .from = 0, .phase = ph, .n = n, .gap_us = 5000 };
	struct xwf_relay_cfg r = { .delay_us = delay_us };
	struct xwf_relay_stats rs, r0;
	struct xwf_counters c;
	__u64 lo = ~0ULL, hi = 0, base_hi = 0;

	/* Baseline, no relay. */
	phase_begin();
	send_frames(&s);
	collect(1, ph, n, 50, 3000, 0, 0);
	CHECK((__u32)ngot == n, "baseline: %d of %u", ngot, n);
	for (int i = 0; i < ngot; i++) {
		__u64 l = got[i].t_rx - t_send[got[i].seq];

		if (l > base_hi)
			base_hi = l;
	}
	phase_begin();
	s.phase = ++ph;
	r0 = xwf_relay_stats(&T, XWF_A_TO_B);
	xwf_relay(&T, XWF_A_TO_B, &r);
	send_frames(&s);
	collect(1, ph, n, 100, 3000, 0, 0);
	CHECK((__u32)ngot == n, "relay delay: %d of %u arrived", ngot, n);
	for (int i = 0; i < ngot; i++) {
		__u64 l = got[i].t_rx - t_send[got[i].seq];

		CHECK(got[i].seq == (__u32)i, "relay delay reordered: #%d is %u", i, got[i].seq);
		if (l < lo)
			lo = l;
		if (l > hi)
			hi = l;
	}
	/* The relay counts a frame sent once sendto() returned, after B got
	 * it: wait until its queue is empty (the bound only catches a hang),
	 * then count this phase's frames (the stats are cumulative). */
	CHECK(xwf_relay_drain(&T, XWF_A_TO_B, 10000) == 0, "relay queue not empty after 10 s");
	rs = xwf_relay_stats(&T, XWF_A_TO_B);
	rs.received -= r0.received;
	rs.sent -= r0.sent;
	rs.overflow -= r0.overflow;
	rs.oversize -= r0.oversize;
	rs.errors -= r0.errors;
	c = xwf_counters(&T, XWF_A_TO_B);
	/* The relay holds every frame at least its delay (exact).  How much
	 * later it forwards one depends on when it gets the CPU: printed, not
	 * asserted (a frame later than collect()'s 3 s is missing above). */
	CHECK(lo >= delay_us * 1000ULL, "relay delay %u us: latency %.3f .. %.3f ms", delay_us,
	      lo / 1e6, hi / 1e6);
	CHECK(rs.received == n + 1 && rs.sent == n + 1 && rs.overflow == 0 && rs.oversize == 0 &&
		      rs.errors == 0,
	      "relay stats: received %llu sent %llu oversize %llu for %u frames sent (M: seen "
	      "%llu, relayed %llu)",
	      (unsigned long long)rs.received, (unsigned long long)rs.sent,
	      (unsigned long long)rs.oversize, n + 1, (unsigned long long)c.seen,
	      (unsigned long long)c.relayed);
	CHECK(c.relayed == n + 1, "relayed counter %llu", (unsigned long long)c.relayed);
	printf("relay delay %u ms: latency %.2f .. %.2f ms (%.3f ms max without the relay)\n",
	       delay_us / 1000, lo / 1e6, hi / 1e6, base_hi / 1e6);
}

/* The relay's rule on 0..n-1 (no hold timeouts). */
static void expected_order(__u32 every, __u32 by, __u32 n, __u32 *out)
{
	__u32 k = 0, held = 0, left = 0;
	int hv = 0;

	for (__u32 i = 0; i < n; i++) {
		if (i % every == 0 && !hv) {
			held = i;
			hv = 1;
			left = by;
			continue;
		}
		out[k++] = i;
		if (hv && --left == 0) {
			out[k++] = held;
			hv = 0;
		}
	}
	if (hv)
		out[k++] = held;
}

static void t_relay_reorder(void)
{
	struct {
		__u32 every, by;
	} cases[] = { { 2, 1 }, { 5, 3 } };

	for (int k = 0; k < 2; k++) {
		__u32 n = 20, ph = 910 + (__u32)k, want[64];
		struct sendspec s = { .from = 0, .phase = ph, .n = n, .gap_us = 1000 };
		struct xwf_relay_cfg r = { .reorder_every = cases[k].every, .reorder_by = cases[k].by,
					   .hold_max_us = 150000 };
		char got_s[256] = "", want_s[256] = "";
		int same = 1;

		phase_begin();
		xwf_relay(&T, XWF_A_TO_B, &r);
		expected_order(cases[k].every, cases[k].by, n, want);
		send_frames(&s);
		collect(1, ph, n, 400, 3000, 0, 0);
		for (int i = 0; i < ngot && i < 20; i++)
			snprintf(got_s + strlen(got_s), sizeof(got_s) - strlen(got_s), " %u",
				 got[i].seq);
		for (__u32 i = 0; i < n; i++) {
			snprintf(want_s + strlen(want_s), sizeof(want_s) - strlen(want_s), " %u",
				 want[i]);
			if ((int)i >= ngot || got[i].seq != want[i])
				same = 0;
		}
		CHECK(same && (__u32)ngot == n, "reorder every %u by %u: got%s, want%s",
		      cases[k].every, cases[k].by, got_s, want_s);
		printf("relay reorder every %u by %u:%s\n", cases[k].every, cases[k].by, got_s);
	}
}

/* Everything that is not xdpwake passes a 100% drop untouched. */
static void t_filter(void)
{
	struct xwf_cfg cfg;
	struct xwf_counters c;
	int us, ub, arrived = 0, one = 1;
	struct sockaddr_in sa;
	char msg[32];

	phase_begin();
	memset(&cfg, 0, sizeof(cfg));
	cfg.drop_p = XWF_ALWAYS; /* every xdpwake type */
	cfg.corrupt_p = XWF_ALWAYS;
	xwf_set(&T, XWF_A_TO_B, &cfg);
	xwf_set(&T, XWF_B_TO_A, &cfg);

	/* xdpwake frames: gone, both encapsulations. */
	{
		struct sendspec s = { .from = 0, .phase = 1000, .n = 20, .no_marker = 1 };

		send_frames(&s);
		collect(1, 1000, 20, 0, 150, 0, 0);
		CHECK(ngot == 0, "xdpwake Ethernet frames through a 100%% drop: %d", ngot);
		s.phase = 1001;
		s.enc = ENC_UDP;
		send_frames(&s);
		collect(1, 1001, 20, 0, 150, 0, 0);
		CHECK(ngot == 0, "xdpwake UDP frames through a 100%% drop: %d", ngot);
	}
	/* Another EtherType, another UDP port: untouched. */
	{
		struct sendspec s = { .from = 0, .phase = 1002, .n = 20, .ethertype = ETH_OTHER };

		send_frames(&s);
		collect(1, 1002, 20, 50, 2000, ETH_OTHER, 0);
		CHECK(ngot == 20, "EtherType %#x: %d of 20", ETH_OTHER, ngot);
		s.phase = 1003;
		s.enc = ENC_UDP;
		s.ethertype = 0;
		s.port = XW_DEFAULT_UDP_PORT + 1;
		send_frames(&s);
		collect(1, 1003, 20, 50, 2000, 0, XW_DEFAULT_UDP_PORT + 1);
		CHECK(ngot == 20, "UDP port %u: %d of 20", XW_DEFAULT_UDP_PORT + 1, ngot);
	}
	/* Real IP between the hosts (ARP through M), both ways. */
	us = xwf_socket(&T, XWF_HOST_A, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ub = xwf_socket(&T, XWF_HOST_B, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	REQUIRE(us >= 0 && ub >= 0, "udp sockets");
	setsockopt(ub, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(9999);
	sa.sin_addr.s_addr = inet_addr(T.ip[1]);
	REQUIRE(bind(ub, (struct sockaddr *)&sa, sizeof(sa)) == 0, "bind B: %s", strerror(errno));
	{
		/* A's port fixed too: an ephemeral one can be xdpwake's */
		struct sockaddr_in sb = sa;

		sb.sin_port = htons(9998);
		sb.sin_addr.s_addr = inet_addr(T.ip[0]);
		REQUIRE(bind(us, (struct sockaddr *)&sb, sizeof(sb)) == 0, "bind A: %s",
			strerror(errno));
	}
	for (int i = 0; i < 10; i++) {
		struct pollfd p = { .fd = ub, .events = POLLIN };

		snprintf(msg, sizeof(msg), "udp %d", i);
		REQUIRE(sendto(us, msg, strlen(msg) + 1, 0, (struct sockaddr *)&sa, sizeof(sa)) > 0,
			"sendto: %s", strerror(errno));
		if (poll(&p, 1, 1000) == 1) {
			char in[32];
			ssize_t n = recv(ub, in, sizeof(in), 0);

			arrived += n > 0 && !strcmp(in, msg);
		}
	}
	close(us);
	close(ub);
	c = xwf_counters(&T, XWF_A_TO_B);
	CHECK(arrived == 10, "IPv4/UDP between the hosts: %d of 10", arrived);
	CHECK(c.other >= 10 + 20 + 20 && c.dropped == 40 && c.seen == 40 && c.corrupted == 0,
	      "filter counters: other %llu dropped %llu seen %llu", (unsigned long long)c.other,
	      (unsigned long long)c.dropped, (unsigned long long)c.seen);
	CHECK(xwf_counters(&T, XWF_B_TO_A).other > 0, "B->A: ARP reply counted as other");
	printf("filter: xdpwake frames (Ethernet, UDP) all dropped; another EtherType, another UDP "
	       "port and IPv4/UDP + ARP between the hosts all passed\n");
}

int main(void)
{
	struct xwf_opts o = { 0 };
	__u64 t0 = xwu_now_ns();
	int one = 1, big = 8 << 20;

	setvbuf(stdout, NULL, _IOLBF, 0);
	xwf_setup(&T, &o);
	for (int h = 0; h < 2; h++) {
		struct sockaddr_ll sll;

		ifx[h] = xwf_ifindex(&T, h);
		REQUIRE(ifx[h] > 0, "ifindex");
		txs[h] = xwf_socket(&T, h, AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
		/* protocol 0 until bound to the host's interface (ETH_P_ALL
		 * at creation takes every interface's frames until the bind) */
		rxs[h] = xwf_socket(&T, h, AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
		REQUIRE(txs[h] >= 0 && rxs[h] >= 0, "AF_PACKET: %s", strerror(errno));
		setsockopt(rxs[h], SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
		setsockopt(rxs[h], SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
		setsockopt(rxs[h], SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
		memset(&sll, 0, sizeof(sll));
		sll.sll_family = AF_PACKET;
		sll.sll_protocol = htons(ETH_P_ALL);
		sll.sll_ifindex = ifx[h];
		REQUIRE(bind(rxs[h], (struct sockaddr *)&sll, sizeof(sll)) == 0, "bind: %s",
			strerror(errno));
	}
	t_clean();
	t_drop_list();
	t_random();
	t_bursty();
	t_corrupt();
	t_truncate();
	t_dup();
	t_blackhole();
	t_relay_delay();
	t_relay_reorder();
	t_filter();
	xwf_teardown(&T);
	printf("%.1f s\n", (xwu_now_ns() - t0) / 1e9);
	return xwt_done();
}
