// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The output of xdpwake pingpong / stream: the server's lines and session
 * documents, the client's table (a header, one line per size) or its JSON
 * document.  Every number is computed by the client or the server; this
 * file only formats them.
 */
#include <endian.h>
#include <stdio.h>
#include <unistd.h>

#include "perf.h"
#include "stats.h"

const char *perf_mode_name(int mode)
{
	return mode == MODE_STREAM ? "stream" : "pingpong";
}

const char *perf_strategy_text(int s)
{
	const char *n = xw_wait_strategy_name((unsigned int)s);

	return s == XW_WAIT_DEFAULT || !n ? "spin-block" : n;
}

void perf_print_size(char *buf, size_t len, __u64 v)
{
	if (v && !(v & ((1ULL << 30) - 1)))
		snprintf(buf, len, "%lluG", (unsigned long long)(v >> 30));
	else if (v && !(v & ((1ULL << 20) - 1)))
		snprintf(buf, len, "%lluM", (unsigned long long)(v >> 20));
	else if (v && !(v & ((1ULL << 10) - 1)))
		snprintf(buf, len, "%lluK", (unsigned long long)(v >> 10));
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
}

const char *perf_policy_text(struct perf *p)
{
	__u32 v = POLICY_KEEP;

	if (xw_iface__get_knob(p->ifc, "policy", (__u32)p->o->ep, &v))
		return "?";
	return xw_policy_name(v) ? xw_policy_name(v) : "?";
}

static void perf_json_side(const char *key, const struct side *s, __u64 msgs_delivered)
{
	const __u64 *v = (const __u64 *)s;

	json_key(key);
	json_obj_begin();
	for (int i = 0; i < SIDE_NR; i++)
		json_kv_u64(perf_side_names[i], v[i]);
	json_kv_u64("wakes", perf_side_wakes(s));
	json_kv_double("wakes_per_msg", xwu_ratio((double)perf_side_wakes(s), (double)s->msgs));
	json_kv_double("machine_cpu_us_per_msg",
		       xwu_ratio((double)s->machine_busy_us, (double)msgs_delivered));
	json_kv_double("proc_cpu_us_per_msg",
		       xwu_ratio((double)(s->proc_user_us + s->proc_sys_us),
				 (double)msgs_delivered));
	json_kv_double("machine_busy_pct",
		       100 * xwu_ratio((double)s->machine_busy_us, (double)s->machine_total_us));
	json_obj_end();
}

static void json_pct(const char *key, const struct xwu_summary *x)
{
	json_key(key);
	json_obj_begin();
	json_kv_double("min", x->min);
	json_kv_double("mean", x->mean);
	json_kv_double("p50", x->p50);
	json_kv_double("p90", x->p90);
	json_kv_double("p99", x->p99);
	json_kv_double("max", x->max);
	json_obj_end();
}

void perf_text_header(struct perf *p, unsigned long spin)
{
	printf("xdpwake %s: %s %s -> %s (%s), policy %s, wait %s", perf_mode_name(p->mode),
	       p->ifname, p->me_text, p->peer_text,
	       p->me.encap == XW_ENCAP_UDP ? "udp" : "eth", perf_policy_text(p),
	       perf_strategy_text(p->wait));
	if (spin)
		printf(" (spin %lu us)", spin);
	printf(", think %lu us\n", p->think_us);
	if (p->o->duration_set)
		printf("  %g s per size", p->o->duration);
	else
		printf("  %lu %s per size", p->o->iters,
		       p->mode == MODE_PINGPONG ? "round trips" : "messages");
	if (p->mode == MODE_PINGPONG) {
		printf("; latency = (round trip - think) / 2; msg/s, MB/s, wakes and CPU count "
		       "the messages of both directions\n");
		printf("%8s %9s %8s %8s %8s %8s %8s %10s %9s %18s %24s\n", "", "",
		       "latency", "(us)", "", "", "rtt", "", "", "wakes/msg", "CPU us/msg");
		printf("%8s %9s %8s %8s %8s %8s %8s %10s %9s %6s %5s %5s %8s %7s %7s\n", "size",
		       "iters", "p50", "p90", "p99", "max", "p50", "msg/s", "MB/s", "both", "srv",
		       "cli", "machine", "cli", "srv");
	} else {
		printf("; latency = one batch, first send to its ack; wakes/msg on the receiver "
		       "(server)\n");
		printf("%8s %9s %5s %8s %8s %8s %8s %10s %9s %18s %24s\n", "", "", "",
		       "batch", "latency", "(us)", "", "", "", "wakes/msg", "CPU us/msg");
		printf("%8s %9s %5s %8s %8s %8s %8s %10s %9s %6s %5s %5s %8s %7s %7s\n", "size",
		       "msgs", "batch", "p50", "p90", "p99", "max", "msg/s", "MB/s", "rx", "more",
		       "ack", "machine", "cli", "srv");
	}
	fflush(stdout);
}

