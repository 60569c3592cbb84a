// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Frame-by-frame tests of the XDP wake engine: the real compiled program run
 * with BPF_PROG_TEST_RUN on crafted frames.  A fixture table gives, per row,
 * the frame, the wake state and knobs before it, and the expected verdict,
 * wake decision (now with a reason / deferred until an exact deadline /
 * none) and the exact change of every counter; the program's clock is fixed
 * by the test for the row, so the history a row states (the last frame 1 us
 * ago) is exact however slowly the test runs.  Then the timer paths:
 * deferred and coalesced wakes arrive with their reason and never before
 * their bound, the watchdog, one wake per sleep.
 */
#include "xwt_xdp.h"

#define EP 0
#define EP_NOSOCK 2  /* active, no AF_XDP socket           */
#define EP_OFF 5     /* never registered                    */
#define C(name) ((int)(__builtin_offsetof(struct xw_map_stats, name) / 8))
#define SEC_US 1000000
/* Rows run with coalesce_usecs at its maximum: no timer a row starts can
 * expire while the row is checked, however slowly the test runs. */
#define COAL_US 10000000
#define GAP_US (COAL_US / 2)

enum { W_NONE, W_NOW, W_DEFER };

struct knobset {
	const char *k;
	__u32 v;
};

struct fx {
	const char *name;
	struct xwt_frame f;
	/* state before */
	__u32 policy;
	int unarmed;	      /* receiver not armed (armed is the default) */
	__u64 pending;
	int deferred;
	__u64 last_frame_ago_us;
	__u64 gap_ewma_ns;
	__u32 adapt_mode;
	__u64 produced, consumed;
	struct knobset knobs[3];
	__u32 queue;	      /* frame's rx queue */
	__u32 queues;	      /* UDP queues in use, bit q (0: queue 0 only) */
	/* expected */
	int verdict;
	int wake;
	int reason;
	__s64 due_us;	      /* W_DEFER: the timer's deadline, from "now" */
	struct {
		int idx;
		long long d;
	} delta[5];
};

/* Shorthands for frames. */
#define SMALL(fl) { .type = XW_PKT_SMALL, .flags = (fl), .frag_count = 1, .payload_len = 32, .present = -1 }
#define MEDIUM(fl) { .type = XW_PKT_MEDIUM, .flags = (fl), .msg_len = 8000, .frag_off = 1400, \
		     .frag_idx = 1, .frag_count = 6, .payload_len = 1400, .present = -1 }
#define LAT XW_F_LAT
#define MORE XW_F_MORE
#define D(name, v) { C(name), (v) }
#define K(name, v) { #name, (v) }
/* The UDP port of queue q (the default base). */
#define UQ(q) ((__u16)(XW_DEFAULT_UDP_PORT + (q)))

