// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * What the tests of xwbench share: the endpoint set-up, the rendezvous of
 * the two sides, blocking sends and receives, the busy computation, and
 * the counters of one side with their JSON.
 */
#include <errno.h>
#include <math.h> /* isnan, isinf, NAN: macros, no libm */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xwbench.h"
#include "addrfile.h"
#include "measure.h"
#include "stats.h"
#include "testhook.h"

const char *const mode_names[4] = { "sends", "check", "watchdog", "notify" };

struct xw_endpoint *ep;
struct xw_iface *ifc;
struct xw_addr peer;
struct xw_check chk;
bool chk_on;
__u32 frag_payload;
volatile __u64 sink;

void __attribute__((format(printf, 1, 2), noreturn)) die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "xwbench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

void json_stats(const char *key, double *v, long n)
{
	struct xwu_summary x;

	xwu_summarize(v, (size_t)n, &x);
	json_key(key);
	json_obj_begin();
	json_kv_i64("n", n);
	json_kv_double("min", x.min);
	json_kv_double("mean", x.mean);
	json_kv_double("p50", x.p50);
	json_kv_double("p90", x.p90);
	json_kv_double("p99", x.p99);
	json_kv_double("p999", x.p999);
	json_kv_double("max", x.max);
	json_obj_end();
}

void snap_take(struct snap *s)
{
	memset(s, 0, sizeof(*s));
	s->ws.sz = sizeof(s->ws);
	s->xs.sz = sizeof(s->xs);
	s->es.sz = sizeof(s->es);
	if (ifc)
		xw_iface__stats(ifc, o.ep, &s->xs);
	if (ep) {
		xw_endpoint__wait_stats(ep, &s->ws);
		xw_endpoint__stats(ep, &s->es);
	}
	s->busy_us = xwu_machine_busy_us();
	s->proc_us = xwu_proc_cpu_us();
	s->t = xwu_now_ns();
}

static __u64 xs_wakes(const struct xw_stats *s)
{
	return s->wake_every + s->wake_marker + s->wake_stream + s->wake_frames +
	       s->wake_timeout + s->wake_watchdog;
}

void json_side(const struct snap *a, const struct snap *b)
{
#define D(f) ((double)(b->f - a->f))
	json_kv_double("wall_s", (double)(b->t - a->t) / 1e9);
	json_kv_double("machine_busy_us", D(busy_us));
	json_kv_double("proc_cpu_us", D(proc_us));
	json_key("xdp");
	json_obj_begin();
	json_kv_double("wakes", (double)(xs_wakes(&b->xs) - xs_wakes(&a->xs)));
	json_kv_double("wake_every", D(xs.wake_every));
	json_kv_double("wake_marker", D(xs.wake_marker));
	json_kv_double("wake_stream", D(xs.wake_stream));
	json_kv_double("wake_frames", D(xs.wake_frames));
	json_kv_double("wake_timeout", D(xs.wake_timeout));
	json_kv_double("wake_watchdog", D(xs.wake_watchdog));
	json_kv_double("wake_unarmed", D(xs.wake_unarmed));
	json_kv_double("frames_redirected", D(xs.frames_redirected));
	json_kv_double("lat_frames", D(xs.lat_frames));
	json_kv_double("more_frames", D(xs.more_frames));
	json_kv_double("deferrals", D(xs.deferrals));
	json_kv_double("timer_fires", D(xs.timer_fires));
	json_obj_end();
	json_key("lib");
	json_obj_begin();
	json_kv_double("blocks", D(ws.blocks));
	json_kv_double("wakes", D(ws.wakes));
	json_kv_double("spurious_wakes", D(ws.spurious_wakes));
	json_kv_double("watchdog_runs", D(ws.watchdog_runs));
	json_kv_double("watchdog_frames", D(ws.watchdog_frames));
	json_kv_double("notify_runs", D(ws.notify_runs));
	json_kv_double("tx_frames", D(es.tx_frames));
	json_kv_double("rx_frames", D(es.rx_frames));
	json_kv_double("retransmits", D(es.retransmits));
	json_obj_end();
#undef D
}

void print_config(void)
{
	char role[2] = { o.role ? (char)o.role : 'b', 0 };

	json_kv_str("test", o.test == T_PP ? "pp" : o.test == T_NOTIF ? "notif" : "idle");
	json_kv_str("role", role);
	json_kv_str("iface", o.ifname);
	json_kv_i64("ep", o.ep);
	json_kv_str("policy", o.policy >= 0 ? xw_policy_name((unsigned int)o.policy) : "default");
	json_kv_str("wait", xw_wait_strategy_name((unsigned int)o.wait));
	json_kv_u64("frag_payload", frag_payload);
	json_kv_u64("block_cost_ns", xw_block_cost_ns());
}

__u32 frames_to_bytes(unsigned int v, bool frames)
{
	return frames ? v * frag_payload : v;
}