void perf_text_line(struct perf *p, const struct size_result *r)
{
	char sz[32];

	perf_print_size(sz, sizeof(sz), r->size);
	if (p->mode == MODE_PINGPONG)
		printf("%8s %9llu %8.2f %8.2f %8.2f %8.2f %8.2f %10.0f %9.2f %6.3f %5.2f %5.2f "
		       "%8.2f %7.2f %7.2f\n",
		       sz, (unsigned long long)r->n, r->lat.p50, r->lat.p90, r->lat.p99, r->lat.max,
		       r->raw.p50, r->msg_rate, r->mbps, r->wakes_per_msg,
		       xwu_ratio((double)perf_side_wakes(&r->srv), (double)r->srv.msgs),
		       xwu_ratio((double)perf_side_wakes(&r->cli), (double)r->cli.msgs),
		       r->machine_cpu, r->proc_cpu, r->srv_proc_cpu);
	else
		printf("%8s %9llu %5lu %8.1f %8.1f %8.1f %8.1f %10.0f %9.2f %6.3f %5.2f %5.2f "
		       "%8.2f %7.2f %7.2f\n",
		       sz, (unsigned long long)r->n, r->batch, r->lat.p50, r->lat.p90, r->lat.p99,
		       r->lat.max, r->msg_rate, r->mbps, r->wakes_per_msg,
		       xwu_ratio((double)r->srv.more_frames, (double)r->srv.frames_redirected),
		       xwu_ratio((double)perf_side_wakes(&r->cli), (double)r->cli.msgs),
		       r->machine_cpu, r->proc_cpu, r->srv_proc_cpu);
	fflush(stdout);
}

void perf_report_listening(struct perf *p)
{
	if (cli_json) {
		json_obj_begin();
		json_kv_str("listening", p->me_text);
		json_kv_str("ifname", p->ifname);
		json_kv_u64("ep", (unsigned long long)p->o->ep);
		json_kv_u64("queue", (unsigned long long)xw_endpoint__queue(p->ep));
		json_kv_str("encap", p->me.encap == XW_ENCAP_UDP ? "udp" : "eth");
		json_obj_end();
	} else {
		printf("listening on %s (%s queue %d, %s); on the client run:\n"
		       "  xdpwake pingpong IFACE --client --peer %s [OPTIONS]\n",
		       p->me_text, p->ifname, xw_endpoint__queue(p->ep),
		       p->me.encap == XW_ENCAP_UDP ? "UDP" : "Ethernet", p->me_text);
	}
	fflush(stdout);
}

void perf_report_session_start(struct perf *p, __u32 nsizes)
{
	printf("client %s: %s, policy %s, wait %s, think %lu us, %u size%s\n", p->peer_text,
	       perf_mode_name(p->mode), perf_policy_text(p), perf_strategy_text(p->wait),
	       p->think_us, nsizes, nsizes == 1 ? "" : "s");
	fflush(stdout);
}