static const struct fx table[] = {
	/* ---- not ours: passed untouched ---- */
	{ "IPv4/UDP other port, encap eth+udp", { .encap = XWT_ENC_UDP, .udp_port = 53, .type = XW_PKT_SMALL,
	  .frag_count = 1, .payload_len = 8, .present = -1 }, .knobs = { K(encap, 3) }, .verdict = XDP_PASS },
	{ "IPv4/UDP our port but encap eth only", { .encap = XWT_ENC_UDP, .type = XW_PKT_SMALL,
	  .frag_count = 1, .payload_len = 8, .present = -1 }, .verdict = XDP_PASS },
	{ "IPv4 fragment (MF) to our port", { .encap = XWT_ENC_UDP, .ip_frag = 0x2000, .type = XW_PKT_SMALL,
	  .frag_count = 1, .payload_len = 8, .present = -1 }, .knobs = { K(encap, 3) }, .verdict = XDP_PASS },
	{ "IPv4 later fragment to our port", { .encap = XWT_ENC_UDP, .ip_frag = 0x00b9, .type = XW_PKT_SMALL,
	  .frag_count = 1, .payload_len = 8, .present = -1 }, .knobs = { K(encap, 3) }, .verdict = XDP_PASS },
	{ "other EtherType", { .ethertype = 0x88B6, .type = XW_PKT_SMALL, .frag_count = 1,
	  .payload_len = 8, .present = -1 }, .verdict = XDP_PASS },
	{ "three VLAN tags", { .vlans = 3, .type = XW_PKT_SMALL, .frag_count = 1, .payload_len = 8,
	  .present = -1 }, .verdict = XDP_PASS },
	/* (BPF_PROG_TEST_RUN refuses frames under 14 bytes.) */
	{ "frame cut inside the VLAN tag", { .vlans = 1, .type = XW_PKT_SMALL, .truncate = 16 },
	  .verdict = XDP_PASS },
	{ "frame cut inside the IPv4 header", { .encap = XWT_ENC_UDP, .type = XW_PKT_SMALL, .truncate = 30 },
	  .knobs = { K(encap, 3) }, .verdict = XDP_PASS },
	{ "frame cut inside the UDP header", { .encap = XWT_ENC_UDP, .type = XW_PKT_SMALL, .truncate = 38 },
	  .knobs = { K(encap, 3) }, .verdict = XDP_PASS },
	{ "our EtherType changed away", SMALL(LAT), .knobs = { K(ethertype, 0x9000) }, .verdict = XDP_PASS },
	/* per-queue UDP ports: udp_port + q is ours only while queue q is in use */
	{ "UDP port of queue 1, queue 1 not in use", { .encap = XWT_ENC_UDP, .udp_port = UQ(1),
	  .type = XW_PKT_SMALL, .frag_count = 1, .payload_len = 8, .present = -1 },
	  .knobs = { K(encap, 2) }, .verdict = XDP_PASS },
	{ "UDP port of queue 0, only queue 31 in use", { .encap = XWT_ENC_UDP, .type = XW_PKT_SMALL,
	  .frag_count = 1, .payload_len = 8, .present = -1 }, .knobs = { K(encap, 2) },
	  .queues = 1u << 31, .verdict = XDP_PASS },
	{ "UDP port udp_port + XW_MAX_QUEUES (out of range)", { .encap = XWT_ENC_UDP,
	  .udp_port = UQ(XW_MAX_QUEUES), .type = XW_PKT_SMALL, .frag_count = 1, .payload_len = 8,
	  .present = -1 }, .knobs = { K(encap, 2) }, .queues = 0xFFFFFFFF, .verdict = XDP_PASS },
	{ "UDP port udp_port - 1 (below the range)", { .encap = XWT_ENC_UDP, .udp_port = UQ(-1),
	  .type = XW_PKT_SMALL, .frag_count = 1, .payload_len = 8, .present = -1 },
	  .knobs = { K(encap, 2) }, .queues = 0xFFFFFFFF, .verdict = XDP_PASS },
	{ "UDP port of queue 3 in use, encap eth only", { .encap = XWT_ENC_UDP, .udp_port = UQ(3),
	  .type = XW_PKT_SMALL, .frag_count = 1, .payload_len = 8, .present = -1 },
	  .queues = 0x9, .verdict = XDP_PASS },

	/* ---- ours but malformed: dropped and counted by reason ---- */
	{ "truncated header", { .type = XW_PKT_SMALL, .truncate = 14 + 40 }, .verdict = XDP_DROP,
	  .delta = { D(drop_short, 1) } },
	{ "bad version", { .version = XW_VERSION + 1, .type = XW_PKT_SMALL, .frag_count = 1,
	  .payload_len = 8, .present = -1 }, .verdict = XDP_DROP, .delta = { D(drop_version, 1) } },
	{ "version 1 (56-byte header)", { .version = 1, .type = XW_PKT_SMALL, .frag_count = 1,
	  .payload_len = 8, .present = -1 }, .verdict = XDP_DROP, .delta = { D(drop_version, 1) } },
	{ "type 0", { .type = 0, .payload_len = 0 }, .verdict = XDP_DROP, .delta = { D(drop_type, 1) } },
	{ "type 13", { .type = XW_PKT_TYPE_MAX }, .verdict = XDP_DROP, .delta = { D(drop_type, 1) } },
	{ "type 255", { .type = 255 }, .verdict = XDP_DROP, .delta = { D(drop_type, 1) } },
	{ "payload_len beyond the frame", { .type = XW_PKT_SMALL, .frag_count = 1, .payload_len = 200,
	  .present = 100 }, .verdict = XDP_DROP, .delta = { D(drop_length, 1) } },
	{ "SMALL msg_len != payload_len", { .type = XW_PKT_SMALL, .frag_count = 1, .payload_len = 20,
	  .msg_len = 21, .msg_len_set = 1, .present = -1 }, .verdict = XDP_DROP, .delta = { D(drop_length, 1) } },
	{ "SMALL with frag_count 2", { .type = XW_PKT_SMALL, .frag_count = 2, .payload_len = 20,
	  .present = -1 }, .verdict = XDP_DROP, .delta = { D(drop_length, 1) } },
	{ "MEDIUM frag_off+len > msg_len", { .type = XW_PKT_MEDIUM, .msg_len = 2000, .frag_off = 1400,
	  .frag_idx = 1, .frag_count = 2, .payload_len = 601, .present = -1 }, .verdict = XDP_DROP,
	  .delta = { D(drop_length, 1) } },
	{ "MEDIUM frag_off wraps 32 bits", { .type = XW_PKT_MEDIUM, .msg_len = 0xFFFFFFFF, .frag_off = 0xFFFFFF00,
	  .frag_idx = 1, .frag_count = 2, .payload_len = 0x200, .present = -1 }, .verdict = XDP_DROP,
	  .delta = { D(drop_length, 1) } },
	{ "MEDIUM frag_idx == frag_count", { .type = XW_PKT_MEDIUM, .msg_len = 8000, .frag_idx = 6,
	  .frag_count = 6, .payload_len = 100, .present = -1 }, .verdict = XDP_DROP, .delta = { D(drop_frag, 1) } },
	{ "PULL_REPLY frag_count 0", { .type = XW_PKT_PULL_REPLY, .msg_len = 8000, .payload_len = 100,
	  .present = -1 }, .verdict = XDP_DROP, .delta = { D(drop_frag, 1) } },
	{ "PULL frag_idx > frag_count", { .type = XW_PKT_PULL, .msg_len = 80000, .frag_idx = 70,
	  .frag_count = 60, .payload_len = 8, .present = -1 }, .verdict = XDP_DROP, .delta = { D(drop_frag, 1) } },
	{ "PULL frag_off > msg_len", { .type = XW_PKT_PULL, .msg_len = 80000, .frag_off = 80001,
	  .frag_count = 60, .payload_len = 8, .present = -1 }, .verdict = XDP_DROP, .delta = { D(drop_length, 1) } },
	{ "unknown endpoint (inactive)", { .type = XW_PKT_SMALL, .dst_ep = EP_OFF, .frag_count = 1,
	  .payload_len = 8, .present = -1 }, .verdict = XDP_DROP, .delta = { D(drop_endpoint, 1) } },
	{ "endpoint id out of range", { .type = XW_PKT_SMALL, .dst_ep = 9999, .frag_count = 1,
	  .payload_len = 8, .present = -1 }, .verdict = XDP_DROP, .delta = { D(drop_endpoint, 1) } },
	{ "wrong session", { .type = XW_PKT_SMALL, .session = 0x9999, .frag_count = 1, .payload_len = 8,
	  .present = -1 }, .knobs = { K(session, 0x1234) }, .verdict = XDP_DROP, .delta = { D(drop_session, 1) } },
	{ "wrong queue", SMALL(LAT), .queue = 1, .verdict = XDP_DROP, .delta = { D(drop_queue, 1) } },
	{ "UDP port of queue 1 (in use) on queue 1, endpoint on queue 0", { .encap = XWT_ENC_UDP,
	  .udp_port = UQ(1), .type = XW_PKT_SMALL, .flags = LAT, .frag_count = 1, .payload_len = 8,
	  .present = -1 }, .knobs = { K(encap, 2) }, .queues = 0x3, .queue = 1, .verdict = XDP_DROP,
	  .delta = { D(drop_queue, 1) } },
	{ "no AF_XDP socket", { .type = XW_PKT_SMALL, .dst_ep = EP_NOSOCK, .frag_count = 1,
	  .payload_len = 8, .present = -1 }, .verdict = XDP_DROP, .delta = { D(drop_nosocket, 1) } },
	/* liveness probes: answered (XDP_TX) when the socket is open, never
	 * redirected or woken for */
	{ "PROBE, no AF_XDP socket (the process died): answered gone", { .type = XW_PKT_PROBE,
	  .dst_ep = EP_NOSOCK, .session = 0x1234 }, .verdict = XDP_TX, .delta = { D(probes_gone, 1) } },
	{ "PROBE to an endpoint not in use: answered gone", { .type = XW_PKT_PROBE,
	  .dst_ep = EP_OFF, .session = 0x1234 }, .verdict = XDP_TX, .delta = { D(probes_gone, 1) } },
	{ "PROBE to an endpoint id out of range: no answer", { .type = XW_PKT_PROBE, .dst_ep = 9999,
	  .session = 0x1234 }, .verdict = XDP_DROP, .delta = { D(drop_endpoint, 1) } },
	{ "PROBE with a wrong session: no answer", { .type = XW_PKT_PROBE, .session = 0x9999 },
	  .knobs = { K(session, 0x1234) }, .verdict = XDP_DROP, .delta = { D(drop_session, 1) } },
	{ "PROBE on the wrong queue: no answer", { .type = XW_PKT_PROBE, .session = 0x1234 }, .queue = 1,
	  .verdict = XDP_DROP, .delta = { D(drop_queue, 1) } },
	{ "PROBE to an open socket, receiver asleep: answered, no wake", { .type = XW_PKT_PROBE,
	  .session = 0x1234 }, .knobs = { K(session, 0x1234) }, .policy = XW_POLICY_EVERY,
	  .verdict = XDP_TX, .delta = { D(probes_answered, 1) } },
	{ "PROBE in UDP mode: answered", { .encap = XWT_ENC_UDP, .type = XW_PKT_PROBE, .session = 7 },
	  .knobs = { K(encap, 2) }, .verdict = XDP_TX, .delta = { D(probes_answered, 1) } },
	{ "PROBE_REPLY carries the prober's session: not checked", { .type = XW_PKT_PROBE_REPLY,
	  .session = 0x9999 }, .knobs = { K(session, 0x1234) }, .policy = XW_POLICY_EVERY,
	  .verdict = XDP_REDIRECT, .wake = W_NOW, .reason = XW_WAKE_EVERY, .delta = { D(wake_every, 1) } },
	{ "ACK with selective-ack words in its payload (docs/PROTOCOL.md)", { .type = XW_PKT_ACK,
	  .payload_len = 24, .present = -1 }, .policy = XW_POLICY_EVERY, .verdict = XDP_REDIRECT,
	  .wake = W_NOW, .reason = XW_WAKE_EVERY, .delta = { D(wake_every, 1) } },
	{ "UDP length beyond IP length", { .encap = XWT_ENC_UDP, .udp_len_delta = 4, .type = XW_PKT_SMALL,
	  .frag_count = 1, .payload_len = 8, .present = -1 }, .knobs = { K(encap, 3) }, .verdict = XDP_DROP,
	  .delta = { D(drop_length, 1) } },
	{ "IP total length beyond frame", { .encap = XWT_ENC_UDP, .ip_len_delta = 600, .type = XW_PKT_SMALL,
	  .frag_count = 1, .payload_len = 8, .present = -1 }, .knobs = { K(encap, 3) }, .verdict = XDP_DROP,
	  .delta = { D(drop_length, 1) } },
	{ "UDP length shorter than payload", { .encap = XWT_ENC_UDP, .udp_len_delta = -4, .ip_len_delta = 0,
	  .type = XW_PKT_SMALL, .frag_count = 1, .payload_len = 8, .present = -1 }, .knobs = { K(encap, 3) },
	  .verdict = XDP_DROP, .delta = { D(drop_length, 1) } },

	/* ---- multi-buffer frames (jumbo MTUs, a program loaded with xdp.frags):
	 * the headers in the first buffer, the lengths the whole frame's ---- */
	{ "jumbo MEDIUM, 9014 B frame in several buffers", { .type = XW_PKT_MEDIUM, .msg_len = 80000,
	  .frag_off = 8936, .frag_idx = 1, .frag_count = 9, .payload_len = 8936, .present = -1 },
	  .policy = XW_POLICY_EVERY, .verdict = XDP_REDIRECT, .wake = W_NOW, .reason = XW_WAKE_EVERY,
	  .delta = { D(wake_every, 1) } },
	{ "jumbo UDP MEDIUM, 9014 B frame", { .encap = XWT_ENC_UDP, .type = XW_PKT_MEDIUM, .msg_len = 80000,
	  .frag_off = 8908, .frag_idx = 1, .frag_count = 9, .payload_len = 8908, .present = -1 },
	  .knobs = { K(encap, 2) }, .policy = XW_POLICY_EVERY, .verdict = XDP_REDIRECT, .wake = W_NOW,
	  .reason = XW_WAKE_EVERY, .delta = { D(wake_every, 1) } },
	{ "jumbo payload_len beyond the frame (8000 of 8936 B)", { .type = XW_PKT_MEDIUM, .msg_len = 80000,
	  .frag_off = 8936, .frag_idx = 1, .frag_count = 9, .payload_len = 8936, .present = 8000 },
	  .verdict = XDP_DROP, .delta = { D(drop_length, 1) } },
	{ "jumbo IP total length beyond the frame", { .encap = XWT_ENC_UDP, .ip_len_delta = 600,
	  .type = XW_PKT_MEDIUM, .msg_len = 80000, .frag_off = 8000, .frag_idx = 1, .frag_count = 10,
	  .payload_len = 8000, .present = -1 }, .knobs = { K(encap, 3) }, .verdict = XDP_DROP,
	  .delta = { D(drop_length, 1) } },

	/* ---- accepted encapsulation variants (marker, LAT: wake now) ---- */
	{ "Ethernet, trailing padding", { .type = XW_PKT_SMALL, .flags = LAT, .frag_count = 1,
	  .payload_len = 4, .present = -1, .pad = 40 }, .policy = XW_POLICY_MARKER, .verdict = XDP_REDIRECT,
	  .wake = W_NOW, .reason = XW_WAKE_MARKER, .delta = { D(wake_marker, 1), D(lat_frames, 1) } },
	{ "one VLAN tag", { .vlans = 1, .type = XW_PKT_SMALL, .flags = LAT, .frag_count = 1, .payload_len = 4,
	  .present = -1 }, .policy = XW_POLICY_MARKER, .verdict = XDP_REDIRECT, .wake = W_NOW,
	  .reason = XW_WAKE_MARKER, .delta = { D(wake_marker, 1), D(lat_frames, 1) } },
	{ "two VLAN tags", { .vlans = 2, .type = XW_PKT_SMALL, .flags = LAT, .frag_count = 1, .payload_len = 4,
	  .present = -1 }, .policy = XW_POLICY_MARKER, .verdict = XDP_REDIRECT, .wake = W_NOW,
	  .reason = XW_WAKE_MARKER, .delta = { D(wake_marker, 1), D(lat_frames, 1) } },
	{ "custom EtherType", { .ethertype = 0x9000, .type = XW_PKT_SMALL, .flags = LAT, .frag_count = 1,
	  .payload_len = 4, .present = -1 }, .knobs = { K(ethertype, 0x9000) }, .policy = XW_POLICY_MARKER,
	  .verdict = XDP_REDIRECT, .wake = W_NOW, .reason = XW_WAKE_MARKER,
	  .delta = { D(wake_marker, 1), D(lat_frames, 1) } },
	{ "UDP mode", { .encap = XWT_ENC_UDP, .type = XW_PKT_SMALL, .flags = LAT, .frag_count = 1,
	  .payload_len = 4, .present = -1, .pad = 20 }, .knobs = { K(encap, 2) }, .policy = XW_POLICY_MARKER,
	  .verdict = XDP_REDIRECT, .wake = W_NOW, .reason = XW_WAKE_MARKER,
	  .delta = { D(wake_marker, 1), D(lat_frames, 1) } },
	{ "UDP mode, IP options, VLAN, custom port", { .encap = XWT_ENC_UDP, .vlans = 1, .ip_opt_words = 3,
	  .udp_port = 7777, .type = XW_PKT_SMALL, .flags = LAT, .frag_count = 1, .payload_len = 4,
	  .present = -1 }, .knobs = { K(encap, 2), K(udp_port, 7777) }, .policy = XW_POLICY_MARKER,
	  .verdict = XDP_REDIRECT, .wake = W_NOW, .reason = XW_WAKE_MARKER,
	  .delta = { D(wake_marker, 1), D(lat_frames, 1) } },
	{ "UDP port of queue 5 in use", { .encap = XWT_ENC_UDP, .udp_port = UQ(5), .type = XW_PKT_SMALL,
	  .flags = LAT, .frag_count = 1, .payload_len = 4, .present = -1 }, .knobs = { K(encap, 2) },
	  .queues = 1u << 5, .policy = XW_POLICY_MARKER, .verdict = XDP_REDIRECT, .wake = W_NOW,
	  .reason = XW_WAKE_MARKER, .delta = { D(wake_marker, 1), D(lat_frames, 1) } },
	{ "UDP port of queue 2 in use, custom port", { .encap = XWT_ENC_UDP, .udp_port = 7779,
	  .type = XW_PKT_SMALL, .flags = LAT, .frag_count = 1, .payload_len = 4, .present = -1 },
	  .knobs = { K(encap, 3), K(udp_port, 7777) }, .queues = 0x5, .policy = XW_POLICY_MARKER,
	  .verdict = XDP_REDIRECT, .wake = W_NOW, .reason = XW_WAKE_MARKER,
	  .delta = { D(wake_marker, 1), D(lat_frames, 1) } },
	{ "session matches", { .type = XW_PKT_SMALL, .flags = LAT, .session = 0x1234, .frag_count = 1,
	  .payload_len = 8, .present = -1 }, .knobs = { K(session, 0x1234) }, .policy = XW_POLICY_MARKER,
	  .verdict = XDP_REDIRECT, .wake = W_NOW, .reason = XW_WAKE_MARKER,
	  .delta = { D(wake_marker, 1), D(lat_frames, 1) } },
	{ "CONNECT with a new session passes the check", { .type = XW_PKT_CONNECT, .flags = LAT,
	  .session = 0x7777 }, .knobs = { K(session, 0x1234) }, .policy = XW_POLICY_MARKER,
	  .verdict = XDP_REDIRECT, .wake = W_NOW, .reason = XW_WAKE_MARKER,
	  .delta = { D(wake_marker, 1), D(lat_frames, 1) } },
	{ "CONNECT carrying a nonce (frag_off:frag_idx, not fragment fields) passes",
	  { .type = XW_PKT_CONNECT, .flags = LAT, .session = 0x7777, .frag_off = 0x9F1C0E2B,
	  .frag_idx = 0x44D7A310 }, .policy = XW_POLICY_MARKER, .verdict = XDP_REDIRECT,
	  .wake = W_NOW, .reason = XW_WAKE_MARKER, .delta = { D(wake_marker, 1), D(lat_frames, 1) } },
	{ "CLOSE carrying a nonce passes", { .type = XW_PKT_CLOSE, .flags = LAT, .frag_off = 1,
	  .frag_idx = 0xFFFFFFFF }, .policy = XW_POLICY_MARKER, .verdict = XDP_REDIRECT,
	  .wake = W_NOW, .reason = XW_WAKE_MARKER, .delta = { D(wake_marker, 1), D(lat_frames, 1) } },

	/* ---- every ---- */
	{ "every: mid-stream frame wakes", MEDIUM(0), .policy = XW_POLICY_EVERY, .verdict = XDP_REDIRECT,
	  .wake = W_NOW, .reason = XW_WAKE_EVERY, .delta = { D(wake_every, 1) } },
	{ "every: not armed, no wake", MEDIUM(0), .policy = XW_POLICY_EVERY, .unarmed = 1,
	  .verdict = XDP_REDIRECT, .wake = W_NONE, .delta = { D(wake_unarmed, 1) } },

	/* ---- timeout ---- */
	{ "timeout: one frame starts the timer", MEDIUM(0), .policy = XW_POLICY_TIMEOUT,
	  .verdict = XDP_REDIRECT, .wake = W_DEFER, .due_us = COAL_US, .delta = { D(timer_starts, 1) } },
	{ "timeout: LAT is ignored", SMALL(LAT), .policy = XW_POLICY_TIMEOUT, .verdict = XDP_REDIRECT,
	  .wake = W_DEFER, .due_us = COAL_US, .delta = { D(timer_starts, 1), D(lat_frames, 1) } },
	{ "timeout: coalesce_frames reached", MEDIUM(0), .policy = XW_POLICY_TIMEOUT, .pending = 31,
	  .produced = 31, .verdict = XDP_REDIRECT, .wake = W_NOW, .reason = XW_WAKE_FRAMES,
	  .delta = { D(wake_frames, 1) } },
	{ "timeout: coalesce_frames 4 reached", MEDIUM(0), .policy = XW_POLICY_TIMEOUT, .pending = 3,
	  .produced = 3, .knobs = { K(coalesce_frames, 4) }, .verdict = XDP_REDIRECT, .wake = W_NOW,
	  .reason = XW_WAKE_FRAMES, .delta = { D(wake_frames, 1) } },
	{ "timeout: pending already consumed starts a new batch", MEDIUM(0), .policy = XW_POLICY_TIMEOUT,
	  .pending = 31, .produced = 31, .consumed = 31, .verdict = XDP_REDIRECT, .wake = W_DEFER,
	  .due_us = COAL_US,
	  .delta = { D(timer_starts, 1) } },

	/* ---- marker ---- */
	{ "marker: LAT wakes now", SMALL(LAT), .policy = XW_POLICY_MARKER, .verdict = XDP_REDIRECT,
	  .wake = W_NOW, .reason = XW_WAKE_MARKER, .delta = { D(wake_marker, 1), D(lat_frames, 1) } },
	{ "marker: LAT+MORE still wakes now", SMALL(LAT | MORE), .policy = XW_POLICY_MARKER,
	  .verdict = XDP_REDIRECT, .wake = W_NOW, .reason = XW_WAKE_MARKER,
	  .delta = { D(wake_marker, 1), D(lat_frames, 1), D(more_frames, 1) } },
	{ "marker: unmarked frame waits for the timeout", MEDIUM(0), .policy = XW_POLICY_MARKER,
	  .verdict = XDP_REDIRECT, .wake = W_DEFER, .due_us = COAL_US, .delta = { D(timer_starts, 1) } },
	{ "marker: unmarked frame, coalesce_frames reached", MEDIUM(MORE), .policy = XW_POLICY_MARKER,
	  .pending = 31, .produced = 40, .consumed = 2, .verdict = XDP_REDIRECT, .wake = W_NOW,
	  .reason = XW_WAKE_FRAMES, .delta = { D(wake_frames, 1), D(more_frames, 1) } },
	{ "marker: LAT on SMALL masked out", SMALL(LAT), .policy = XW_POLICY_MARKER,
	  .knobs = { K(lat_mask, 0xFFFFFFFF & ~(1u << XW_PKT_SMALL)) }, .verdict = XDP_REDIRECT,
	  .wake = W_DEFER, .due_us = COAL_US, .delta = { D(timer_starts, 1) } },
	{ "marker: LAT on MEDIUM honoured when SMALL masked", MEDIUM(LAT), .policy = XW_POLICY_MARKER,
	  .knobs = { K(lat_mask, 1u << XW_PKT_MEDIUM) }, .verdict = XDP_REDIRECT, .wake = W_NOW,
	  .reason = XW_WAKE_MARKER, .delta = { D(wake_marker, 1), D(lat_frames, 1) } },
	{ "marker: not armed", SMALL(LAT), .policy = XW_POLICY_MARKER, .unarmed = 1, .verdict = XDP_REDIRECT,
	  .wake = W_NONE, .delta = { D(wake_unarmed, 1), D(lat_frames, 1) } },

	/* ---- stream ---- */
	{ "stream: lone LAT frame wakes now", SMALL(LAT), .policy = XW_POLICY_STREAM, .verdict = XDP_REDIRECT,
	  .wake = W_NOW, .reason = XW_WAKE_MARKER, .delta = { D(wake_marker, 1), D(lat_frames, 1) } },
	{ "stream: LAT+MORE is deferred", SMALL(LAT | MORE), .policy = XW_POLICY_STREAM,
	  .verdict = XDP_REDIRECT, .wake = W_DEFER, .due_us = COAL_US,
	  .delta = { D(deferrals, 1), D(timer_starts, 1), D(lat_frames, 1), D(more_frames, 1) } },
	{ "stream: burst continues (MORE), stays deferred", MEDIUM(MORE), .policy = XW_POLICY_STREAM,
	  .deferred = 1, .pending = 3, .produced = 3, .verdict = XDP_REDIRECT, .wake = W_DEFER,
	  .due_us = COAL_US - 1, /* deferred 1 us before now */
	  .delta = { D(timer_starts, 1), D(more_frames, 1) } },
	{ "stream: burst ends (no MORE), deferred wake sent", MEDIUM(0), .policy = XW_POLICY_STREAM,
	  .deferred = 1, .pending = 3, .produced = 3, .verdict = XDP_REDIRECT, .wake = W_NOW,
	  .reason = XW_WAKE_STREAM, .delta = { D(wake_stream, 1) } },
	{ "stream: burst ends on a LAT frame", SMALL(LAT), .policy = XW_POLICY_STREAM, .deferred = 1,
	  .pending = 3, .produced = 3, .verdict = XDP_REDIRECT, .wake = W_NOW, .reason = XW_WAKE_STREAM,
	  .delta = { D(wake_stream, 1), D(lat_frames, 1) } },
	{ "stream: unmarked frame outside a burst: timeout rule", MEDIUM(MORE), .policy = XW_POLICY_STREAM,
	  .verdict = XDP_REDIRECT, .wake = W_DEFER, .due_us = COAL_US, .delta = { D(timer_starts, 1), D(more_frames, 1) } },
	/* A deferral's gap is GAP_US, under the cap COAL_US (so the row tells
	 * them apart) and long enough that its timer cannot expire while the
	 * row is checked on a slow machine (a 1 s gap once did, under ASan
	 * and load: the timer's wake record and new deadline showed in the
	 * row).  The program clamps the time since the last frame at 1 s, so
	 * a wake for a paused stream needs a gap knob of at most 1 s: that
	 * row starts no timer. */
	{ "stream: gap knob 5 s, previous frame 10us ago: deferred until the gap", SMALL(LAT),
	  .policy = XW_POLICY_STREAM, .last_frame_ago_us = 10, .knobs = { K(stream_gap_usecs, GAP_US) },
	  .verdict = XDP_REDIRECT, .wake = W_DEFER, .due_us = GAP_US, .delta = { D(deferrals, 1), D(timer_starts, 1), D(lat_frames, 1) } },
	{ "stream: gap knob 1 s, previous frame 2 s ago: wake", SMALL(LAT), .policy = XW_POLICY_STREAM,
	  .last_frame_ago_us = 2 * SEC_US, .knobs = { K(stream_gap_usecs, SEC_US) }, .verdict = XDP_REDIRECT,
	  .wake = W_NOW, .reason = XW_WAKE_MARKER, .delta = { D(wake_marker, 1), D(lat_frames, 1) } },
	{ "stream: not armed, burst end", MEDIUM(0), .policy = XW_POLICY_STREAM, .deferred = 1, .unarmed = 1,
	  .pending = 3, .produced = 3, .verdict = XDP_REDIRECT, .wake = W_NONE,
	  .delta = { D(wake_unarmed, 1) } },

	/* ---- adaptive ---- */
	{ "adaptive: fast arrivals switch to stream, LAT+MORE deferred", SMALL(LAT | MORE),
	  .policy = XW_POLICY_ADAPTIVE, .gap_ewma_ns = 1000, .last_frame_ago_us = 1, .verdict = XDP_REDIRECT,
	  .wake = W_DEFER, .due_us = COAL_US, .delta = { D(adapt_switches, 1), D(deferrals, 1), D(timer_starts, 1),
	  D(lat_frames, 1), D(more_frames, 1) } },
	{ "adaptive: slow arrivals stay marker, LAT+MORE wakes", SMALL(LAT | MORE),
	  .policy = XW_POLICY_ADAPTIVE, .gap_ewma_ns = 500000, .last_frame_ago_us = 500,
	  .verdict = XDP_REDIRECT, .wake = W_NOW, .reason = XW_WAKE_MARKER,
	  .delta = { D(wake_marker, 1), D(lat_frames, 1), D(more_frames, 1) } },
	{ "adaptive: stream mode, gaps grow, back to marker", SMALL(LAT | MORE),
	  .policy = XW_POLICY_ADAPTIVE, .adapt_mode = XW_ADAPT_STREAM, .gap_ewma_ns = 200000,
	  .last_frame_ago_us = 1000, .verdict = XDP_REDIRECT, .wake = W_NOW, .reason = XW_WAKE_MARKER,
	  .delta = { D(adapt_switches, 1), D(wake_marker, 1), D(lat_frames, 1), D(more_frames, 1) } },
};

