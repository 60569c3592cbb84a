// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * xwbench - the benchmark driver for the experiments of issue 7 that the
 * `xdpwake pingpong/stream` tool cannot run (bench/run.sh starts it).
 *
 *   xwbench pp    --role a|b IFACE [options]   ping-pong with framing, mark
 *                                              and compute options
 *   xwbench notif --role a|b IFACE [options]   notification delay of a
 *                                              compute-bound receiver
 *   xwbench idle  IFACE [options]              CPU of a receiver waiting
 *                                              with no traffic
 *
 * Two processes, one per side (e.g. in two network namespaces joined by a
 * veth pair, or on two hosts): role b opens its endpoint, writes its address
 * to --addr-file and waits for a HELLO; role a reads the address from
 * --peer-file (waiting up to --connect-timeout), says HELLO and runs the
 * test.  Both sides must get the same test options.  Each side prints one
 * JSON object on stdout when done (role a: the timings; both: the XDP
 * program's counters of its endpoint, library wait statistics, process and
 * whole-machine CPU).
 *
 * One file per test: pp.c, notif.c, idle.c; what they share (endpoint
 * set-up, the rendezvous, counters and their JSON) is in common.c, the
 * options and main() here.
 *
 * Every run is bounded by --limit seconds (SIGALRM ends it with status 1).
 * Exit: 0 ok, 1 runtime error, 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xwbench.h"

struct xwb_opts o = {
	.ep = 2, .limit = 300, .connect_timeout = 10, .timeout_ms = 10000, .policy = -1,
	.wait = XW_WAIT_DEFAULT, .iters = 1000, .warmup = -1, .size = 64, .check_us = 10,
	.msgs = 2000, .gap_us = 500, .chunk_min_us = 20, .chunk_max_us = 20000,
	.watchdog_us = 50, .mode = M_SENDS, .seed = 1, .seconds = 5,
};

static void __attribute__((format(printf, 1, 2), noreturn)) usage_err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "xwbench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (xwbench --help)\n");
	exit(2);
}

static void on_alarm(int sig)
{
	static const char msg[] = "xwbench: time limit reached, giving up\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0) {
		/* nothing more to do */
	}
	_exit(1);
}

/* ---- option parsing --------------------------------------------------------- */

static unsigned long parse_size(const char *s, bool *frames)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s)
		usage_err("bad size '%s'", s);
	if (frames)
		*frames = false;
	switch (*end) {
	case 'K': case 'k': v <<= 10; end++; break;
	case 'M': case 'm': v <<= 20; end++; break;
	case 'f':
		if (!frames)
			usage_err("'%s': frames only for --eager-max/--btp1/--btp2", s);
		*frames = true;
		end++;
		break;
	default: break;
	}
	if (*end)
		usage_err("bad size '%s'", s);
	return v;
}

static long parse_long(const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s || *end || v < min || v > max)
		usage_err("bad number '%s' (%ld..%ld)", s, min, max);
	return v;
}

static unsigned int parse_marks(const char *s)
{
	static const struct { const char *name; unsigned int bit; } kinds[] = {
		{ "small", XW_MARK_SMALL }, { "medium", XW_MARK_MEDIUM },
		{ "rndv", XW_MARK_RNDV }, { "pull", XW_MARK_PULL },
		{ "pull_reply", XW_MARK_PULL_REPLY }, { "notify", XW_MARK_NOTIFY },
	};
	char buf[256], *tok, *save = NULL;
	unsigned int m = XW_MARK_ALL;

	if (!strcmp(s, "all"))
		return XW_MARK_ALL;
	if (!strcmp(s, "none"))
		return 0;
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t i;

		if (*tok != '-')
			usage_err("--marks: all, none or a list of -KIND ('%s')", tok);
		for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
			if (!strcmp(tok + 1, kinds[i].name))
				break;
		if (i == sizeof(kinds) / sizeof(kinds[0]))
			usage_err("--marks: unknown kind '%s'", tok + 1);
		m &= ~kinds[i].bit;
	}
	return m;
}

static void usage(void)
{
	printf("Usage: xwbench pp|notif --role a|b IFACE [options]\n"
	       "       xwbench idle IFACE [--seconds S] [--wait STRATEGY]\n\n"
	       "Common: --ep N (2) --addr-file F (b) --peer-file F | --peer ADDR (a)\n"
	       "        --policy NAME --wait STRATEGY --spin USECS --limit SECONDS (300)\n"
	       "        --connect-timeout SECONDS (10) --timeout MS (10000, every wait)\n"
	       "pp:     --size N --reply N (default: size) --iters N (1000) --warmup N\n"
	       "        --x-us U --y-us U --barrier --check-us U (10; 0: no xw_check)\n"
	       "        --eager-max N --btp1 N --btp2 N (bytes, or Nf frames)\n"
	       "        --marks all|none|-rndv,-pull,-pull_reply,-notify,... --mark-shift K\n"
	       "notif:  --msgs N (2000) --size N (64) --gap-us U (500, mean) --seed S\n"
	       "        --mode sends|check|watchdog|notify --check-us U --watchdog-us U (50)\n"
	       "        --watchdog-rt PRIO (0; the watchdog thread's SCHED_FIFO priority)\n"
	       "        --chunk-min-us U (20) --chunk-max-us U (20000) --samples FILE\n"
	       "idle:   --seconds S (5) --wait STRATEGY\n"
	       "Sizes: decimal or 0x, K/M suffixes.  See the comments at the top of\n"
	       "bench/xwbench/*.c for what each test measures.\n");
}

