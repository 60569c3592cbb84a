// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * xdpwake pingpong / stream: message-passing measurements between two
 * xdpwake endpoints, in the spirit of Open-MX's omx_perf.  This file holds
 * the two commands (their help and their start); the parts are listed in
 * perf.h, the protocol between client and server is described in
 * perf_proto.c.
 */
#include <string.h>

#include "perf.h"

static int run_perf(struct cli_args *a, enum perf_mode mode)
{
	struct perf_opts *o = perf_opts_get();
	struct perf p;
	int rc;

	memset(&p, 0, sizeof(p));
	p.a = a;
	p.o = o;
	p.ifname = a->pos[0];
	p.mode = o->unidir ? MODE_STREAM : mode;
	if (cli_check_ifname(p.ifname))
		return EXIT_USAGE;
	rc = perf_opts_finish(a, p.mode);
	if (rc)
		return rc;
	if (cli_require_iface(p.ifname))
		return EXIT_RUNTIME;
	p.policy = a->policy_set ? a->policy : POLICY_KEEP;
	p.wait = o->wait;
	p.spin_us = o->spin_us;
	p.pull_spin = o->pull_spin_set ? (long)o->pull_spin : -1;
	p.think_us = o->think_us;
	p.timeout_ms = (int)o->timeout_ms;
	return o->role == ROLE_SERVER ? perf_run_server(&p) : perf_run_client(&p);
}

static int run_pingpong(struct cli_args *a)
{
	return run_perf(a, MODE_PINGPONG);
}

static int run_stream(struct cli_args *a)
{
	return run_perf(a, MODE_STREAM);
}

#define PERF_DESC_COMMON                                                               \
	"One side runs --server on its interface: it opens endpoint --ep (1 by default), "  \
	"prints its address (e.g. \"listening on 02:00:00:00:00:0b/1\"; --addr-file "     \
	"writes it to a file) and serves clients one after the other until Ctrl-C (or "  \
	"--once). The other side runs --client --peer ADDR (or --peer-file FILE) with the " \
	"test's options: it sends the configuration first and the server obeys it (mode, " \
	"--policy, --wait, --spin, --think, --timeout), so the server needs no test "     \
	"options, and a server started as `pingpong --server` serves stream clients too. " \
	"Both sides use the same policy and wait strategy. Each size runs --warmup "       \
	"messages (default a tenth of --iters, at most 1000), one more to synchronise, "   \
	"then --iters (or --duration seconds) measured.\n\n"                               \
	"Wakes per message come from the XDP program's counters of each endpoint (wakes "   \
	"of every reason sent to the process, over the measured window); the server "     \
	"sends its numbers to the client at the end of each size, so the client prints "  \
	"both sides. CPU per message: \"machine\" is the busy time of all CPUs from "     \
	"/proc/stat (user, nice, system, irq, softirq, steal; softirq and the other side "   \
	"count when they run on this machine), \"cli\"/\"srv\" each process's own "       \
	"getrusage user+sys time, all divided by the messages delivered. Every wait has "  \
	"a deadline (--timeout): a lost peer is an error, not a hang; a client whose "     \
	"server does not answer gives up after --connect-timeout seconds.\n\n"           \
	"JSON (-j): the client prints one object: the configuration and \"results\", one " \
	"entry per size with \"iters\", \"msgs\", \"latency_us\" {min, mean, p50, p90, p99, " \
	"max}, \"msg_rate\", \"bandwidth_MBps\", \"wakes_per_msg\", "                      \
	"\"machine_cpu_us_per_msg\", \"proc_cpu_us_per_msg\", and \"client\"/\"server\" "  \
	"objects with every counter delta. The server prints {\"listening\": ADDR} and "   \
	"one {\"session\": ...} object per client."

const struct cli_cmd cli_cmd_pingpong = {
	.name = "pingpong",
	.args = "IFACE",
	.min_pos = 1,
	.max_pos = 1,
	.summary = "message latency: ping-pong between two endpoints",
	.desc = "Ping-pong: the client sends a message of each size, the server answers with "
		"one of the same size (after --think microseconds of computation); per size: "
		"latency (half the round trip, minus the think time) p50/p90/p99/max and the "
		"round trip, message rate and bandwidth (both directions), wakes per message "
		"and CPU per message. --unidir runs the stream test instead.\n\n"
		PERF_DESC_COMMON,
	.opts = perf_cli_opts,
	.run = run_pingpong,
};

const struct cli_cmd cli_cmd_stream = {
	.name = "stream",
	.args = "IFACE",
	.min_pos = 1,
	.max_pos = 1,
	.summary = "message rate: a unidirectional stream of messages",
	.desc = "Stream: the client sends messages of each size in batches of --batch; the "
		"server (the receiver) acknowledges each batch with a 0-byte message and the "
		"next batch starts once the ack is in. Per size: message rate and bandwidth, "
		"batch latency (first send to ack) p50/p90/p99/max, wakes per message on the "
		"receiver (\"rx\"; \"more\" is the share of frames that carried the sender's "
		"MORE hint, \"ack\" the sender's wakes per message) and CPU per message. "
		"Every message of a batch but the last is sent with XW_SEND_MORE (more "
		"follows at once), so stream and marker receivers may wake once per "
		"batch.\n\n"
		PERF_DESC_COMMON,
	.opts = perf_cli_opts,
	.run = run_stream,
};