static void apply_knobs(struct xwt_xdp *x, const struct knobset *ks, int n)
{
	XW_OPTS(xw_knob_info, ki);

	for (int i = 0; i < n && ks[i].k; i++) {
		int idx = xw_knob_find(ks[i].k);

		REQUIRE(idx >= 0, "knob %s", ks[i].k);
		xw_knob_info(idx, &ki);
		xwt_set_knob(x, ks[i].k, ki.per_endpoint ? EP : 0, ks[i].v);
	}
}

static void restore_knobs(struct xwt_xdp *x)
{
	XW_OPTS(xw_knob_info, ki);

	for (int i = 0; i < xw_knob_count(); i++) {
		xw_knob_info(i, &ki);
		xwt_set_knob(x, ki.name, ki.per_endpoint ? EP : 0, ki.def);
	}
	xwt_set_knob(x, "coalesce_usecs", EP, COAL_US);
}

static void prepare(struct xwt_xdp *x, __u32 policy, int unarmed, __u64 produced, __u64 consumed,
		    const struct xw_wake_state *ws)
{
	struct xw_shared sh = { .armed = !unarmed, .produced = produced, .consumed = consumed };

	xwt_set_wake_state(x, EP, ws);
	xwt_set_shared(x, EP, &sh);
	xwt_set_knob(x, "policy", EP, policy);
	xwt_drain(x);
}