enum {
	OPT_ROLE = 256, OPT_ADDR_FILE, OPT_PEER_FILE, OPT_PEER, OPT_EP, OPT_LIMIT, OPT_CONNECT,
	OPT_TIMEOUT, OPT_POLICY, OPT_WAIT, OPT_SPIN, OPT_ITERS, OPT_WARMUP, OPT_SIZE, OPT_REPLY,
	OPT_X, OPT_Y, OPT_BARRIER, OPT_CHECK, OPT_EAGER, OPT_BTP1, OPT_BTP2, OPT_MARKS,
	OPT_SHIFT, OPT_MSGS, OPT_GAP, OPT_CMIN, OPT_CMAX, OPT_WD, OPT_WDRT, OPT_MODE, OPT_SEED,
	OPT_SAMPLES, OPT_SECONDS, OPT_HELP,
};

static void parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "role", 1, 0, OPT_ROLE }, { "addr-file", 1, 0, OPT_ADDR_FILE },
		{ "peer-file", 1, 0, OPT_PEER_FILE }, { "peer", 1, 0, OPT_PEER },
		{ "ep", 1, 0, OPT_EP }, { "limit", 1, 0, OPT_LIMIT },
		{ "connect-timeout", 1, 0, OPT_CONNECT }, { "timeout", 1, 0, OPT_TIMEOUT },
		{ "policy", 1, 0, OPT_POLICY }, { "wait", 1, 0, OPT_WAIT },
		{ "spin", 1, 0, OPT_SPIN }, { "iters", 1, 0, OPT_ITERS },
		{ "warmup", 1, 0, OPT_WARMUP }, { "size", 1, 0, OPT_SIZE },
		{ "reply", 1, 0, OPT_REPLY }, { "x-us", 1, 0, OPT_X }, { "y-us", 1, 0, OPT_Y },
		{ "barrier", 0, 0, OPT_BARRIER }, { "check-us", 1, 0, OPT_CHECK },
		{ "eager-max", 1, 0, OPT_EAGER }, { "btp1", 1, 0, OPT_BTP1 },
		{ "btp2", 1, 0, OPT_BTP2 }, { "marks", 1, 0, OPT_MARKS },
		{ "mark-shift", 1, 0, OPT_SHIFT }, { "msgs", 1, 0, OPT_MSGS },
		{ "gap-us", 1, 0, OPT_GAP }, { "chunk-min-us", 1, 0, OPT_CMIN },
		{ "chunk-max-us", 1, 0, OPT_CMAX }, { "watchdog-us", 1, 0, OPT_WD },
		{ "watchdog-rt", 1, 0, OPT_WDRT },
		{ "mode", 1, 0, OPT_MODE }, { "seed", 1, 0, OPT_SEED },
		{ "samples", 1, 0, OPT_SAMPLES }, { "seconds", 1, 0, OPT_SECONDS },
		{ "help", 0, 0, OPT_HELP }, { 0, 0, 0, 0 },
	};
	int c;

	if (argc < 2)
		usage_err("a test name is needed: pp, notif or idle");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage();
		exit(0);
	}
	if (!strcmp(argv[1], "pp"))
		o.test = T_PP;
	else if (!strcmp(argv[1], "notif"))
		o.test = T_NOTIF;
	else if (!strcmp(argv[1], "idle"))
		o.test = T_IDLE;
	else
		usage_err("unknown test '%s'", argv[1]);
	optind = 2;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case OPT_ROLE:
			if (strcmp(optarg, "a") && strcmp(optarg, "b"))
				usage_err("--role a or b");
			o.role = optarg[0];
			break;
		case OPT_ADDR_FILE: o.addr_file = optarg; break;
		case OPT_PEER_FILE: o.peer_file = optarg; break;
		case OPT_PEER: o.peer = optarg; break;
		case OPT_EP: o.ep = (int)parse_long(optarg, 0, XW_MAX_ENDPOINTS - 1); break;
		case OPT_LIMIT: o.limit = (int)parse_long(optarg, 1, 86400); break;
		case OPT_CONNECT: o.connect_timeout = (int)parse_long(optarg, 1, 3600); break;
		case OPT_TIMEOUT: o.timeout_ms = (int)parse_long(optarg, 1, 3600000); break;
		case OPT_POLICY:
			o.policy = xw_policy_parse(optarg);
			if (o.policy < 0)
				usage_err("unknown policy '%s'", optarg);
			break;
		case OPT_WAIT:
			o.wait = xw_wait_strategy_parse(optarg);
			if (o.wait < 0)
				usage_err("unknown wait strategy '%s'", optarg);
			break;
		case OPT_SPIN: o.spin_us = (unsigned int)parse_long(optarg, 0, 10000000); break;
		case OPT_ITERS: o.iters = parse_long(optarg, 1, 100000000); break;
		case OPT_WARMUP: o.warmup = parse_long(optarg, 0, 100000000); break;
		case OPT_SIZE: o.size = parse_size(optarg, NULL); break;
		case OPT_REPLY:
			o.reply = parse_size(optarg, NULL);
			o.reply_set = true;
			break;
		case OPT_X: o.x_us = (unsigned int)parse_long(optarg, 0, 10000000); break;
		case OPT_Y: o.y_us = (unsigned int)parse_long(optarg, 0, 10000000); break;
		case OPT_BARRIER: o.barrier = true; break;
		case OPT_CHECK: o.check_us = (unsigned int)parse_long(optarg, 0, 10000000); break;
		case OPT_EAGER: o.eager_max = (unsigned int)parse_size(optarg, &o.eager_f); break;
		case OPT_BTP1: o.btp1 = (unsigned int)parse_size(optarg, &o.btp1_f); break;
		case OPT_BTP2: o.btp2 = (unsigned int)parse_size(optarg, &o.btp2_f); break;
		case OPT_MARKS:
			o.marks_text = optarg;
			o.marks = parse_marks(optarg);
			o.marks_set = true;
			break;
		case OPT_SHIFT: o.mark_shift = (unsigned int)parse_long(optarg, 0, 1000); break;
		case OPT_MSGS: o.msgs = parse_long(optarg, 1, 10000000); break;
		case OPT_GAP: o.gap_us = (unsigned int)parse_long(optarg, 1, 10000000); break;
		case OPT_CMIN: o.chunk_min_us = (unsigned int)parse_long(optarg, 1, 10000000); break;
		case OPT_CMAX: o.chunk_max_us = (unsigned int)parse_long(optarg, 1, 100000000); break;
		case OPT_WD: o.watchdog_us = (unsigned int)parse_long(optarg, 1, 10000000); break;
		case OPT_WDRT: o.watchdog_rt = (unsigned int)parse_long(optarg, 0, 99); break;
		case OPT_MODE: {
			size_t i;

			for (i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
				if (!strcmp(optarg, mode_names[i]))
					break;
			if (i == sizeof(mode_names) / sizeof(mode_names[0]))
				usage_err("--mode sends, check, watchdog or notify");
			o.mode = (enum mode)i;
			break;
		}
		case OPT_SEED: o.seed = (unsigned long)parse_long(optarg, 0, LONG_MAX); break;
		case OPT_SAMPLES: o.samples = optarg; break;
		case OPT_SECONDS:
			o.seconds = strtod(optarg, NULL);
			if (!(o.seconds > 0 && o.seconds < 86400))
				usage_err("bad --seconds '%s'", optarg);
			break;
		case OPT_HELP:
		case 'h':
			usage();
			exit(0);
		default:
			usage_err("bad option");
		}
	}
	if (optind != argc - 1)
		usage_err("one interface name is needed");
	o.ifname = argv[optind];
	if (o.test != T_IDLE) {
		if (!o.role)
			usage_err("--role a or b is needed");
		if (o.role == 'b' && !o.addr_file)
			usage_err("role b needs --addr-file");
		if (o.role == 'a' && !o.peer_file == !o.peer)
			usage_err("role a needs --peer-file or --peer");
	}
	if (!o.reply_set)
		o.reply = o.size;
	if (o.warmup < 0)
		o.warmup = o.iters / 10 < 100 ? o.iters / 10 : 100;
	if (o.x_us || o.y_us)
		o.barrier = true;
	if (o.chunk_max_us < o.chunk_min_us)
		usage_err("--chunk-max-us below --chunk-min-us");
	if (o.test == T_NOTIF && o.size < 16)
		o.size = 16;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_alarm };

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_args(argc, argv);
	sigaction(SIGALRM, &sa, NULL);
	alarm((unsigned int)o.limit + 30);
	ep_open();
	switch (o.test) {
	case T_PP:
		run_pp();
		break;
	case T_NOTIF:
		if (o.role == 'a')
			notif_sender();
		else
			notif_receiver();
		break;
	case T_IDLE:
		run_idle();
		break;
	}
	xw_endpoint__close(ep);
	return 0;
}
