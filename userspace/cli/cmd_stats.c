// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * xdpwake stats: the program's counters summed over CPUs, once, or as rates
 * per second every interval (--watch, like xdp-bench) until --count
 * intervals have passed or Ctrl-C.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static int parse_watch(struct cli_args *a, const char *val)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(val, &end);
	if (end == val || *end || errno || !isfinite(v) || v < 0.01 || v > 86400) {
		snprintf(a->err, sizeof(a->err),
			 "bad interval '%s': expected seconds from 0.01 to 86400", val);
		return -EINVAL;
	}
	a->watch = v;
	return 0;
}

static int parse_count(struct cli_args *a, const char *val)
{
	unsigned long v;

	if (cli_parse_ulong(val, 1, 1000000000, &v)) {
		snprintf(a->err, sizeof(a->err), "bad count '%s': expected 1 to 1000000000",
			 val);
		return -EINVAL;
	}
	a->count = (long)v;
	return 0;
}

/* Wakes actually sent to a process, of every reason. */
static __u64 wakes_sent(const struct xw_stats *s)
{
	return s->wake_every + s->wake_marker + s->wake_stream + s->wake_frames +
	       s->wake_timeout + s->wake_watchdog;
}

static double per_frame(__u64 wakes, __u64 frames)
{
	return frames ? (double)wakes / (double)frames : NAN;
}

static void ep_text(int ep, char *buf, size_t len)
{
	if (ep == CLI_EP_ALL)
		snprintf(buf, len, "all endpoints");
	else if (ep == CLI_EP_IFACE)
		snprintf(buf, len, "frames not attributed to an endpoint");
	else
		snprintf(buf, len, "endpoint %d", ep);
}

static void json_counters(const struct xw_stats *s)
{
	for (int i = 0; i < xw_stat_count(); i++)
		json_kv_u64(xw_stat_name(i), xw_stat_value(s, i));
	json_kv_double("wakes_per_redirected_frame",
		       per_frame(wakes_sent(s), s->frames_redirected));
}

static void print_counters(const char *ifname, int ep, const struct xw_stats *s)
{
	char what[64];
	double wpf = per_frame(wakes_sent(s), s->frames_redirected);

	ep_text(ep, what, sizeof(what));
	printf("%s, %s:\n", ifname, what);
	for (int i = 0; i < xw_stat_count(); i++)
		printf("  %-20s %16llu  %s\n", xw_stat_name(i),
		       (unsigned long long)xw_stat_value(s, i), xw_stat_help(i));
	printf("  %-20s %16llu  %s\n", "(wakes sent)", (unsigned long long)wakes_sent(s),
	       "sum of the wake_* counters above that were sent");
	if (isnan(wpf))
		printf("  wakes per redirected frame: - (no frames redirected)\n");
	else
		printf("  wakes per redirected frame: %.4f\n", wpf);
}

static __u64 delta(__u64 cur, __u64 prev)
{
	/* Counters restart from 0 when the program is attached again. */
	return cur >= prev ? cur - prev : cur;
}

static void print_rates(const char *ifname, int ep, const struct xw_stats *cur,
			const struct xw_stats *prev, double period)
{
	XW_OPTS(xw_stats, d);
	char what[64], when[32];
	time_t now = time(NULL);
	struct tm tm;
	bool any = false;

#define DELTA(name, desc) d.name = delta(cur->name, prev->name);
	XW_STATS(DELTA)
#undef DELTA
	if (cli_json) {
		json_obj_begin();
		json_kv_str("ifname", ifname);
		json_kv_i64("ep", ep);
		json_kv_double("period", period);
		json_key("rates");
		json_obj_begin();
		for (int i = 0; i < xw_stat_count(); i++)
			json_kv_double(xw_stat_name(i), xw_stat_value(&d, i) / period);
		json_obj_end();
		json_key("counters");
		json_obj_begin();
		json_counters(cur);
		json_obj_end();
		json_kv_double("wakes_per_redirected_frame",
			       per_frame(wakes_sent(&d), d.frames_redirected));
		json_obj_end();
		return;
	}
	localtime_r(&now, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	ep_text(ep, what, sizeof(what));
	printf("%s %s, %s (period %.3f s)\n", when, ifname, what, period);
	for (int i = 0; i < xw_stat_count(); i++) {
		__u64 v = xw_stat_value(&d, i);

		if (!v)
			continue;
		any = true;
		printf("  %-20s %14.1f/s %14llu\n", xw_stat_name(i), v / period,
		       (unsigned long long)v);
	}
	if (!any)
		printf("  (no activity)\n");
	else if (d.frames_redirected)
		printf("  %-20s %16.4f\n", "wakes/redirected",
		       per_frame(wakes_sent(&d), d.frames_redirected));
	fflush(stdout);
}

static void on_signal(int sig)
{
	cli_stop = 1;
}

/* Sleep until the monotonic time @t (seconds); false if interrupted by a
 * stop request. */
static bool sleep_until(double t)
{
	struct timespec ts = { .tv_sec = (time_t)t,
			       .tv_nsec = (long)((t - (double)(time_t)t) * 1e9) };

	while (!cli_stop) {
		int r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);

		if (!r)
			return true;
		if (r != EINTR)
			return false;
	}
	return false;
}

struct stat_iface {
	struct xw_iface *ifc;
	struct xw_stats prev, cur;
};

static int read_stats(struct stat_iface *si, int ep, struct xw_stats *out)
{
	int err;

	out->sz = sizeof(*out);
	err = xw_iface__stats(si->ifc, ep == CLI_EP_ALL ? XW_STATS_ALL : (__u16)ep, out);

	if (err)
		return cli_fail(EXIT_RUNTIME, err, "%s: cannot read statistics: %s",
				xw_iface__name(si->ifc), xw_strerror(err));
	return EXIT_OK;
}