static int run_row(struct xwt_xdp *x, const struct fx *r)
{
	static __u8 in[XWT_MAX_FRAME], out[XWT_MAX_FRAME];
	long long want[XW_STATS_NR] = { 0 };
	struct xw_wake_state ws = { .pending = r->pending, .deferred = r->deferred,
				    .gap_ewma_ns = r->gap_ewma_ns, .adapt_mode = r->adapt_mode };
	XW_OPTS(xw_stats, before);
	XW_OPTS(xw_stats, after);
	int len, out_len, v, nw = 0, fails = xwt_failures;
	/* The program sees "now" fixed for the whole row: the history below
	 * is exact, whatever the scheduler does to this process. */
	__u64 now = xwu_now_ns();

	if (r->deferred)
		ws.deferred_since_ns = now - 1000;
	if (r->pending)
		ws.first_pending_ns = now - 1000;
	if (r->last_frame_ago_us)
		ws.last_frame_ns = now - r->last_frame_ago_us * 1000;
	restore_knobs(x);
	apply_knobs(x, r->knobs, 3);
	prepare(x, r->policy, r->unarmed, r->produced, r->consumed, &ws);
	for (__u32 q = 0; q < 32; q++)
		xwt_set_queue(x, q, ((r->queues ? r->queues : 1u) >> q) & 1 ? 4242 : 0);

	len = xwt_build(&r->f, in);
	if (getenv("XWT_VERBOSE"))
		printf("row: %s (%d bytes)\n", r->name, len);
	before = xwt_stats(x);
	xwt_set_clock(x, now);
	v = xwt_run(x, in, len, r->queue, &out_len, out);
	after = xwt_stats(x);

	CHECK(v == r->verdict, "[%s] verdict %s, want %s", r->name, xwt_verdict(v),
	      xwt_verdict(r->verdict));
	if (r->verdict != XDP_REDIRECT && r->verdict != XDP_TX)
		CHECK(out_len == len && !memcmp(in, out, len), "[%s] frame modified", r->name);

	/* Wake records present right after the frame. */
	xwt_drain(x);
	for (int i = 0; i < x->nrecs; i++) {
		if (x->recs[i].kind != XW_REC_WAKE)
			continue;
		nw++;
		if (r->wake == W_NOW)
			CHECK(x->recs[i].reason == r->reason && x->recs[i].ep == EP,
			      "[%s] wake reason %s, want %s", r->name,
			      xw_wake_reason_name(x->recs[i].reason), xw_wake_reason_name(r->reason));
	}
	CHECK(nw == (r->wake == W_NOW), "[%s] %d wake records, want %d", r->name, nw,
	      r->wake == W_NOW);
	if (r->wake == W_DEFER) {
		struct xw_wake_state w = xwt_get_wake_state(x, EP);

		CHECK(r->due_us && w.deadline_ns == now + r->due_us * 1000, "[%s] deadline %+lld ns from now, want %+lld us",
		      r->name, (long long)(w.deadline_ns - now), (long long)r->due_us);
	}
	if (r->wake == W_NOW) {
		struct xw_shared sh = xwt_get_shared(x, EP);

		CHECK(sh.armed == 0, "[%s] armed flag not taken", r->name);
	}

	/* Every counter changes exactly as expected. */
	if (r->verdict == XDP_PASS) {
		want[C(frames_passed)] = 1;
		want[C(bytes_passed)] = len;
	} else {
		want[C(frames_ours)] = 1;
		want[C(bytes_ours)] = len;
	}
	if (r->verdict == XDP_REDIRECT) {
		want[C(frames_redirected)] = 1;
		want[C(bytes_redirected)] = len;
	}
	for (int i = 0; i < 5 && r->delta[i].d; i++)
		want[r->delta[i].idx] = r->delta[i].d;
	for (int i = 0; i < XW_STATS_NR; i++) {
		long long d = (long long)(xw_stat_value(&after, i) - xw_stat_value(&before, i));

		CHECK(d == want[i], "[%s] counter %s changed by %lld, want %lld", r->name,
		      xw_stat_name(i), d, want[i]);
	}
	xwt_set_clock(x, 0);
	for (__u32 q = 0; q < 32; q++)
		xwt_set_queue(x, q, q == 0 ? 4242 : 0);
	return xwt_failures == fails;
}

