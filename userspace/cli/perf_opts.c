// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The options of xdpwake pingpong / stream: parsed into one struct
 * perf_opts (the parse functions of the command table have no other place
 * to put them), checked for the role and the mode, the client's defaults
 * filled in; the rest of the run gets them through struct perf.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

static struct perf_opts po = {
	.timeout_ms = 5000,
	.connect_timeout = 3,
	.ep = 1,
	.wait = XW_WAIT_DEFAULT,
};

struct perf_opts *perf_opts_get(void)
{
	return &po;
}

__attribute__((format(printf, 2, 3))) static int opt_err(struct cli_args *a, const char *fmt,
	      ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->err, sizeof(a->err), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int parse_server(struct cli_args *a, const char *val)
{
	if (po.role == ROLE_CLIENT)
		return opt_err(a, "%s--server and --client exclude each other", "");
	po.role = ROLE_SERVER;
	return 0;
}

static int parse_client(struct cli_args *a, const char *val)
{
	if (po.role == ROLE_SERVER)
		return opt_err(a, "%s--server and --client exclude each other", "");
	po.role = ROLE_CLIENT;
	return 0;
}

static int parse_peer(struct cli_args *a, const char *val)
{
	struct xw_addr t;

	if (xw_addr_parse(val, &t))
		return opt_err(a, "bad address '%s': expected MAC/EP (02:00:00:00:00:0b/1) or "
				  "IPv4:PORT/EP (10.0.0.2:49152/1)", val);
	po.peer = val;
	return 0;
}

static int parse_peer_file(struct cli_args *a, const char *val)
{
	if (!*val)
		return opt_err(a, "%sempty file name", "");
	po.peer_file = val;
	return 0;
}

static int parse_addr_file(struct cli_args *a, const char *val)
{
	if (!*val)
		return opt_err(a, "%sempty file name", "");
	po.addr_file = val;
	return 0;
}

static int parse_perf_ep(struct cli_args *a, const char *val)
{
	unsigned long v;

	if (cli_parse_ulong(val, 0, XW_MAX_ENDPOINTS - 1, &v)) {
		snprintf(a->err, sizeof(a->err), "bad endpoint '%s': expected 0-%d", val,
			 XW_MAX_ENDPOINTS - 1);
		return -EINVAL;
	}
	po.ep = (int)v;
	po.ep_set = true;
	return 0;
}

static int parse_queue(struct cli_args *a, const char *val)
{
	if (!strcmp(val, "any"))
		po.queue = XW_QUEUE_ANY;
	else if (cli_parse_ulong(val, 0, 4095, &po.queue))
		return opt_err(a, "bad queue '%s': expected 0-4095 or any", val);
	po.queue_set = true;
	return 0;
}

static int parse_perf_encap(struct cli_args *a, const char *val)
{
	if (!strcmp(val, "eth"))
		a->encap = XW_ENCAP_ETH;
	else if (!strcmp(val, "udp"))
		a->encap = XW_ENCAP_UDP;
	else
		return opt_err(a, "bad encapsulation '%s': expected eth or udp", val);
	a->encap_set = true;
	return 0;
}

/* "64", "1K", "32k", "1M", "1G" (binary multiples). */
static int parse_size(const char *s, __u64 *out)
{
	unsigned long long v;
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K':
		v <<= 10, end++;
		break;
	case 'm': case 'M':
		v <<= 20, end++;
		break;
	case 'g': case 'G':
		v <<= 30, end++;
		break;
	}
	if (*end == 'i' && end[1] == 'B')
		end += 2;
	else if (*end == 'B')
		end++;
	if (*end)
		return -EINVAL;
	if (v > MAX_MSG_SIZE)
		return -ERANGE;
	*out = v;
	return 0;
}

static int parse_sizes(struct cli_args *a, const char *val)
{
	char buf[1024], *save = NULL, *tok;
	int n = 0;

	if (strlen(val) >= sizeof(buf) || !*val)
		return opt_err(a, "bad size list '%s'", val);
	strcpy(buf, val);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int err;

		if (n == MAX_SIZES) {
			snprintf(a->err, sizeof(a->err), "at most %d sizes", MAX_SIZES);
			return -EINVAL;
		}
		err = parse_size(tok, &po.sizes[n]);
		if (err == -ERANGE) {
			snprintf(a->err, sizeof(a->err), "size '%s' over the maximum of %llu MiB",
				 tok, MAX_MSG_SIZE >> 20);
			return err;
		}
		if (err) {
			snprintf(a->err, sizeof(a->err),
				 "bad size '%s' in '%s': expected a list like 0,64,1K,32K,1M", tok,
				 val);
			return err;
		}
		n++;
	}
	if (!n)
		return opt_err(a, "bad size list '%s'", val);
	po.nsizes = n;
	po.sizes_set = true;
	return 0;
}

