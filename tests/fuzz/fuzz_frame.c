// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libFuzzer target: one received Ethernet frame through the user-space
 * receive path, xwi_frame_parse() (Ethernet, 0-2 VLAN tags, EtherType or
 * IPv4/UDP) and then xwi_engine_rx() of a fresh engine (the header checks:
 * version, type, lengths, offsets, fragment fields, CRC32C).
 *
 * Input: byte 0 options, byte 1 receive buffer size, then the frame.
 *   bit 0  recompute the CRC of the parsed header and payload (reaches the
 *          checks behind the CRC)
 *   bit 1  engine without CRC checking
 *   bit 2  a receive (any match) is posted first
 *   bit 3  reliable engine (sessions) instead of the bare message layer
 *   bit 4  the frame is delivered twice
 *
 * Invariants, beyond "no crash, no UB, no leak":
 *  - the parser agrees with an independent reference (offsets, lengths,
 *    source address); an accepted frame's header and payload lie inside it;
 *  - the engine agrees with a reference of the header rules: a frame
 *    breaking one is rejected with -EPROTO (or -EBADMSG for a bad CRC) and
 *    changes nothing but that counter; a valid one is not rejected (but for
 *    the few stateful reasons listed in expect_eproto());
 *  - accepted data lies within the message (frag_off + payload_len <=
 *    msg_len, frag_idx < frag_count, payload_len <= the fragment size);
 *  - a receive completed by the frame holds exactly the frame's payload
 *    (never a hole), with the status it should have;
 *  - frames the engine emits in answer are well formed.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdbool.h>

#include "crc32c.h"
#include "frame.h"
#include "fuzz_common.h"

#define OPT_FIXCRC 0x01
#define OPT_NOCRC 0x02
#define OPT_RECV 0x04
#define OPT_RELIABLE 0x08
#define OPT_TWICE 0x10

/* ---- reference parser (offsets, not pointers) ------------------------- */

struct ref {
	bool ok, udp;
	size_t hoff, end;
	__u8 ip[4], port[2];
};

static unsigned int be16_at(const uint8_t *d, size_t off)
{
	return (unsigned int)d[off] << 8 | d[off + 1];
}

static void ref_parse(const uint8_t *d, size_t n, struct ref *r)
{
	size_t off = 14, end = n;
	unsigned int proto;

	memset(r, 0, sizeof(*r));
	if (n < 14 + XW_HDR_LEN)
		return;
	proto = be16_at(d, 12);
	for (int tags = 0; tags < 2 && (proto == 0x8100 || proto == 0x88A8); tags++) {
		if (n - off < 4)
			return;
		proto = be16_at(d, off + 2);
		off += 4;
	}
	if (proto == 0x0800) {
		size_t ihl, tot;

		if (n - off < 20 || d[off] >> 4 != 4)
			return;
		ihl = (size_t)(d[off] & 15) * 4;
		if (ihl < 20 || d[off + 9] != 17 || n - off < ihl + 8)
			return;
		tot = be16_at(d, off + 2);
		if (tot < ihl + 8 || tot > n - off)
			return;
		r->udp = true;
		memcpy(r->ip, d + off + 12, 4);
		memcpy(r->port, d + off + ihl, 2);
		end = off + tot;
		off += ihl + 8;
	}
	if (end - off < XW_HDR_LEN)
		return;
	r->ok = true;
	r->hoff = off;
	r->end = end;
}

/* ---- reference header rules (include/xdpwake/proto.h, engine_int.h xwi_frame_check) ------ */

static __u64 nfrags(__u64 len)
{
	return len ? (len + FZ_P - 1) / FZ_P : 1;
}

static __u64 fragsz(__u64 len, __u64 idx)
{
	__u64 off = idx * FZ_P;

	return off >= len ? 0 : (len - off < FZ_P ? len - off : FZ_P);
}