/* LAT honoured on every packet type under marker; counters per type. */
static void lat_per_type(struct xwt_xdp *x)
{
	static __u8 in[XWT_MAX_FRAME];
	struct xw_wake_state ws = {};

	for (int t = XW_PKT_SMALL; t < XW_PKT_TYPE_MAX; t++) {
		if (t == XW_PKT_PROBE) /* answered, not redirected: probe_reply() */
			continue;
		for (int masked = 0; masked < 2; masked++) {
			struct xwt_frame f = { .type = t, .flags = LAT, .msg_len = 4000, .frag_count = 4,
					       .frag_idx = 3, .frag_off = 3000, .payload_len = 100,
					       .present = -1 };
			int v;

			if (t == XW_PKT_SMALL) {
				f.frag_count = 1;
				f.frag_idx = 0;
				f.frag_off = 0;
			}
			if (t >= XW_PKT_NOTIFY) {
				f.frag_count = f.frag_idx = f.frag_off = 0;
				f.payload_len = 0;
			}
			restore_knobs(x);
			if (masked)
				xwt_set_knob(x, "lat_mask", EP, ~(1u << t));
			prepare(x, XW_POLICY_MARKER, 0, 0, 0, &ws);
			v = xwt_run(x, in, xwt_build(&f, in), 0, NULL, NULL);
			CHECK(v == XDP_REDIRECT, "type %s: verdict %s", xw_pkt_type_name(t),
			      xwt_verdict(v));
			xwt_drain(x);
			CHECK(x->nrecs == !masked, "type %s LAT %s: %d records", xw_pkt_type_name(t),
			      masked ? "masked" : "honoured", x->nrecs);
		}
	}
}

