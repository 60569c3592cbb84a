// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Seed corpora for the fuzzers, from real engine traffic (make fuzz-corpus):
 *   <dir>/fuzz_frame/   frames two engines exchanged (every packet type and
 *                       size class, with and without reliability), each in
 *                       the encapsulations a NIC delivers: EtherType, one
 *                       and two VLAN tags, IPv4/UDP (also with IP options)
 *   <dir>/fuzz_engine/  operation scripts (fuzz_ops.h): transfers of every
 *                       size class, early and late receivers, truncation,
 *                       loss, duplication, reordering, corruption, a
 *                       restart, forged handshakes and data, cancels
 * Deterministic: the same files every run.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <sys/stat.h>

#include "fuzz_common.h"
#include "fuzz_ops.h"

static const char *outdir;
static int nfiles;

static void put(const char *target, const char *name, const void *buf, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", outdir, target);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/%s", outdir, target, name);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(1);
	}
	nfiles++;
}

/* ---- fuzz_frame: captured frames -------------------------------------------- */

struct cap {
	struct xw_hdr h;
	uint8_t pl[FZ_P];
	size_t len;
	int dst;
};

#define MAXCAP 4096
static struct cap caps[MAXCAP];
static int ncap;
static struct xwi_engine *eng[2];
static struct xw_addr addr[2];
static int ids[2] = { 0, 1 };
static __u64 clk = 1000000000ULL;

static __u64 g_now(void *ctx)
{
	(void)ctx;
	return clk;
}

static void g_random(void *ctx, void *buf, size_t len)
{
	static __u32 x = 7;

	(void)ctx;
	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		((uint8_t *)buf)[i] = (uint8_t)(x >> 16);
	}
}

static int g_send(void *ctx, const struct xw_addr *dst, const struct xw_hdr *h,
		  const void *payload, size_t len)
{
	struct cap *c;

	(void)ctx;
	if (ncap >= MAXCAP)
		return -EAGAIN;
	c = &caps[ncap++];
	c->h = *h;
	c->len = len;
	c->dst = xw_addr_equal(dst, &addr[1]);
	if (len)
		memcpy(c->pl, payload, len);
	return 0;
}

static const struct xwi_engine_ops g_ops = { .send = g_send, .now_ns = g_now,
					     .random = g_random };

/* Deliver captured frames from @from on; returns the new end. */
static int pump(int from)
{
	while (from < ncap) {
		struct cap *c = &caps[from++];

		xwi_engine_rx(eng[c->dst], &addr[!c->dst], &c->h, c->len ? c->pl : NULL, c->len);
		for (int i = 0; i < 2; i++)
			xwi_engine_progress(eng[i], 64);
		if (from == ncap) {
			__u64 d = UINT64_MAX;

			for (int i = 0; i < 2; i++) {
				__u64 x = xwi_engine_next_deadline(eng[i]);

				d = x < d ? x : d;
			}
			if (d != UINT64_MAX && d - clk < 1000000000ULL) {
				clk = d > clk ? d : clk;
				for (int i = 0; i < 2; i++)
					xwi_engine_progress(eng[i], 64);
			}
		}
	}
	return from;
}

static void traffic(bool reliable)
{
	static const uint32_t sizes[] = { 0, 10, 64, 65, 200, 320, 700, 2048 };
	static uint8_t sbuf[FZ_MSG_MAX], rbuf[8][FZ_MSG_MAX];
	struct xw_request *sr[8], *rr[8];
	int done = 0;

	for (int i = 0; i < 2; i++) {
		struct xwi_engine_cfg c = fz_cfg((__u16)(1 + i), reliable);

		memset(&addr[i], 0, sizeof(addr[i]));
		addr[i].encap = XW_ENCAP_ETH;
		addr[i].mac[0] = 0x02;
		addr[i].mac[5] = (__u8)(0x10 + i);
		addr[i].ep = (__u16)(1 + i);
		eng[i] = xwi_engine_new(&c, &g_ops, &ids[i]);
		if (!eng[i]) {
			perror("xwi_engine_new");
			exit(1);
		}
	}
	for (size_t i = 0; i < FZ_MSG_MAX; i++)
		sbuf[i] = xwt_link_pat(1, i);
	for (int k = 0; k < 8; k++) {
		/* early receivers for half, late (unexpected) for the rest;
		 * one truncated */
		if (k % 2 == 0)
			xwi_engine_irecv(eng[1], rbuf[k], k == 6 ? 100 : FZ_MSG_MAX, 0, 0, &rr[k]);
		if (xwi_engine_isend(eng[0], &addr[1], sbuf, sizes[k], 0, &sr[k]))
			sr[k] = NULL;
		done = pump(done);
		if (k % 2 == 1)
			xwi_engine_irecv(eng[1], rbuf[k], FZ_MSG_MAX, 0, 0, &rr[k]);
		done = pump(done);
	}
	xwi_engine_shutdown(eng[0], true);
	pump(done);
	for (int i = 0; i < 2; i++)
		xwi_engine_free(eng[i]);
}