static bool ref_hdr_ok(const struct xw_hdr *h, size_t len, __u16 ep)
{
	__u64 plen = ntohs(h->payload_len), mlen = ntohl(h->msg_len), off = ntohl(h->frag_off);
	__u64 idx = ntohl(h->frag_idx), cnt = ntohl(h->frag_count);

	if (h->version != XW_VERSION || h->type < XW_PKT_SMALL || h->type >= XW_PKT_TYPE_MAX ||
	    plen > len || ntohs(h->dst_ep) != ep)
		return false;
	if (h->flags & XW_F_CMA)
		return false; /* every frame here is from the wire: only the local ring may carry it */
	if (h->type == XW_PKT_CONNECT || h->type == XW_PKT_CONNECT_REPLY || h->type == XW_PKT_CLOSE)
		return !cnt; /* frag_off:frag_idx: the destination's nonce */
	if (h->type >= XW_PKT_NOTIFY)
		return !off && !idx && !cnt && (h->type != XW_PKT_NOTIFY || !plen);
	if (!cnt || idx >= cnt || cnt != nfrags(mlen))
		return false;
	switch (h->type) {
	case XW_PKT_SMALL:
		return plen == mlen && !idx && !off && mlen <= FZ_P;
	case XW_PKT_RNDV:
		return !off && plen == fragsz(mlen, 0);
	case XW_PKT_PULL:
		return off == idx * FZ_P && plen == sizeof(struct xw_pull_req);
	default:
		return off == idx * FZ_P && plen == fragsz(mlen, idx);
	}
}

/* A valid frame a fresh engine still refuses, from state it lacks. */
static bool expect_eproto(const struct xw_hdr *h, const uint8_t *payload, bool reliable)
{
	if (reliable)
		return h->type == XW_PKT_CONNECT && !h->session;
	switch (h->type) {
	case XW_PKT_SMALL:
	case XW_PKT_MEDIUM:
	case XW_PKT_RNDV:
	case XW_PKT_PULL_REPLY:
		/* beyond the ordering window (2^31 and more: behind, old) */
		return ntohl(h->msg_id) >= 65536 && ntohl(h->msg_id) < 0x80000000u;
	case XW_PKT_PULL: {
		struct xw_pull_req pr;
		__u64 nf;

		memcpy(&pr, payload, sizeof(pr));
		nf = ntohl(pr.nfrags);
		return !nf || ntohl(h->frag_idx) + nf > ntohl(h->frag_count);
	}
	default:
		return false;
	}
}

/* ---- engine callbacks ---------------------------------------------------- */

static __u64 clk;

static __u64 f_now(void *ctx)
{
	(void)ctx;
	return clk;
}

static void f_random(void *ctx, void *buf, size_t len)
{
	static __u32 x = 1;

	(void)ctx;
	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		((uint8_t *)buf)[i] = (uint8_t)(x >> 16);
	}
}

/* Frames the engine emits in answer (NOTIFY, PULL, ACK, CONNECT_REPLY). */
static int f_send(void *ctx, const struct xw_addr *dst, const struct xw_hdr *h,
		  const void *payload, size_t len)
{
	__u32 plen = ntohs(h->payload_len), idx = ntohl(h->frag_idx), cnt = ntohl(h->frag_count);

	(void)ctx;
	(void)dst;
	FZ_ASSERT(len == plen && (!len || payload), "emitted len %zu payload_len %u", len, plen);
	FZ_ASSERT(h->version == XW_VERSION && h->type >= XW_PKT_SMALL && h->type < XW_PKT_TYPE_MAX,
		  "emitted type %u", h->type);
	FZ_ASSERT(!(h->flags & ~XW_F_KNOWN), "emitted flags %#x", h->flags);
	if (h->type == XW_PKT_PULL) {
		struct xw_pull_req pr;

		FZ_ASSERT(len == sizeof(pr), "PULL payload %zu", len);
		memcpy(&pr, payload, sizeof(pr));
		FZ_ASSERT(ntohl(pr.nfrags) >= 1 && (__u64)idx + ntohl(pr.nfrags) <= cnt,
			  "PULL %u+%u of %u", idx, ntohl(pr.nfrags), cnt);
	}
	if (h->type == XW_PKT_CONNECT || h->type == XW_PKT_CONNECT_REPLY || h->type == XW_PKT_CLOSE)
		FZ_ASSERT(!cnt && (h->data || h->rsvd2), "type %u: frag_count %u, no sender nonce",
			  h->type, cnt);
	else if (h->type >= XW_PKT_NOTIFY)
		FZ_ASSERT(!h->frag_off && !idx && !cnt, "control type %u with fragment fields",
			  h->type);
	return 0;
}