/* Two LAT frames during one sleep: one wake; the second finds it unarmed. */
static void one_wake_per_sleep(struct xwt_xdp *x)
{
	static __u8 in[XWT_MAX_FRAME];
	struct xwt_frame f = SMALL(LAT);
	struct xw_wake_state ws = {};
	XW_OPTS(xw_stats, b);
	XW_OPTS(xw_stats, a);
	int len = xwt_build(&f, in);

	restore_knobs(x);
	prepare(x, XW_POLICY_EVERY, 0, 0, 0, &ws);
	b = xwt_stats(x);
	xwt_run(x, in, len, 0, NULL, NULL);
	xwt_run(x, in, len, 0, NULL, NULL);
	xwt_run(x, in, len, 0, NULL, NULL);
	a = xwt_stats(x);
	xwt_drain(x);
	CHECK(x->nrecs == 1, "one sleep got %d wakes", x->nrecs);
	CHECK(a.wake_every - b.wake_every == 1 && a.wake_unarmed - b.wake_unarmed == 2,
	      "wake_every +%llu wake_unarmed +%llu", a.wake_every - b.wake_every,
	      a.wake_unarmed - b.wake_unarmed);
	CHECK(x->nrecs == 1 && x->recs[0].produced == 1, "record counts %llu produced frames",
	      x->nrecs ? (unsigned long long)x->recs[0].produced : 0ULL);
	/* Re-arm: the next frame wakes again, and the record counts all 4. */
	struct xw_shared sh = xwt_get_shared(x, EP);

	sh.armed = 1;
	xwt_set_shared(x, EP, &sh);
	xwt_run(x, in, len, 0, NULL, NULL);
	xwt_drain(x);
	CHECK(x->nrecs == 1 && x->recs[0].produced == 4, "re-armed: %d records", x->nrecs);
}

/*
 * A deferred or coalesced wake arrives, with its reason, and not before its
 * bound.  When it is due is checked exactly by the fixture rows (the
 * deadline the program sets); how late the kernel runs the timer on a busy
 * machine is not the program's decision and is measured in bench/ (the
 * notification delay), not asserted here.
 */
static void timer_case(struct xwt_xdp *x, const char *name, __u32 policy, struct xwt_frame f,
		       const struct knobset *ks, __u64 min_us, int reason)
{
	static __u8 in[XWT_MAX_FRAME];
	struct xw_wake_state ws = {};
	unsigned long long t0, dt;

	restore_knobs(x);
	apply_knobs(x, ks, 3);
	prepare(x, policy, 0, 0, 0, &ws);
	t0 = xwu_now_ns();
	xwt_run(x, in, xwt_build(&f, in), 0, NULL, NULL);
	/* Records come from the program only: a timer cannot have expired
	 * before the frame, and a wake at once would be in the ring now. */
	xwt_drain(x);
	if (x->nrecs == 0)
		xwt_wait_rec(x, XWT_HANG_MS);
	dt = x->nrecs ? (x->recs[0].ts_ns - t0) / 1000 : 0;
	CHECK(x->nrecs == 1, "[%s] %d wake records", name, x->nrecs);
	if (x->nrecs == 1) {
		CHECK(x->recs[0].reason == reason, "[%s] reason %s, want %s", name,
		      xw_wake_reason_name(x->recs[0].reason), xw_wake_reason_name(reason));
		/* The record's timestamp is taken in the timer callback. */
		CHECK(dt >= min_us, "[%s] woke after %llu us, before its bound %llu us", name, dt,
		      (unsigned long long)min_us);
	}
}

/* Wait (bounded) until stats counter @idx has grown past @than. */
static int wait_stat(struct xwt_xdp *x, int idx, __u64 than)
{
	unsigned long long end = xwu_now_ns() + XWT_HANG_MS * 1000000ULL;

	for (;;) {
		struct xw_stats st = xwt_stats(x);

		if (xw_stat_value(&st, idx) > than)
			return 1;
		if (xwu_now_ns() > end)
			return 0;
		usleep(200);
	}
}

static void timers(struct xwt_xdp *x)
{
	struct knobset k1[3] = { K(coalesce_usecs, 2000) };
	struct knobset k2[3] = { K(coalesce_usecs, 3000) };
	struct knobset k3[3] = { K(coalesce_usecs, 100000), K(stream_gap_usecs, 500) };
	struct knobset k4[3] = { K(coalesce_usecs, 1000), K(stream_gap_usecs, 5000) };
	struct xwt_frame med = MEDIUM(0), lm = SMALL(LAT | MORE);

	timer_case(x, "timeout 2 ms", XW_POLICY_TIMEOUT, med, k1, 2000, XW_WAKE_TIMEOUT);
	timer_case(x, "marker, unmarked 2 ms", XW_POLICY_MARKER, med, k1, 2000, XW_WAKE_TIMEOUT);
	timer_case(x, "stream deferral capped at 3 ms", XW_POLICY_STREAM, lm, k2, 3000,
		   XW_WAKE_TIMEOUT);
	timer_case(x, "stream gap 500 us", XW_POLICY_STREAM, lm, k3, 500, XW_WAKE_STREAM);
	/* The reason tells which bound fired: the gap would say STREAM. */
	timer_case(x, "stream gap 5 ms but cap 1 ms", XW_POLICY_STREAM, lm, k4, 1000,
		   XW_WAKE_TIMEOUT);

	/* The receiver consumed the frame before the timer: no wake.  The
	 * application's consumption is stated before the frame arrives (its
	 * consumed count already covers it), so the outcome does not depend
	 * on whether this process or the timer runs first. */
	{
		static __u8 in[XWT_MAX_FRAME];
		struct xw_wake_state ws = {};
		__u64 fires;

		restore_knobs(x);
		xwt_set_knob(x, "coalesce_usecs", EP, 2000);
		prepare(x, XW_POLICY_TIMEOUT, 0, 0, 1, &ws);
		fires = xwt_stats(x).timer_fires;
		xwt_run(x, in, xwt_build(&med, in), 0, NULL, NULL);
		CHECK(wait_stat(x, C(timer_fires), fires), "coalescing timer never fired");
		CHECK(xwt_drain(x) == 0, "timer woke a receiver that had consumed everything");
		CHECK(xwt_get_wake_state(x, EP).pending == 0, "pending not cleared by the timer");
	}
}

/* Reset the watchdog state; the update cancels its timer. */
static void wd_reset(struct xwt_xdp *x)
{
	struct xw_wd_state wd = {};
	__u32 k = EP;

	REQUIRE(bpf_map_update_elem(bpf_map__fd(x->skel->maps.wd_state), &k, &wd, 0) == 0,
		"wd_state");
	xwt_drain(x);
}

/* Run a frame with the program's clock fixed at a known time; returns the
 * watchdog deadline that frame's period has (now + period). */
static __u64 wd_frame(struct xwt_xdp *x, const __u8 *in, int len, __u32 period_us)
{
	__u64 t = xwu_now_ns();

	xwt_set_clock(x, t);
	xwt_run(x, (void *)in, len, 0, NULL, NULL);
	xwt_set_clock(x, 0);
	return t + period_us * 1000ULL;
}

/* Wait (bounded) until the watchdog timer has expired @n times since the
 * period that ends at @d began: each expiry sets a new deadline (the next
 * period, with frames unconsumed) or none. */
static int wd_wait_periods(struct xwt_xdp *x, __u64 d, int n)
{
	unsigned long long end = xwu_now_ns() + XWT_HANG_MS * 1000000ULL;

	while (n > 0 && xwu_now_ns() < end) {
		__u64 e = xwt_get_wd_state(x, EP).deadline_ns;

		if (e != d) {
			d = e;
			n--;
		}
		usleep(100);
	}
	return n <= 0;
}

/* The period of the watchdog rows whose steps must all happen inside it. */
#define WD_LONG_US 2000000U