void perf_report_server_size(__u64 size, const struct side *s)
{
	char sz[32];

	perf_print_size(sz, sizeof(sz), size);
	printf("  size %-6s %10llu msgs received, per message: %.3f wakes, CPU "
	       "%.2f us machine, %.2f us this process\n",
	       sz, (unsigned long long)s->msgs,
	       xwu_ratio((double)perf_side_wakes(s), (double)s->msgs),
	       xwu_ratio((double)s->machine_busy_us, (double)s->msgs),
	       xwu_ratio((double)(s->proc_user_us + s->proc_sys_us), (double)s->msgs));
	fflush(stdout);
}

void perf_report_session_json(struct perf *p, int err, const __u64 *sizes,
			      const unsigned long *batches, const struct side *sides, int n)
{
	json_obj_begin();
	json_key("session");
	json_obj_begin();
	json_kv_str("client", p->peer_text);
	json_kv_str("mode", perf_mode_name(p->mode));
	json_kv_str("wait", perf_strategy_text(p->wait));
	json_kv_u64("think_us", p->think_us);
	json_kv_bool("ok", !err);
	if (err)
		json_kv_str("error", p->err);
	json_key("results");
	json_arr_begin();
	for (int i = 0; i < n; i++) {
		json_obj_begin();
		json_kv_u64("size", sizes[i]);
		json_kv_u64("batch", batches[i]);
		perf_json_side("server", &sides[i], sides[i].msgs);
		json_obj_end();
	}
	json_arr_end();
	json_obj_end();
	json_obj_end();
}

void perf_report_client_json(struct perf *p, const struct wire_ready *rd, unsigned long spin,
			     const struct size_result *res, int n)
{
	json_obj_begin();
	json_kv_str("command", perf_mode_name(p->mode));
	json_kv_str("ifname", p->ifname);
	json_kv_u64("ep", (unsigned long long)p->o->ep);
	json_kv_str("address", p->me_text);
	json_kv_str("peer", p->peer_text);
	json_kv_str("encap", p->me.encap == XW_ENCAP_UDP ? "udp" : "eth");
	json_kv_str("policy", perf_policy_text(p));
	json_kv_str("wait", perf_strategy_text(p->wait));
	json_kv_u64("spin_us", spin);
	json_kv_u64("pull_spin", p->pull_spin >= 0 ? (unsigned long long)p->pull_spin
						   : XW_PULL_SPIN_DEFAULT);
	json_kv_u64("think_us", p->think_us);
	if (p->o->duration_set)
		json_kv_double("duration_s", p->o->duration);
	else
		json_kv_u64("iters", p->o->iters);
	json_kv_u64("timeout_ms", (unsigned long long)p->timeout_ms);
	json_kv_u64("ncpus", (unsigned long long)sysconf(_SC_NPROCESSORS_ONLN));
	json_kv_u64("block_cost_ns", xw_block_cost_ns());
	json_kv_u64("server_ncpus", be32toh(rd->ncpus));
	json_kv_u64("server_block_cost_ns", be64toh(rd->block_cost_ns));
	json_key("results");
	json_arr_begin();
	for (int i = 0; i < n; i++) {
		const struct size_result *r = &res[i];

		json_obj_begin();
		json_kv_u64("size", r->size);
		json_kv_u64("iters", r->n);
		json_kv_u64("warmup", r->warmup);
		if (p->mode == MODE_STREAM)
			json_kv_u64("batch", r->batch);
		json_kv_u64("msgs", r->msgs);
		json_kv_double("elapsed_s", r->elapsed_s);
		json_pct("latency_us", &r->lat);
		if (p->mode == MODE_PINGPONG)
			json_pct("rtt_us", &r->raw);
		json_kv_double("msg_rate", r->msg_rate);
		json_kv_double("bandwidth_MBps", r->mbps);
		json_kv_double("wakes_per_msg", r->wakes_per_msg);
		json_kv_double("machine_cpu_us_per_msg", r->machine_cpu);
		json_kv_double("proc_cpu_us_per_msg", r->proc_cpu);
		json_kv_double("server_proc_cpu_us_per_msg", r->srv_proc_cpu);
		perf_json_side("client", &r->cli, r->msgs);
		perf_json_side("server", &r->srv, r->msgs);
		json_obj_end();
	}
	json_arr_end();
	json_obj_end();
}