void ep_open(void)
{
	const char *root = getenv("XDPWAKE_PIN_ROOT");
	struct xw_endpoint *probe = NULL;
	__u64 end = xwu_now_ns() + 5000000000ULL;
	int err;

	/* Byte counts in frames need the frame payload: a probe endpoint on
	 * the same queue (the process's endpoints share the socket). */
	if (o.eager_f || o.btp1_f || o.btp2_f) {
		XW_OPTS(xw_endpoint_opts, po, .pin_root = root);

		while ((err = xw_endpoint__open(o.ifname, (__u16)(o.ep + 1), &po, &probe)) == -EBUSY &&
		       xwu_now_ns() < end)
			usleep(20000);
		if (err)
			die("%s: cannot open a probe endpoint: %s", o.ifname, xw_strerror(err));
		frag_payload = (__u32)xw_endpoint__frag_payload(probe);
	}
	{
		XW_OPTS(xw_endpoint_opts, eo, .pin_root = root, .policy_set = o.policy >= 0,
			.policy = o.policy >= 0 ? (__u32)o.policy : 0,
			.eager_max = frames_to_bytes(o.eager_max, o.eager_f),
			.btp1 = frames_to_bytes(o.btp1, o.btp1_f),
			.btp2 = frames_to_bytes(o.btp2, o.btp2_f), .marks_set = o.marks_set,
			.marks = o.marks, .wait_strategy = (__u32)o.wait,
			.spin_ns = (__u64)o.spin_us * 1000);
		/* The mis-ordering experiment's knob (exp4): a test hook. */
		struct xwi_test_opts to = { .mark_shift = o.mark_shift };

		while ((err = xwi_endpoint_open_test(o.ifname, (__u16)o.ep, &eo, &to, &ep)) ==
			       -EBUSY &&
		       xwu_now_ns() < end)
			usleep(20000);
		if (err)
			die("%s: cannot open endpoint %d: %s", o.ifname, o.ep, xw_strerror(err));
	}
	if (probe)
		xw_endpoint__close(probe);
	frag_payload = (__u32)xw_endpoint__frag_payload(ep);
	ifc = xw_endpoint__iface(ep);
	if (o.check_us) {
		err = xw_check__init(&chk, ep, o.check_us);
		if (err)
			die("xw_check__init: %s", xw_strerror(err));
		chk_on = true;
	}
}

void send_or_die(const void *buf, size_t len, __u64 tag, const char *what)
{
	int err = xw_endpoint__send(ep, &peer, buf, len, tag, o.timeout_ms);

	if (err)
		die("send %s: %s", what, xw_strerror(err));
}

void recv_or_die(void *buf, size_t len, __u64 tag, struct xw_status *st, const char *what)
{
	XW_OPTS(xw_status, s);
	int err = xw_endpoint__recv(ep, buf, len, tag, TAG_ALL, &s, o.timeout_ms);

	if (err)
		die("receive %s: %s", what, xw_strerror(err));
	if (s.error)
		die("receive %s: %s", what, xw_strerror(s.error));
	if (st)
		*st = s;
}

void connect_peer(void)
{
	char text[XW_ADDR_STRLEN];
	struct xw_addr me;
	XW_OPTS(xw_status, st);
	int err;

	if (o.role == 'b') {
		xw_endpoint__addr(ep, &me);
		xw_addr_format(&me, text, sizeof(text));
		err = xwu_addr_file_write(o.addr_file, text);
		if (err)
			die("cannot write %s: %s", o.addr_file, strerror(-err));
		err = xw_endpoint__recv(ep, NULL, 0, TAG_HELLO, TAG_ALL, &st,
					o.connect_timeout * 1000 + 5000);
		if (err)
			die("no HELLO from the peer: %s", xw_strerror(err));
		peer = st.src;
		send_or_die(NULL, 0, TAG_READY, "READY");
		return;
	}
	if (o.peer_file) {
		__u64 end = xwu_now_ns() + (__u64)o.connect_timeout * 1000000000ULL;

		if (xwu_addr_file_wait(o.peer_file, text, sizeof(text), end, NULL))
			die("%s: no address after %d s", o.peer_file, o.connect_timeout);
	} else {
		snprintf(text, sizeof(text), "%s", o.peer);
	}
	if (xw_addr_parse(text, &peer))
		die("bad peer address '%s'", text);
	send_or_die(NULL, 0, TAG_HELLO, "HELLO");
	recv_or_die(NULL, 0, TAG_READY, NULL, "READY");
}

void compute_us(unsigned int us)
{
	__u64 end = xwu_now_ns() + (__u64)us * 1000ULL, acc = sink;

	while (xwu_now_ns() < end) {
		for (int i = 0; i < 32; i++)
			acc = acc * 6364136223846793005ULL + 1442695040888963407ULL;
		if (chk_on)
			xw_check(&chk);
	}
	sink = acc;
}