/* Watchdog: frames left unconsumed for a period wake the watchdog ring. */
static void watchdog(struct xwt_xdp *x)
{
	static __u8 in[XWT_MAX_FRAME];
	struct xwt_frame f = MEDIUM(0);
	struct xw_wake_state ws = {};
	struct xw_wd_state wd;
	struct xw_shared sh;
	unsigned long long t0, dt;
	int len = xwt_build(&f, in);

	/* The period starts at the frame: deadline exactly a period later. */
	restore_knobs(x);
	wd_reset(x);
	xwt_set_knob(x, "watchdog_usecs", EP, COAL_US);
	prepare(x, XW_POLICY_MARKER, 1, 0, 0, &ws);
	t0 = xwu_now_ns();
	xwt_set_clock(x, t0);
	xwt_run(x, in, len, 0, NULL, NULL);
	wd = xwt_get_wd_state(x, EP);
	xwt_set_clock(x, 0);
	CHECK(wd.deadline_ns == t0 + COAL_US * 1000ULL && wd.produced == 1,
	      "watchdog period: deadline %+lld ns from the frame, produced %llu",
	      (long long)(wd.deadline_ns - t0), (unsigned long long)wd.produced);

	/* The lead (the library's measured cost of its thread's wake-up and
	 * pass) moves the timer earlier, at most to half a period after the
	 * frame. */
	for (int i = 0; i < 2; i++) {
		__u64 lead = i ? COAL_US * 900ULL : COAL_US * 300ULL, want;

		wd_reset(x);
		sh = xwt_get_shared(x, EP);
		sh.wd_lead_ns = lead;
		xwt_set_shared(x, EP, &sh);
		t0 = xwu_now_ns();
		xwt_set_clock(x, t0);
		xwt_run(x, in, len, 0, NULL, NULL);
		wd = xwt_get_wd_state(x, EP);
		xwt_set_clock(x, 0);
		want = i ? COAL_US * 500ULL : COAL_US * 700ULL;
		CHECK(wd.deadline_ns == t0 + want,
		      "watchdog lead %llu ns: deadline %+lld ns from the frame, want %llu",
		      (unsigned long long)lead, (long long)(wd.deadline_ns - t0),
		      (unsigned long long)want);
		sh = xwt_get_shared(x, EP);
		sh.wd_lead_ns = 0;
		xwt_set_shared(x, EP, &sh);
	}

	/* It fires, not before the period, with the watchdog armed. */
	wd_reset(x);
	xwt_set_knob(x, "watchdog_usecs", EP, 1000);
	prepare(x, XW_POLICY_MARKER, 1, 0, 0, &ws);
	sh = xwt_get_shared(x, EP);
	sh.wd_armed = 1;
	xwt_set_shared(x, EP, &sh);
	t0 = xwu_now_ns();
	xwt_run(x, in, len, 0, NULL, NULL);
	xwt_wait_rec(x, XWT_HANG_MS);
	CHECK(x->nrecs == 1 && x->recs[0].reason == XW_WAKE_WATCHDOG, "watchdog: %d records",
	      x->nrecs);
	if (x->nrecs) {
		dt = (x->recs[0].ts_ns - t0) / 1000;
		CHECK(dt >= 1000, "watchdog after %llu us, before its period of 1000 us", dt);
	}
	sh = xwt_get_shared(x, EP);
	CHECK(sh.wd_armed == 0 && sh.wd_wakes == 1, "wd_armed %u wd_wakes %llu", sh.wd_armed,
	      (unsigned long long)sh.wd_wakes);

	/* Consumed in time: the watchdog stays asleep, and its timer stops
	 * once the frames are consumed.  The consumption is stated before the
	 * frame, so it is "in time" whatever the scheduler does. */
	wd_reset(x);
	sh = xwt_get_shared(x, EP);
	sh.wd_armed = 1;
	sh.consumed = sh.produced + 1;
	xwt_set_shared(x, EP, &sh);
	CHECK(wd_wait_periods(x, wd_frame(x, in, len, 1000), 1), "watchdog timer never expired");
	CHECK(xwt_get_wd_state(x, EP).deadline_ns == 0, "watchdog timer still running, nothing waits");
	CHECK(xwt_drain(x) == 0, "watchdog woke although the frames were consumed");

	/* A frame arriving while the timer runs starts the next generation:
	 * once the first generation is consumed, the timer is due a period
	 * after that frame (not a period after the expiry), and its record
	 * carries that due time. */
	/* The second frame and the consumption of the first must come
	 * before the first period ends (real time): a period of 2 s leaves a
	 * stalled test a second for that (1 ms was too little under load). */
	wd_reset(x);
	xwt_set_knob(x, "watchdog_usecs", EP, WD_LONG_US);
	sh = xwt_get_shared(x, EP);
	sh.wd_armed = 1;
	xwt_set_shared(x, EP, &sh);
	{
		__u64 d = wd_frame(x, in, len, WD_LONG_US), t1 = d - WD_LONG_US * 500ULL,
		      d1 = t1 + WD_LONG_US * 1000ULL;
		unsigned long long end;

		xwt_set_clock(x, t1);
		xwt_run(x, in, len, 0, NULL, NULL);
		xwt_set_clock(x, 0);
		wd = xwt_get_wd_state(x, EP);
		CHECK(wd.deadline_ns == d && wd.next_ns == t1,
		      "second frame: deadline %+lld ns, next generation %+lld ns from the first",
		      (long long)(wd.deadline_ns - d), (long long)(wd.next_ns - t1));
		sh = xwt_get_shared(x, EP);
		sh.consumed = wd.produced; /* the first frame, not the second */
		xwt_set_shared(x, EP, &sh);
		CHECK(wd_wait_periods(x, d, 1), "watchdog timer never expired");
		end = xwu_now_ns() + XWT_HANG_MS * 1000000ULL;
		while (!(wd = xwt_get_wd_state(x, EP)).deadline_ns && xwu_now_ns() < end)
			usleep(100);
		CHECK(wd.deadline_ns == d1 && wd.next_ns == 0,
		      "next generation due %+lld ns from a period after its frame",
		      (long long)(wd.deadline_ns - d1));
		CHECK(xwt_drain(x) == 0, "watchdog woke for a consumed generation");
		xwt_wait_rec(x, XWT_HANG_MS);
		CHECK(x->nrecs == 1 && x->recs[0].reason == XW_WAKE_WATCHDOG &&
		      x->recs[0].ts_ns == d1,
		      "next generation: %d records, due %+lld ns", x->nrecs,
		      x->nrecs ? (long long)(x->recs[0].ts_ns - d1) : 0LL);
	}
	xwt_set_knob(x, "watchdog_usecs", EP, 1000);

	/* The watchdog thread was busy (not armed) when the period ended: the
	 * timer keeps looking while frames stay unconsumed, so arming later
	 * still gets a wake at the next expiry. */
	wd_reset(x);
	sh = xwt_get_shared(x, EP);
	sh.wd_armed = 0;
	xwt_set_shared(x, EP, &sh);
	CHECK(wd_wait_periods(x, wd_frame(x, in, len, 1000), 3),
	      "watchdog timer stopped with frames unconsumed");
	CHECK(xwt_drain(x) == 0, "watchdog woke while not armed");
	sh = xwt_get_shared(x, EP);
	sh.wd_armed = 1;
	xwt_set_shared(x, EP, &sh);
	xwt_wait_rec(x, XWT_HANG_MS);
	CHECK(x->nrecs == 1 && x->recs[0].reason == XW_WAKE_WATCHDOG,
	      "watchdog armed late: %d records", x->nrecs);
	wd_reset(x);
	xwt_set_knob(x, "watchdog_usecs", EP, 0);
}

/* Per-endpoint attribution: drops before the endpoint is known go to the
 * interface entry, the rest to the endpoint's entry. */
static void attribution(struct xwt_xdp *x)
{
	static __u8 in[XWT_MAX_FRAME];
	struct xwt_frame bad = { .version = 9, .type = XW_PKT_SMALL }, ok = SMALL(LAT);
	int ncpu = libbpf_num_possible_cpus();
	struct xw_map_stats v[ncpu];
	__u64 ep_drop = 0, if_drop = 0, ep_red = 0;
	__u32 k;
	struct xw_wake_state ws = {};

	restore_knobs(x);
	prepare(x, XW_POLICY_MARKER, 1, 0, 0, &ws);
	xwt_run(x, in, xwt_build(&bad, in), 0, NULL, NULL);
	xwt_run(x, in, xwt_build(&ok, in), 0, NULL, NULL);
	k = XW_STATS_IFACE;
	bpf_map_lookup_elem(bpf_map__fd(x->skel->maps.stats), &k, v);
	for (int c = 0; c < ncpu; c++)
		if_drop += v[c].drop_version;
	k = EP;
	bpf_map_lookup_elem(bpf_map__fd(x->skel->maps.stats), &k, v);
	for (int c = 0; c < ncpu; c++) {
		ep_drop += v[c].drop_version;
		ep_red += v[c].frames_redirected;
	}
	CHECK(if_drop >= 1 && ep_drop == 0, "drop_version: iface %llu ep %llu",
	      (unsigned long long)if_drop, (unsigned long long)ep_drop);
	CHECK(ep_red >= 1, "redirect not attributed to the endpoint");
}