#define ULONG_OPT(fn, field, set, min, max, what)                                            \
	static int fn(struct cli_args *a, const char *val)                              \
	{                                                                               \
		if (cli_parse_ulong(val, min, max, &po.field)) {                        \
			snprintf(a->err, sizeof(a->err), "bad %s '%s': expected %lu-%lu", \
				 what, val, (unsigned long)(min), (unsigned long)(max)); \
			return -EINVAL;                                                 \
		}                                                                       \
		po.set = true;                                                          \
		return 0;                                                               \
	}
ULONG_OPT(parse_iters, iters, iters_set, 1, 1000000000, "iteration count")
ULONG_OPT(parse_warmup, warmup, warmup_set, 0, 1000000000, "warm-up count")
ULONG_OPT(parse_batch, batch, batch_set, 1, MAX_BATCH, "batch size")
ULONG_OPT(parse_spin, spin_us, spin_set, 0, 1000000, "spin time")
ULONG_OPT(parse_think, think_us, think_set, 0, 1000000, "think time")
ULONG_OPT(parse_pull_spin, pull_spin, pull_spin_set, 0, XW_PULL_SPIN_MAX, "pull spin")
ULONG_OPT(parse_timeout, timeout_ms, timeout_set, 10, 3600000, "timeout")

static int parse_seconds(struct cli_args *a, const char *val, double min, double max,
			 double *out, bool *set)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(val, &end);
	if (end == val || *end || errno || !isfinite(v) || v < min || v > max) {
		snprintf(a->err, sizeof(a->err), "bad duration '%s': expected seconds from %g to %g",
			 val, min, max);
		return -EINVAL;
	}
	*out = v;
	*set = true;
	return 0;
}

static int parse_duration(struct cli_args *a, const char *val)
{
	return parse_seconds(a, val, 0.001, 3600, &po.duration, &po.duration_set);
}

static int parse_connect_timeout(struct cli_args *a, const char *val)
{
	return parse_seconds(a, val, 0.1, 3600, &po.connect_timeout, &po.connect_set);
}

static int parse_accept_timeout(struct cli_args *a, const char *val)
{
	return parse_seconds(a, val, 0, 86400 * 365.0, &po.accept_timeout, &po.accept_set);
}

static int parse_perf_policy(struct cli_args *a, const char *val)
{
	int p = xw_policy_parse(val);

	if (p < 0)
		return opt_err(a, "bad policy '%s': expected every, timeout, marker, stream or "
				  "adaptive", val);
	a->policy = (__u32)p;
	a->policy_set = true;
	return 0;
}

static int parse_wait(struct cli_args *a, const char *val)
{
	int s = xw_wait_strategy_parse(val);

	if (s <= 0)
		return opt_err(a, "bad wait strategy '%s': expected spin, yield, block, "
				  "spin-yield, spin-block, notify or adaptive", val);
	po.wait = s;
	po.wait_set = true;
	return 0;
}

static int parse_unidir(struct cli_args *a, const char *val)
{
	po.unidir = true;
	return 0;
}

static int parse_once(struct cli_args *a, const char *val)
{
	po.once = true;
	return 0;
}