static int watch(struct stat_iface *si, int n, const struct cli_args *a)
{
	struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART */
	double t_prev, t_next, t;
	int rc;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	for (int i = 0; i < n; i++) {
		rc = read_stats(&si[i], a->ep, &si[i].prev);
		if (rc)
			return rc;
	}
	t_prev = cli_now();
	t_next = t_prev + a->watch;
	if (!cli_json) {
		printf("Every %.3g s%s; Ctrl-C to stop.\n", a->watch,
		       a->count ? "" : ", until interrupted");
		fflush(stdout);
	}
	for (long k = 0; !a->count || k < a->count; k++) {
		if (!sleep_until(t_next))
			break;
		t = cli_now();
		for (int i = 0; i < n; i++) {
			rc = read_stats(&si[i], a->ep, &si[i].cur);
			if (rc)
				return rc;
			print_rates(xw_iface__name(si[i].ifc), a->ep, &si[i].cur, &si[i].prev,
				    t - t_prev);
			si[i].prev = si[i].cur;
		}
		t_prev = t;
		t_next += a->watch;
		if (t_next < t) /* fell behind (suspend, slow terminal) */
			t_next = t + a->watch;
	}
	return EXIT_OK;
}

static int run_stats(struct cli_args *a)
{
	struct stat_iface *si = NULL;
	char **names = NULL;
	int n = 0, nsi = 0, rc = EXIT_OK;

	if (a->count && a->watch <= 0)
		return cli_usage("--count needs --watch");
	if (a->npos) {
		rc = cli_check_ifname(a->pos[0]);
		if (!rc)
			rc = cli_require_iface(a->pos[0]);
		if (rc)
			return rc;
		si = calloc(1, sizeof(*si));
		if (!si)
			return cli_fail(EXIT_RUNTIME, -ENOMEM, "%s", xw_strerror(-ENOMEM));
		rc = cli_open_attached(a, a->pos[0], &si[0].ifc);
		if (rc)
			goto out;
		nsi = 1;
	} else {
		n = cli_list_pinned(a->pin_root, &names);
		if (n < 0)
			return cli_fail(EXIT_RUNTIME, n, "cannot list %s: %s", a->pin_root,
					xw_strerror(n));
		si = calloc(n ? n : 1, sizeof(*si));
		if (!si) {
			rc = cli_fail(EXIT_RUNTIME, -ENOMEM, "%s", xw_strerror(-ENOMEM));
			goto out;
		}
		for (int i = 0; i < n; i++) {
			XW_OPTS(xw_iface_opts, o, .pin_root = a->pin_root, .no_attach = true);
			int err = xw_iface__open(names[i], &o, &si[nsi].ifc);

			if (err == -ENOENT || err == -ENODEV)
				continue; /* stale directory: see `xdpwake status` */
			if (err) {
				rc = cli_fail(EXIT_RUNTIME, err, "%s: cannot open: %s", names[i],
					      xw_strerror(err));
				goto out;
			}
			nsi++;
		}
		if (!nsi) {
			rc = cli_fail(EXIT_NOTFOUND, -ENOENT,
				      "no xdpwake program attached under %s", a->pin_root);
			goto out;
		}
	}

	if (a->watch > 0) {
		rc = watch(si, nsi, a);
		goto out;
	}
	for (int i = 0; i < nsi; i++) {
		rc = read_stats(&si[i], a->ep, &si[i].cur);
		if (rc)
			goto out;
	}
	if (cli_json) {
		json_obj_begin();
		for (int i = 0; i < nsi; i++) {
			if (!a->npos) {
				json_key(xw_iface__name(si[i].ifc));
				json_obj_begin();
			}
			json_counters(&si[i].cur);
			if (!a->npos)
				json_obj_end();
		}
		json_obj_end();
	} else {
		for (int i = 0; i < nsi; i++) {
			if (i)
				putchar('\n');
			print_counters(xw_iface__name(si[i].ifc), a->ep, &si[i].cur);
		}
	}
out:
	for (int i = 0; i < nsi; i++)
		xw_iface__close(si[i].ifc);
	free(si);
	cli_free_names(names, n);
	return rc;
}

const struct cli_cmd cli_cmd_stats = {
	.name = "stats",
	.args = "[IFACE]",
	.min_pos = 0,
	.max_pos = 1,
	.summary = "counters, once or as live rates per second",
	.desc = "Counters of IFACE (or of every attached interface under PIN_ROOT) "
		"summed over CPUs, with the derived number of wakes sent per redirected "
		"frame. With --watch, the rate per second of every counter that changed, "
		"each interval, until --count intervals have passed or Ctrl-C.\n\n"
		"JSON: with IFACE, an object of counter name -> value (plus "
		"wakes_per_redirected_frame, null when no frame was redirected); without "
		"IFACE, an object of interface name -> such an object. With --watch, one "
		"object per interval and interface, one per line: "
		"{\"ifname\", \"ep\", \"period\", \"rates\", \"counters\", "
		"\"wakes_per_redirected_frame\"}; \"ep\" is -1 for all endpoints and 64 for "
		"frames not attributed to an endpoint.",
	.opts = (const struct cli_opt[]){
		{ "ep", 'e', "N",
		  "endpoint 0-1023, iface (frames not attributed to an endpoint) or all "
		  "(default all)",
		  cli_parse_ep_stats },
		{ "watch", 'w', "SECONDS",
		  "print rates every SECONDS (0.01-86400, fractions allowed) until "
		  "interrupted",
		  parse_watch },
		{ "count", 'c', "N", "with --watch: stop after N intervals", parse_count },
		CLI_OPT_PIN_ROOT,
		{ NULL } },
	.run = run_stats,
};