static const struct xwi_engine_ops f_ops = { .send = f_send, .now_ns = f_now,
					     .random = f_random };

/* Counters other than @skip must not move. */
static void stats_same(const struct xwi_engine_stats *a, const struct xwi_engine_stats *b,
		       size_t skip)
{
	struct xwi_engine_stats x = *a, y = *b;

	memset((char *)&x + skip, 0, sizeof(__u64));
	memset((char *)&y + skip, 0, sizeof(__u64));
	FZ_ASSERT(!memcmp(&x, &y, sizeof(x)), "a rejected frame changed the engine's counters");
}

static void run_engine(uint8_t opt, size_t buflen, struct xwi_frame *f)
{
	const struct xw_hdr *h = &f->h;
	bool reliable = opt & OPT_RELIABLE, crc = !(opt & OPT_NOCRC);
	__u16 dst = ntohs(h->dst_ep);
	struct xwi_engine_stats s0, s1;
	struct xw_request *rr = NULL;
	struct xwi_engine_cfg cfg;
	struct xwi_engine *e;
	__u32 plen = ntohs(h->payload_len);
	bool crc_bad = false, valid;
	uint8_t *buf = NULL;
	int rc, rc2;

	if (dst >= XW_MAX_ENDPOINTS)
		return; /* the port counts it (rx_noep); no engine sees it */
	cfg = fz_cfg(dst, reliable);
	cfg.crc = crc;
	clk = 1000000000ULL;
	e = xwi_engine_new(&cfg, &f_ops, NULL);
	FZ_ASSERT(e, "xwi_engine_new");
	if (opt & OPT_RECV) {
		buf = buflen ? malloc(buflen) : NULL;
		FZ_ASSERT(!buflen || buf, "malloc");
		if (buflen)
			memset(buf, 0xA5, buflen);
		FZ_ASSERT(!xwi_engine_irecv(e, buf, buflen, 0, 0, &rr), "irecv");
	}
	if (crc && plen <= f->len) {
		struct xw_hdr hc = *h;

		hc.csum = 0;
		if (hc.type == XW_PKT_PROBE_REPLY) /* its data is outside the CRC */
			hc.data = 0;
		crc_bad = htonl(xwi_crc32c_sw(xwi_crc32c_sw(0, &hc, sizeof(hc)), f->payload,
					      plen)) != h->csum;
	}
	valid = ref_hdr_ok(h, f->len, dst);
	xwi_engine_stats(e, &s0);
	rc = xwi_engine_rx(e, &f->src, h, f->payload, f->len);
	xwi_engine_stats(e, &s1);
	if (crc_bad) {
		FZ_ASSERT(rc == -EBADMSG, "bad CRC: rc %d", rc);
		FZ_ASSERT(s1.crc_failures == s0.crc_failures + 1, "crc_failures");
		stats_same(&s0, &s1, offsetof(struct xwi_engine_stats, crc_failures));
	} else if (!valid) {
		FZ_ASSERT(rc == -EPROTO, "invalid header (type %u) accepted: rc %d", h->type, rc);
		FZ_ASSERT(s1.rx_bad == s0.rx_bad + 1, "rx_bad");
		stats_same(&s0, &s1, offsetof(struct xwi_engine_stats, rx_bad));
	} else {
		FZ_ASSERT((rc == -EPROTO) == expect_eproto(h, f->payload, reliable),
			  "valid header (type %u) rc %d", h->type, rc);
		FZ_ASSERT(rc == 0 || rc == -EPROTO, "rc %d", rc);
	}
	if (rc == 0 && h->type <= XW_PKT_PULL_REPLY && h->type != XW_PKT_PULL) {
		__u64 off = ntohl(h->frag_off), mlen = ntohl(h->msg_len);

		FZ_ASSERT(off + plen <= mlen && plen <= FZ_P && plen <= f->len &&
				  ntohl(h->frag_idx) < ntohl(h->frag_count),
			  "accepted data out of bounds: off %llu plen %u msg_len %llu",
			  (unsigned long long)off, plen, (unsigned long long)mlen);
	}
	if (rr && rr->state == XWI_REQ_DONE) {
		__u64 mlen = ntohl(h->msg_len);
		size_t want = buflen < mlen ? buflen : (size_t)mlen;

		FZ_ASSERT(rc == 0 && !reliable && h->type != XW_PKT_PULL_REPLY,
			  "receive completed by type %u rc %d", h->type, rc);
		FZ_ASSERT(rr->status.len == want && rr->status.msg_len == mlen &&
				  rr->status.error == (mlen > buflen ? -EMSGSIZE : 0),
			  "status len %zu msg_len %zu error %d (buffer %zu, message %llu)",
			  rr->status.len, rr->status.msg_len, rr->status.error, buflen,
			  (unsigned long long)mlen);
		FZ_ASSERT(rr->status.match == be64toh(h->match) &&
				  xw_addr_equal(&rr->status.src, &f->src),
			  "status match/src");
		/* one frame completed it: all of it came from that frame */
		FZ_ASSERT(!h->frag_off && want <= plen && (!want || !memcmp(buf, f->payload, want)),
			  "completed receive does not hold the frame's payload");
	}
	if (opt & OPT_TWICE) {
		rc2 = xwi_engine_rx(e, &f->src, h, f->payload, f->len);
		FZ_ASSERT(rc2 == rc, "same frame again: rc %d then %d", rc, rc2);
	}
	xwi_engine_progress(e, 64);
	clk += 10 * cfg.give_up_ns;
	xwi_engine_next_deadline(e);
	xwi_engine_progress(e, 64);
	if (rr && rr->state == XWI_REQ_DONE)
		xwi_request_free(rr);
	xwi_engine_free(e); /* frees a pending receive */
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xwi_frame f;
	struct ref r;
	uint8_t opt, *frame;
	size_t n, buflen;
	int rc;

	if (size < 2)
		return 0;
	opt = data[0];
	buflen = (size_t)data[1] * 9;
	n = size - 2;
	/* a copy of exactly the frame's size: ASan sees any read beyond it */
	frame = malloc(n ? n : 1);
	FZ_ASSERT(frame, "malloc");
	memcpy(frame, data + 2, n);

	ref_parse(frame, n, &r);
	rc = xwi_frame_parse(frame, n, &f);
	FZ_ASSERT((rc == 0) == r.ok, "parser %d, reference %d", rc, r.ok);
	FZ_ASSERT(rc == 0 || rc == -EPROTO, "rc %d", rc);
	FZ_ASSERT((f.src.encap == XW_ENCAP_UDP) == r.udp, "UDP layer: parser %u, reference %d",
		  f.src.encap, r.udp);
	if (r.udp)
		FZ_ASSERT(!memcmp(&f.src.ip, r.ip, 4) && !memcmp(&f.src.port, r.port, 2),
			  "UDP source address");
	if (rc == 0) {
		FZ_ASSERT(f.payload == frame + r.hoff + XW_HDR_LEN && f.len == r.end - r.hoff -
			  XW_HDR_LEN, "payload at %td len %zu, reference %zu len %zu",
			  f.payload - frame, f.len, r.hoff + XW_HDR_LEN, r.end - r.hoff - XW_HDR_LEN);
		FZ_ASSERT(f.payload >= frame + 14 + XW_HDR_LEN && f.len <= n &&
				  (size_t)(f.payload - frame) <= n - f.len,
			  "payload outside the frame");
		FZ_ASSERT(!memcmp(&f.h, frame + r.hoff, XW_HDR_LEN), "header copy");
		FZ_ASSERT(!memcmp(f.src.mac, frame + 6, 6) && f.src.ep == ntohs(f.h.src_ep),
			  "source address");
		FZ_ASSERT(f.src.encap == (r.udp ? XW_ENCAP_UDP : XW_ENCAP_ETH), "encap");
		if (opt & OPT_FIXCRC) {
			struct xw_hdr hc = f.h;
			size_t plen = ntohs(f.h.payload_len);

			if (plen > f.len)
				plen = f.len;
			hc.csum = 0;
			if (hc.type == XW_PKT_PROBE_REPLY)
				hc.data = 0;
			f.h.csum = htonl(xwi_crc32c(xwi_crc32c(0, &hc, sizeof(hc)), f.payload, plen));
		}
		run_engine(opt, buflen, &f);
	}
	free(frame);
	return 0;
}