const struct cli_opt perf_cli_opts[] = {
	{ "server", 's', NULL, "wait for clients and follow their configuration",
	  parse_server },
	{ "client", 'c', NULL, "run the test against a server (needs --peer or --peer-file)",
	  parse_client },
	{ "peer", 'p', "ADDR", "the server's address as it prints it: MAC/EP, or "
	  "IPv4:PORT/EP with --encap udp", parse_peer },
	{ "peer-file", 0x120, "FILE", "read the server's address from FILE (waits up to "
	  "--connect-timeout for it to appear)", parse_peer_file },
	{ "addr-file", 0x121, "FILE", "server: write the address to FILE once listening",
	  parse_addr_file },
	{ "ep", 'e', "N", "endpoint id 0-1023 (default 1)", parse_perf_ep },
	{ "queue", 'q', "N|any", "interface queue to bind (default 0; any: the first "
	  "free one)", parse_queue },
	{ "encap", 0x122, "eth|udp", "encapsulation (default eth; udp needs IPv4 "
	  "addresses)", parse_perf_encap },
	{ "sizes", 'S', "LIST", "message sizes, e.g. 0,64,1K,32K,1M (K, M, G: binary; "
	  "pingpong default 0,64,1K,4K,32K, stream 128)", parse_sizes },
	{ "iters", 'n', "N", "measured iterations per size (default 1000; stream: "
	  "messages, default 10000)", parse_iters },
	{ "warmup", 'w', "N", "warm-up iterations per size (default iters/10, at most "
	  "1000)", parse_warmup },
	{ "duration", 'd', "SECONDS", "run each size this long instead of --iters",
	  parse_duration },
	{ "policy", 'P', "NAME", "wake policy of both endpoints: every, timeout, marker, "
	  "stream, adaptive (default: leave the endpoints' policy as it is)",
	  parse_perf_policy },
	{ "wait", 'W', "STRATEGY", "how both sides wait: spin, yield, block, spin-yield, "
	  "spin-block (default), notify, adaptive", parse_wait },
	{ "spin", 0x123, "USECS", "spin time of the spin-* strategies (default: the "
	  "measured block-and-wake cost)", parse_spin },
	{ "pull-spin", 0x126, "N", "while a large message is pulled, spin-block and adaptive "
	  "poll on until N times the block-and-wake cost after the last frame (default 8, "
	  "0: off)", parse_pull_spin },
	{ "think", 't', "USECS", "computation on the receiving side before it answers "
	  "(pingpong) or after each message (stream)", parse_think },
	{ "batch", 'b', "N", "stream: messages per acknowledged batch (default 32; "
	  "fewer for large messages so a batch fits the receive ring)", parse_batch },
	{ "unidir", 'u', NULL, "unidirectional: the stream test (the receiver only "
	  "acknowledges each batch)", parse_unidir },
	{ "timeout", 'T', "MS", "deadline of every wait for the peer (default 5000)",
	  parse_timeout },
	{ "connect-timeout", 0x124, "SECONDS", "client: give up when the server has not "
	  "answered after this long (default 3)", parse_connect_timeout },
	{ "accept-timeout", 0x125, "SECONDS", "server: exit with status 1 when no client "
	  "came for this long (default: wait until Ctrl-C)", parse_accept_timeout },
	{ "once", 'o', NULL, "server: exit after one client (status 1 if it failed)",
	  parse_once },
	CLI_OPT_PIN_ROOT,
	{ NULL },
};

int perf_opts_finish(const struct cli_args *a, enum perf_mode mode)
{
	const char *client_only = NULL;

	if (po.role == ROLE_NONE)
		return cli_usage("say --server (wait for a client) or --client --peer ADDR");
	if (po.role == ROLE_SERVER) {
		client_only = po.peer ? "--peer" : po.peer_file ? "--peer-file"
			: po.sizes_set ? "--sizes" : po.iters_set ? "--iters"
			: po.warmup_set ? "--warmup" : po.duration_set ? "--duration"
			: po.batch_set ? "--batch" : a->policy_set ? "--policy"
			: po.wait_set ? "--wait" : po.spin_set ? "--spin"
			: po.pull_spin_set ? "--pull-spin"
			: po.think_set ? "--think" : po.unidir ? "--unidir"
			: po.timeout_set ? "--timeout" : po.connect_set ? "--connect-timeout" : NULL;
		if (client_only)
			return cli_usage("%s is a client option: the server follows the client's "
					 "configuration", client_only);
	} else {
		if (po.addr_file || po.once || po.accept_set)
			return cli_usage("%s is a server option", po.addr_file ? "--addr-file"
						   : po.once ? "--once" : "--accept-timeout");
		if (!po.peer == !po.peer_file)
			return cli_usage(po.peer ? "--peer and --peer-file exclude each other"
						 : "the client needs --peer ADDR or --peer-file FILE");
		if (po.iters_set && po.duration_set)
			return cli_usage("--iters and --duration exclude each other");
		if (!po.sizes_set) {
			static const __u64 pp[] = { 0, 64, 1024, 4096, 32768 };

			if (mode == MODE_STREAM) {
				po.sizes[0] = 128;
				po.nsizes = 1;
			} else {
				memcpy(po.sizes, pp, sizeof(pp));
				po.nsizes = (int)(sizeof(pp) / sizeof(pp[0]));
			}
		}
		if (!po.iters_set)
			po.iters = mode == MODE_STREAM ? 10000 : 1000;
	}
	return 0;
}