/*
 * Frames of ours addressed to another host's MAC (a bridge flooding unknown
 * unicast, promiscuous mode) go to the kernel untouched and are counted;
 * ours, broadcast and multicast are handled; with no address set (0) the
 * program does not check.
 */
static __u64 iface_stat(struct xwt_xdp *x, size_t off)
{
	int ncpu = libbpf_num_possible_cpus();
	struct xw_map_stats v[ncpu];
	__u32 k = XW_STATS_IFACE;
	__u64 n = 0;

	bpf_map_lookup_elem(bpf_map__fd(x->skel->maps.stats), &k, v);
	for (int c = 0; c < ncpu; c++)
		n += *(__u64 *)((char *)&v[c] + off);
	return n;
}

static void other_host(struct xwt_xdp *x)
{
	static __u8 in[XWT_MAX_FRAME];
	static const __u8 ours[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x0b };
	static const __u8 dst[4][6] = {
		{ 0x02, 0x00, 0x00, 0x00, 0x00, 0x0c }, /* another host          */
		{ 0x02, 0x00, 0x00, 0x00, 0x00, 0x0b }, /* ours                  */
		{ 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }, /* broadcast             */
		{ 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 }, /* multicast             */
	};
	struct xwt_frame f = SMALL(LAT);
	struct xw_wake_state ws = {};
	__u16 hi;
	__u32 lo;

	restore_knobs(x);
	prepare(x, XW_POLICY_MARKER, 1, 0, 0, &ws);
	memcpy(&hi, ours, 2);
	memcpy(&lo, ours + 2, 4);
	x->skel->data_ifmac->xw_ifmac_hi = hi;
	x->skel->data_ifmac->xw_ifmac_lo = lo;
	for (int i = 0; i < 4; i++) {
		const size_t off = offsetof(struct xw_map_stats, pass_other_host);
		__u64 before = iface_stat(x, off);
		int len = xwt_build(&f, in), act;

		memcpy(in, dst[i], 6);
		act = xwt_run(x, in, len, 0, NULL, NULL);
		if (i == 0)
			CHECK(act == XDP_PASS && iface_stat(x, off) == before + 1,
			      "a frame for another host's MAC: action %d, pass_other_host +%llu", act,
			      (unsigned long long)(iface_stat(x, off) - before));
		else
			CHECK(act != XDP_PASS && iface_stat(x, off) == before,
			      "destination %d (ours/broadcast/multicast): action %d", i, act);
	}
	/* no address: not checked */
	x->skel->data_ifmac->xw_ifmac_hi = 0;
	x->skel->data_ifmac->xw_ifmac_lo = 0;
	{
		int len = xwt_build(&f, in);

		memcpy(in, dst[0], 6);
		CHECK(xwt_run(x, in, len, 0, NULL, NULL) != XDP_PASS,
		      "with no interface address set, another MAC was passed");
	}
	printf("destination MAC: another host's passed to the kernel and counted; ours, "
	       "broadcast, multicast handled; unchecked when the address is unset\n");
}

/* The PROBE turned into its PROBE_REPLY in place: addresses and endpoint
 * ids swapped, type, csum from data, data the endpoint's consumed count
 * (low 32 bits), nothing else changed (both encapsulations); to an
 * endpoint without a socket or not in use, the "gone" answer: flags
 * XW_F_GONE, csum from rsvd2, rsvd2 and data 0. */
static void probe_reply(struct xwt_xdp *x)
{
	static __u8 in[XWT_MAX_FRAME], out[XWT_MAX_FRAME];
	static const __u16 dst[3] = { EP, EP_NOSOCK, EP_OFF };
	static const char *const what[3] = { "open", "no socket", "not in use" };

	for (int k = 0; k < 6; k++) {
		int udp = k & 1, g = k / 2;
		struct xwt_frame f = { .encap = udp ? XWT_ENC_UDP : XWT_ENC_ETH, .type = XW_PKT_PROBE,
				       .dst_ep = dst[g], .src_ep = 7, .session = 0xabcd };
		int len = xwt_build(&f, in), out_len = 0, off = udp ? 14 + 20 + 8 : 14, v;
		struct xw_shared sh;
		struct xw_hdr hi, ho;
		bool hdr_ok;

		memcpy(&hi, in + off, sizeof(hi));
		hi.seq = htonl(0x5eed);
		hi.data = htonl(0xc0ffee);
		hi.rsvd2 = htonl(0xdeadbeef);
		memcpy(in + off, &hi, sizeof(hi));
		if (udp) /* a nonzero UDP checksum: the reply's is 0 */
			in[14 + 20 + 6] = 0x12;
		restore_knobs(x);
		xwt_set_knob(x, "encap", 0, udp ? 2 : 1);
		sh = xwt_get_shared(x, EP);
		sh.consumed = 0x1234567890ULL + udp;
		xwt_set_shared(x, EP, &sh);
		v = xwt_run(x, in, len, 0, &out_len, out);
		CHECK(v == XDP_TX && out_len == len, "probe (%s, %s): verdict %s, length %d of %d",
		      udp ? "udp" : "eth", what[g], xwt_verdict(v), out_len, len);
		if (v != XDP_TX || out_len != len)
			continue;
		memcpy(&ho, out + off, sizeof(ho));
		CHECK(!memcmp(out, in + 6, 6) && !memcmp(out + 6, in, 6),
		      "probe (%s, %s): MAC addresses not swapped", udp ? "udp" : "eth", what[g]);
		if (udp) {
			CHECK(!memcmp(out + 26, in + 30, 4) && !memcmp(out + 30, in + 26, 4),
			      "probe (%s): IPv4 addresses not swapped", what[g]);
			CHECK(!memcmp(out + 34, in + 36, 2) && !memcmp(out + 36, in + 34, 2),
			      "probe (%s): UDP ports not swapped", what[g]);
			CHECK(out[40] == 0 && out[41] == 0, "probe (%s): UDP checksum %02x%02x, want 0",
			      what[g], out[40], out[41]);
			CHECK(!memcmp(out + 14, in + 14, 10) && out[24] == in[24] && out[25] == in[25],
			      "probe (%s): IPv4 header changed beyond the addresses", what[g]);
		}
		hdr_ok = ho.type == XW_PKT_PROBE_REPLY && ho.dst_ep == hi.src_ep &&
			 ho.src_ep == hi.dst_ep && ho.session == hi.session && ho.seq == hi.seq &&
			 ho.version == hi.version && ho.ack == hi.ack &&
			 ho.payload_len == hi.payload_len && ho.match == hi.match;
		if (g == 0)
			hdr_ok = hdr_ok && ho.flags == hi.flags && ho.csum == hi.data &&
				 ho.rsvd2 == hi.rsvd2 && ho.data == htonl(0x34567890 + udp);
		else
			hdr_ok = hdr_ok && ho.flags == XW_F_GONE && ho.csum == hi.rsvd2 &&
				 ho.rsvd2 == 0 && ho.data == 0;
		CHECK(hdr_ok, "probe (%s, %s): reply header (type %u, flags %#x, eps %u/%u, csum %08x, "
		      "data %08x, rsvd2 %08x)", udp ? "udp" : "eth", what[g], ho.type, ho.flags,
		      ntohs(ho.dst_ep), ntohs(ho.src_ep), ntohl(ho.csum), ntohl(ho.data),
		      ntohl(ho.rsvd2));
	}
	restore_knobs(x);
	printf("PROBE: turned into its PROBE_REPLY in place (Ethernet and UDP); to an endpoint "
	       "without a socket or not in use, the \"gone\" answer\n");
}

int main(void)
{
	struct xwt_xdp x;
	int passed = 0, n = (int)(sizeof(table) / sizeof(table[0]));

	xwt_setup(&x, EP);
	xwt_set_endpoint(&x, EP_NOSOCK, XW_EPF_ACTIVE, 0);
	for (int i = 0; i < n; i++)
		passed += run_row(&x, &table[i]);
	printf("fixture table: %d/%d rows as expected\n", passed, n);
	lat_per_type(&x);
	probe_reply(&x);
	one_wake_per_sleep(&x);
	attribution(&x);
	other_host(&x);
	timers(&x);
	watchdog(&x);
	xwt_teardown(&x);
	return xwt_done();
}