static size_t encap(uint8_t *f, int kind, const struct cap *c)
{
	static const uint8_t dmac[6] = { 2, 0, 0, 0, 0, 0x11 }, smac[6] = { 2, 0, 0, 0, 0, 0x10 };
	size_t off = 12, hl = XW_HDR_LEN + c->len;

	memcpy(f, dmac, 6);
	memcpy(f + 6, smac, 6);
	if (kind == 1 || kind == 2) { /* 802.1Q; QinQ: 802.1ad then 802.1Q */
		if (kind == 2) {
			f[off] = 0x88;
			f[off + 1] = 0xA8;
			f[off + 2] = 0;
			f[off + 3] = 100;
			off += 4;
		}
		f[off] = 0x81;
		f[off + 1] = 0x00;
		f[off + 2] = 0;
		f[off + 3] = 7;
		off += 4;
	}
	if (kind >= 3) { /* IPv4 (kind 4: 4 bytes of options) and UDP */
		size_t ihl = kind == 4 ? 24 : 20, tot = ihl + 8 + hl;

		f[off] = 0x08;
		f[off + 1] = 0x00;
		off += 2;
		memset(f + off, 0, ihl);
		f[off] = (uint8_t)(0x40 | ihl / 4);
		f[off + 2] = (uint8_t)(tot >> 8);
		f[off + 3] = (uint8_t)tot;
		f[off + 8] = 64;
		f[off + 9] = 17;
		memcpy(f + off + 12, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
		off += ihl;
		f[off] = 0xC0;
		f[off + 2] = 0xC0;
		f[off + 4] = (uint8_t)((8 + hl) >> 8);
		f[off + 5] = (uint8_t)(8 + hl);
		f[off + 6] = f[off + 7] = 0;
		off += 8;
	} else {
		f[off] = 0x88;
		f[off + 1] = 0xB5;
		off += 2;
	}
	memcpy(f + off, &c->h, XW_HDR_LEN);
	memcpy(f + off + XW_HDR_LEN, c->pl, c->len);
	off += hl;
	if (off < 60 && kind == 0) { /* Ethernet padding */
		memset(f + off, 0, 60 - off);
		off = 60;
	}
	return off;
}

static void gen_frames(void)
{
	static const char *kname[] = { "eth", "vlan", "qinq", "udp", "udpopt" };

	for (int rel = 0; rel < 2; rel++) {
		int seen[XW_PKT_TYPE_MAX] = { 0 };

		ncap = 0;
		traffic(rel);
		for (int i = 0; i < ncap; i++) {
			struct cap *c = &caps[i];
			uint8_t buf[2 + 256];
			char name[64];
			int kind;

			/* a few of each type, in turns of the encapsulations */
			if (c->h.type >= XW_PKT_TYPE_MAX || seen[c->h.type] >= 5)
				continue;
			kind = seen[c->h.type]++ % 5;
			/* options: a receive posted (1 KiB), reliable engine */
			buf[0] = (uint8_t)(0x04 | (rel ? 0x08 : 0));
			buf[1] = 114;
			snprintf(name, sizeof(name), "%s-%s-type%u-%d", rel ? "rel" : "bare",
				 kname[kind], c->h.type, i);
			put("fuzz_frame", name, buf, 2 + encap(buf + 2, kind, c));
		}
	}
}

/* ---- fuzz_engine: operation scripts -------------------------------------------- */

static uint8_t sc[4096];
static size_t scn;

static void b(int v)
{
	if (scn < sizeof(sc))
		sc[scn++] = (uint8_t)v;
}

static void opx(int o, int a)
{
	b(o);
	b(a);
}

/* size class/value pairs of size_of() in fuzz_engine.c */
static void send_(int node, int cls, int v)
{
	opx(FZ_OP_SEND, node);
	b(cls);
	b(v);
}

static void recv_(int node, int kind, int sz9, int which)
{
	opx(FZ_OP_RECV, node | kind << 1);
	b(sz9);
	b(which);
}

static void pumpn(int n)
{
	for (int i = 0; i < n; i++) {
		opx(FZ_OP_DELIVER, 0 | 7 << 1);
		opx(FZ_OP_PROGRESS, 0 | 63 << 1);
		opx(FZ_OP_DELIVER, 1 | 7 << 1);
		opx(FZ_OP_PROGRESS, 1 | 63 << 1);
	}
}

static void script(const char *name, int mode, void (*fn)(void))
{
	scn = 0;
	b(mode);
	fn();
	put("fuzz_engine", name, sc, scn);
}

static void s_sizes(void)
{
	/* every class both ways, early receivers */
	for (int cls = 0; cls < 4; cls++) {
		recv_(1, 0, 255, 0);
		send_(0, cls, 37);
		recv_(0, 0, 255, 0);
		send_(1, cls, 5);
		pumpn(4);
	}
}

static void s_late(void)
{
	/* unexpected messages, then receives; one truncated */
	send_(0, 0, 20);
	send_(0, 1, 100);
	send_(0, 2, 200);
	pumpn(3);
	recv_(1, 0, 4, 0);
	recv_(1, 0, 255, 0);
	recv_(1, 0, 255, 0);
	pumpn(4);
}

static void s_lossy(void)
{
	recv_(1, 0, 255, 0);
	send_(0, 2, 150);
	send_(0, 1, 50);
	opx(FZ_OP_DROP, 1);
	b(1);
	b(0);
	opx(FZ_OP_DUP, 1);
	b(2);
	b(0);
	opx(FZ_OP_REORDER, 1);
	b(0);
	b(0);
	opx(FZ_OP_CORRUPT, 1);
	b(3);
	b(9);
	opx(FZ_OP_TRUNC, 1);
	b(4);
	b(1);
	pumpn(2);
	opx(FZ_OP_CLOCK, 100);
	pumpn(3);
	opx(FZ_OP_CLOCK, 200);
	recv_(1, 0, 255, 0);
	pumpn(3);
	opx(FZ_OP_REPLAY, 1);
}

static void s_restart(void)
{
	send_(0, 2, 10);
	send_(1, 0, 3);
	pumpn(1);
	opx(FZ_OP_RESTART, 1);
	send_(1, 1, 7);
	pumpn(3);
	opx(FZ_OP_CLOCK, 245);
	pumpn(2);
}

static void forge(int b0, int type, int id, int mlen, int idx, int x, int y)
{
	opx(FZ_OP_FORGE, 0);
	b(b0);
	b(type);
	b(0);
	b(id);
	b(mlen >> 8);
	b(mlen);
	b(idx);
	b(x);
	b(y);
}

static void s_forged(void)
{
	/* forger 0 -> node 1: CONNECT, then data in its session */
	recv_(1, 2, 255, 0);
	forge(0x08 | 0x10 | 0x20 | 0x04, XW_PKT_CONNECT, 0, 0, 0, 0, 5);
	forge(0x08 | 0x10 | 0x20 | 0x04, XW_PKT_SMALL, 0, 30, 0, 0, 0);
	forge(0x08 | 0x10 | 0x20 | 0x04, XW_PKT_MEDIUM, 1, 200, 0, 0, 0);
	forge(0x08 | 0x10 | 0x20 | 0x04, XW_PKT_RNDV, 2, 900, 0, 2, 0);
	forge(0x08 | 0x10 | 0x20 | 0x04, XW_PKT_PULL, 0, 900, 0, 1, 4);
	forge(0x08 | 0x10 | 0x04, XW_PKT_ACK, 0, 0, 0, 0, 0);
	forge(0x08 | 0x10 | 0x04, XW_PKT_CLOSE, 0, 0, 0, 0, 0);
	forge(0x20 | 0x04, XW_PKT_SMALL, 0, 10, 0, 0, 9); /* no session */
	send_(0, 1, 3);
	pumpn(4);
}

static void s_bare(void)
{
	recv_(1, 0, 255, 0);
	send_(0, 3, 7);
	send_(0, 3, 5);
	opx(FZ_OP_DUP, 1);
	b(0);
	b(0);
	pumpn(3);
	forge(0x20 | 0x04, XW_PKT_RNDV, 0, 700, 0, 3, 0);
	forge(0x20 | 0x04, XW_PKT_PULL_REPLY, 0, 700, 1, 0, 0);
	recv_(1, 0, 255, 0);
	pumpn(3);
}

static void s_cancel(void)
{
	opx(FZ_OP_CAP, 1 | 1 << 1);
	for (int i = 0; i < 6; i++)
		send_(0, 1, i * 10);
	opx(FZ_OP_CANCEL, 2);
	recv_(1, 1, 200, 2);
	opx(FZ_OP_CANCEL, 1 << 2);
	opx(FZ_OP_CAP, 1 | 95 << 1);
	pumpn(6);
}

static void s_adversary(void)
{
	send_(0, 2, 100);
	pumpn(1);
	forge(0x40 | 0x04 | 0x20, XW_PKT_PULL, 0, 1021, 0, 1, 4);
	forge(0x40 | 0x20, XW_PKT_NOTIFY, 0, 1021, 0, 0, 0);
	opx(FZ_OP_ABORT, 2);
	send_(0 | 2, 0, 3);
	pumpn(3);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	outdir = argv[1];
	mkdir(outdir, 0755);
	gen_frames();
	script("sizes-reliable", 1, s_sizes);
	script("sizes-bare", 0, s_sizes);
	script("late-reliable", 1, s_late);
	script("late-bare", 0, s_late);
	script("lossy", 1, s_lossy);
	script("restart", 1, s_restart);
	script("forged", 1, s_forged);
	script("forged-bare", 0, s_bare);
	script("cancel", 1, s_cancel);
	script("adversary", 3, s_adversary);
	printf("%d files in %s\n", nfiles, outdir);
	return 0;
}
