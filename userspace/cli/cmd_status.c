// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * xdpwake status: the program on each interface, its per-interface knobs,
 * the active endpoints, and the system settings that fight the wake policy
 * (NIC interrupt coalescing, busy-poll sysctls), each with the command that
 * fixes it.  Never attaches anything.
 */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>

#include "cli.h"

#define MAX_FINDINGS 12

struct finding {
	bool warn;		/* false: information */
	char msg[320];
	char fix[192];		/* command that fixes it, may be empty */
};

struct findings {
	int n;
	struct finding f[MAX_FINDINGS];
};

struct ep_row {
	__u32 ep;
	struct xw_ep_entry e;
	__u32 policy;
	int policy_err;
	bool running;
	char comm[32];
};

struct iface_status {
	char name[IF_NAMESIZE];
	int ifindex;
	__u32 prog_id;
	int mode;
	int multiprog;
	char pin_dir[PATH_MAX];
	__u32 max_eps;		/* endpoint ids 0 .. max_eps - 1 */
	int knob_idx[3];
	__u32 knob[3];
	int nep;
	struct ep_row eps[XW_MAX_ENDPOINTS];
	int coal_err;		/* 0: coal valid */
	struct ethtool_coalesce coal;
	struct findings notes;
};

static const char *const iface_knobs[3] = { "encap", "ethertype", "udp_port" };

__attribute__((format(printf, 4, 5))) static void add_finding(struct findings *fs, bool warn,
							       const char *fix,
							       const char *fmt, ...)
{
	struct finding *f;
	va_list ap;

	if (fs->n >= MAX_FINDINGS)
		return;
	f = &fs->f[fs->n++];
	f->warn = warn;
	snprintf(f->fix, sizeof(f->fix), "%s", fix ? fix : "");
	va_start(ap, fmt);
	vsnprintf(f->msg, sizeof(f->msg), fmt, ap);
	va_end(ap);
}

/* ETHTOOL_GCOALESCE: 0 or -errno. */
static int get_coalesce(const char *ifname, struct ethtool_coalesce *ec)
{
	struct ifreq ifr = {};
	int fd, err = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(ec, 0, sizeof(*ec));
	ec->cmd = ETHTOOL_GCOALESCE;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (void *)ec;
	if (ioctl(fd, SIOCETHTOOL, &ifr))
		err = -errno;
	close(fd);
	return err;
}

static void check_coalesce(struct iface_status *s)
{
	char what[160], fix[192];
	size_t o = 0;

	s->coal_err = get_coalesce(s->name, &s->coal);
	if (s->coal_err) {
		add_finding(&s->notes, false, NULL,
			    "interrupt coalescing not reported by the driver (%s), nothing to "
			    "check",
			    strerror(-s->coal_err));
		return;
	}
	what[0] = '\0';
	if (s->coal.rx_coalesce_usecs)
		o += snprintf(what + o, sizeof(what) - o, "%srx-usecs %u", o ? ", " : "",
			      s->coal.rx_coalesce_usecs);
	if (s->coal.rx_max_coalesced_frames > 1 && o < sizeof(what))
		o += snprintf(what + o, sizeof(what) - o, "%srx-frames %u", o ? ", " : "",
			      s->coal.rx_max_coalesced_frames);
	if (s->coal.use_adaptive_rx_coalesce && o < sizeof(what))
		o += snprintf(what + o, sizeof(what) - o, "%sadaptive-rx on", o ? ", " : "");
	if (!o)
		return;
	snprintf(fix, sizeof(fix), "ethtool -C %s adaptive-rx off rx-usecs 0 rx-frames 1",
		 s->name);
	add_finding(&s->notes, true, fix,
		    "NIC interrupt coalescing is on (%s): the NIC holds frames back before "
		    "the XDP program sees them, adding delay that the wake policy cannot "
		    "remove; let xdpwake do the coalescing",
		    what);
}

/* Read an integer sysctl: 0 or -errno. */
static int read_sysctl(const char *path, long *v)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%ld", v) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

struct sys_status {
	long busy_poll, busy_read;
	int busy_poll_err, busy_read_err;
	struct findings notes;
};

static void check_system(struct sys_status *ss)
{
	ss->busy_poll_err = read_sysctl("/proc/sys/net/core/busy_poll", &ss->busy_poll);
	ss->busy_read_err = read_sysctl("/proc/sys/net/core/busy_read", &ss->busy_read);
	if (!ss->busy_poll_err && ss->busy_poll)
		add_finding(&ss->notes, true, "sysctl -w net.core.busy_poll=0",
			    "net.core.busy_poll is %ld: poll() and epoll busy-poll the device "
			    "queue for %ld us before sleeping, spinning where xdpwake sleeps "
			    "and waits for its wake",
			    ss->busy_poll, ss->busy_poll);
	if (!ss->busy_read_err && ss->busy_read)
		add_finding(&ss->notes, true, "sysctl -w net.core.busy_read=0",
			    "net.core.busy_read is %ld: blocking socket reads busy-poll the "
			    "device queue for %ld us, spinning where xdpwake sleeps",
			    ss->busy_read, ss->busy_read);
	if (ss->busy_poll_err == -ENOENT || ss->busy_read_err == -ENOENT)
		add_finding(&ss->notes, false, NULL,
			    "net.core.busy_poll and busy_read are not visible in this network "
			    "namespace (they belong to the initial one), nothing to check");
	else if (ss->busy_poll_err || ss->busy_read_err)
		add_finding(&ss->notes, false, NULL,
			    "busy-poll sysctls not readable (%s), nothing to check",
			    strerror(-(ss->busy_poll_err ? ss->busy_poll_err
							  : ss->busy_read_err)));
}

static bool pid_running(__u32 pid, char *comm, size_t len)
{
	char path[64];
	FILE *f;

	comm[0] = '\0';
	if (!pid || (kill((pid_t)pid, 0) && errno == ESRCH))
		return false;
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	f = fopen(path, "r");
	if (f) {
		if (fgets(comm, (int)len, f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	return true;
}

/* The UDP port of endpoint row @r, 0 without UDP encapsulation. */
static unsigned int ep_port(const struct iface_status *s, const struct ep_row *r)
{
	if (!(s->knob[0] & XW_ENCAP_UDP) || r->e.queue_id >= XW_MAX_QUEUES ||
	    s->knob[2] + r->e.queue_id > 0xFFFF)
		return 0;
	return s->knob[2] + r->e.queue_id;
}

/*
 * Endpoints of live processes on several queues: each queue must get its
 * endpoints' frames.  With UDP encapsulation the NIC's n-tuple rules do
 * that ("UDP port udp_port + q -> RX queue q", `xdpwake steer`): name the
 * missing ones.  veth cannot be steered (its RX queue is the sender's TX
 * queue); Ethernet encapsulation cannot be steered per process by ordinary
 * NICs.
 */
static void check_steering(struct iface_status *s)
{
	bool used[XW_MAX_QUEUES] = { false };
	char drv[64] = "", missing[240], fix[96];
	struct cli_ntuple_list l;
	__u32 maxq = 0;
	int nq = 0, nmiss = 0, err;
	size_t o = 0;

	for (int i = 0; i < s->nep; i++) {
		__u32 q = s->eps[i].e.queue_id;

		if (!s->eps[i].running || q >= XW_MAX_QUEUES || used[q])
			continue;
		used[q] = true;
		nq++;
		if (q > maxq)
			maxq = q;
	}
	if (!nq)
		return;
	cli_driver(s->name, drv, sizeof(drv));
	/* Endpoints on queue 0 alone: fine on a single-queue device and on
	 * veth (the peer sends on queue 0), but a multi-queue NIC's RSS
	 * spreads UDP flows over all its queues. */
	if (nq == 1 && maxq == 0 && (!strcmp(drv, "veth") || cli_rx_queues(s->name) <= 1))
		return;
	if (!(s->knob[0] & XW_ENCAP_UDP)) {
		if (nq == 1 && maxq == 0)
			return; /* nothing better exists for Ethernet */
		add_finding(&s->notes, true, NULL,
			    "endpoints on %d queues (up to %u) with Ethernet encapsulation: a "
			    "NIC cannot steer these frames to the endpoint's queue (RSS does not "
			    "hash non-IP frames; they land on one queue) and frames on another "
			    "queue are dropped (drop_queue); use UDP encapsulation and `xdpwake "
			    "steer`",
			    nq, maxq);
		return;
	}
	err = cli_ntuple_list(s->name, &l);
	if (err == -EOPNOTSUPP && !strcmp(drv, "veth")) {
		add_finding(&s->notes, false, NULL,
			    "endpoints on %d queues (up to %u) of a veth: its RX queue is the "
			    "sender's TX queue, not chosen by destination; steering has to be "
			    "done on the path (tests/mpi/hosts.sh: bpf/steer.bpf.c on the "
			    "bridge ports), or frames land on a wrong queue (drop_queue)",
			    nq, maxq);
		return;
	}
	if (err) {
		add_finding(&s->notes, true, NULL,
			    "endpoints on %d queues (up to %u), but the n-tuple rules that steer "
			    "their UDP ports to their queues cannot be read (%s%s%s): frames "
			    "reach a queue by RSS and are dropped on a wrong one (drop_queue)",
			    nq, maxq, strerror(-err), drv[0] ? ", driver " : "", drv);
		return;
	}
	missing[0] = '\0';
	for (__u32 q = 0; q <= maxq; q++) {
		unsigned int port = s->knob[2] + q;
		bool ok = false;

		if (!used[q])
			continue;
		for (int i = 0; i < l.n && !ok; i++)
			ok = l.rules[i].port == port && l.rules[i].exact && !l.rules[i].drop &&
			     l.rules[i].queue == q;
		if (ok)
			continue;
		nmiss++;
		if (o < sizeof(missing))
			o += snprintf(missing + o, sizeof(missing) - o, "%sudp4 dst-port %u -> queue %u",
				      o ? ", " : "", port, q);
	}
	cli_ntuple_free(&l);
	if (!nmiss)
		return;
	snprintf(fix, sizeof(fix), "xdpwake steer %s --apply --queues %u", s->name, maxq + 1);
	add_finding(&s->notes, true, fix,
		    "endpoints on %d queues, %d without the n-tuple rule that steers their "
		    "UDP port to their queue (%s): their frames reach a queue by RSS and are "
		    "dropped on a wrong one (drop_queue)",
		    nq, nmiss, missing);
}

/* Fill @s from the open handle; 0 or exit code (error reported). */
static int collect(struct xw_iface *ifc, struct iface_status *s)
{
	int err;

	snprintf(s->name, sizeof(s->name), "%s", xw_iface__name(ifc));
	s->ifindex = xw_iface__ifindex(ifc);
	s->prog_id = xw_iface__prog_id(ifc);
	s->mode = xw_iface__mode(ifc);
	s->multiprog = xw_iface__multiprog(ifc);
	snprintf(s->pin_dir, sizeof(s->pin_dir), "%s", xw_iface__pin_dir(ifc));
	s->max_eps = xw_iface__max_endpoints(ifc);
	for (int i = 0; i < 3; i++) {
		s->knob_idx[i] = xw_knob_find(iface_knobs[i]);
		err = xw_iface__get_knob(ifc, iface_knobs[i], 0, &s->knob[i]);
		if (err)
			return cli_fail(EXIT_RUNTIME, err, "%s: cannot read knob %s: %s", s->name,
					iface_knobs[i], xw_strerror(err));
	}
	for (__u32 ep = 0; ep < s->max_eps; ep++) {
		struct ep_row *r = &s->eps[s->nep];

		err = xw_iface__endpoint(ifc, ep, &r->e);
		if (err)
			return cli_fail(EXIT_RUNTIME, err, "%s: cannot read endpoint %u: %s",
					s->name, ep, xw_strerror(err));
		if (!(r->e.flags & XW_EPF_ACTIVE))
			continue;
		r->ep = ep;
		r->policy_err = xw_iface__get_knob(ifc, "policy", ep, &r->policy);
		r->running = pid_running(r->e.owner_pid, r->comm, sizeof(r->comm));
		if (!r->running)
			add_finding(&s->notes, true, NULL,
				    "endpoint %u is registered by pid %u, which is not running "
				    "here (it died without closing the endpoint, or runs in "
				    "another PID namespace)",
				    ep, r->e.owner_pid);
		s->nep++;
	}
	check_steering(s);
	if (s->mode == XW_MODE_GENERIC)
		add_finding(&s->notes, false, NULL,
			    "generic (skb) mode, slower than native (asked for with --mode "
			    "generic, or the driver has no native XDP)");
	check_coalesce(s);
	return EXIT_OK;
}

static const char *mode_name(int mode)
{
	return mode == XW_MODE_GENERIC ? "generic" : "native";
}

static void json_findings(const struct findings *fs)
{
	json_key("warnings");
	json_arr_begin();
	for (int i = 0; i < fs->n; i++) {
		if (!fs->f[i].warn)
			continue;
		json_obj_begin();
		json_kv_str("message", fs->f[i].msg);
		if (fs->f[i].fix[0])
			json_kv_str("fix", fs->f[i].fix);
		else
			json_kv_str("fix", NULL);
		json_obj_end();
	}
	json_arr_end();
	json_key("info");
	json_arr_begin();
	for (int i = 0; i < fs->n; i++)
		if (!fs->f[i].warn)
			json_str(fs->f[i].msg);
	json_arr_end();
}

static void print_findings(const struct findings *fs, const char *indent)
{
	for (int i = 0; i < fs->n; i++) {
		printf("%s%s: %s\n", indent, fs->f[i].warn ? "warning" : "info", fs->f[i].msg);
		if (fs->f[i].fix[0])
			printf("%s    fix: %s\n", indent, fs->f[i].fix);
	}
}

static void json_iface(const struct iface_status *s)
{
	json_obj_begin();
	json_kv_str("ifname", s->name);
	json_kv_i64("ifindex", s->ifindex);
	json_kv_u64("prog_id", s->prog_id);
	json_kv_str("mode", mode_name(s->mode));
	json_kv_bool("multiprog", s->multiprog == 1);
	json_kv_str("pin_dir", s->pin_dir);
	json_kv_u64("max_endpoints", s->max_eps);
	json_key("knobs");
	json_obj_begin();
	for (int i = 0; i < 3; i++) {
		json_key(iface_knobs[i]);
		json_obj_begin();
		cli_json_knob_fields(s->knob_idx[i], s->knob[i]);
		json_obj_end();
	}
	json_obj_end();
	json_key("endpoints");
	json_arr_begin();
	for (int i = 0; i < s->nep; i++) {
		const struct ep_row *r = &s->eps[i];

		json_obj_begin();
		json_kv_u64("ep", r->ep);
		json_kv_u64("queue", r->e.queue_id);
		json_key("udp_port");
		if (ep_port(s, r))
			json_u64(ep_port(s, r));
		else
			json_null();
		json_kv_u64("owner_pid", r->e.owner_pid);
		json_kv_bool("running", r->running);
		json_kv_str("comm", r->comm[0] ? r->comm : NULL);
		json_kv_u64("flags", r->e.flags);
		json_key("policy");
		if (r->policy_err) {
			json_null();
		} else {
			json_obj_begin();
			cli_json_knob_fields(xw_knob_find("policy"), r->policy);
			json_obj_end();
		}
		json_obj_end();
	}
	json_arr_end();
	json_key("coalesce");
	if (s->coal_err) {
		json_null();
	} else {
		json_obj_begin();
		json_kv_u64("rx_usecs", s->coal.rx_coalesce_usecs);
		json_kv_u64("rx_frames", s->coal.rx_max_coalesced_frames);
		json_kv_bool("adaptive_rx", s->coal.use_adaptive_rx_coalesce);
		json_obj_end();
	}
	json_findings(&s->notes);
	json_obj_end();
}

static void print_iface(const struct iface_status *s)
{
	char buf[3][128];

	printf("%s (ifindex %d): xdpwake program id %u, %s mode, %s\n", s->name, s->ifindex,
	       s->prog_id, mode_name(s->mode),
	       s->multiprog ? "libxdp dispatcher" : "single program");
	printf("  pin dir     %s\n", s->pin_dir);
	printf("  endpoint ids 0-%u (max_endpoints %u, set at attach)\n", s->max_eps - 1,
	       s->max_eps);
	for (int i = 0; i < 3; i++)
		cli_knob_text(s->knob_idx[i], s->knob[i], buf[i], sizeof(buf[i]));
	printf("  encap       %s   ethertype %s   udp_port %s\n", buf[0], buf[1], buf[2]);
	if (!s->nep) {
		printf("  endpoints   none active\n");
	} else {
		printf("  endpoints   %d active\n", s->nep);
		printf("    %-4s %-6s %-6s %-8s %-9s %s\n", "EP", "QUEUE", "PORT", "PID",
		       "POLICY", "PROCESS");
		for (int i = 0; i < s->nep; i++) {
			const struct ep_row *r = &s->eps[i];
			char pol[32];

			if (r->policy_err)
				snprintf(pol, sizeof(pol), "?");
			else
				cli_knob_text(xw_knob_find("policy"), r->policy, pol, sizeof(pol));
			char port[8] = "-";

			if (ep_port(s, r))
				snprintf(port, sizeof(port), "%u", ep_port(s, r));
			printf("    %-4u %-6u %-6s %-8u %-9s %s\n", r->ep, r->e.queue_id, port,
			       r->e.owner_pid, pol,
			       r->running ? (r->comm[0] ? r->comm : "?") : "(not running)");
		}
	}
	if (s->coal_err == 0 && cli_verbose)
		printf("  coalescing  rx-usecs %u  rx-frames %u  adaptive-rx %s\n",
		       s->coal.rx_coalesce_usecs, s->coal.rx_max_coalesced_frames,
		       s->coal.use_adaptive_rx_coalesce ? "on" : "off");
	print_findings(&s->notes, "  ");
}

static bool opt_clean;

static int parse_clean(struct cli_args *a, const char *val)
{
	opt_clean = true;
	return 0;
}

/* The paths xw_leftovers_clean() removed. */
struct removed_list {
	char **path;
	int n, cap;
};

static void note_removed(const char *path, void *ctx)
{
	struct removed_list *r = ctx;
	char **np;

	if (r->n == r->cap) {
		np = realloc(r->path, (size_t)(r->cap ? 2 * r->cap : 16) * sizeof(*np));
		if (!np)
			return;
		r->path = np;
		r->cap = r->cap ? 2 * r->cap : 16;
	}
	r->path[r->n] = strdup(path);
	if (r->path[r->n])
		r->n++;
}

static void print_removed(const struct removed_list *r)
{
	if (cli_json) {
		json_key("removed");
		json_arr_begin();
		for (int i = 0; i < r->n; i++)
			json_str(r->path[i]);
		json_arr_end();
		return;
	}
	for (int i = 0; i < r->n; i++)
		printf("removed %s\n", r->path[i]);
	printf("%d file%s of dead endpoints removed\n", r->n, r->n == 1 ? "" : "s");
}

static int run_status(struct cli_args *a)
{
	struct iface_status *st = NULL;
	struct sys_status ss = {};
	struct removed_list rm = {};
	char **names = NULL;
	int n = 0, nst = 0, rc = EXIT_OK, nstale = 0;

	if (a->npos) {
		rc = cli_check_ifname(a->pos[0]);
		if (!rc)
			rc = cli_require_iface(a->pos[0]);
		if (rc)
			return rc;
	}
	if (opt_clean) {
		int err = xw_leftovers_clean(a->npos ? a->pos[0] : NULL, note_removed, &rm);

		if (err < 0)
			return cli_fail(EXIT_RUNTIME, err, "cannot remove leftovers: %s",
					xw_strerror(err));
	}
	if (a->npos) {
		names = calloc(1, sizeof(*names));
		if (!names || !(names[0] = strdup(a->pos[0]))) {
			free(names);
			return cli_fail(EXIT_RUNTIME, -ENOMEM, "%s", xw_strerror(-ENOMEM));
		}
		n = 1;
	} else {
		n = cli_list_pinned(a->pin_root, &names);
		if (n < 0)
			return cli_fail(EXIT_RUNTIME, n, "cannot list %s: %s", a->pin_root,
					xw_strerror(n));
	}
	st = calloc(n ? n : 1, sizeof(*st));
	if (!st) {
		cli_free_names(names, n);
		return cli_fail(EXIT_RUNTIME, -ENOMEM, "%s", xw_strerror(-ENOMEM));
	}

	for (int i = 0; i < n; i++) {
		XW_OPTS(xw_iface_opts, o, .pin_root = a->pin_root, .no_attach = true);
		struct xw_iface *ifc;
		char fix[PATH_MAX + 16];
		int err;

		if (a->npos) {
			/* One interface: every failure is the command's. */
			rc = cli_open_attached(a, names[i], &ifc);
			if (rc)
				goto out;
		} else {
			err = xw_iface__open(names[i], &o, &ifc);
			if (err == -ENOENT || err == -ENODEV) {
				snprintf(fix, sizeof(fix), "rm -r %s/%s", a->pin_root, names[i]);
				add_finding(&ss.notes, true, fix,
					    "%s/%s: stale pin directory (%s)", a->pin_root,
					    names[i],
					    err == -ENODEV ? "the interface no longer exists"
							   : "xdpwake is not attached");
				nstale++;
				continue;
			}
			if (err) {
				rc = cli_fail(EXIT_RUNTIME, err, "%s: cannot open: %s", names[i],
					      xw_strerror(err));
				goto out;
			}
		}
		rc = collect(ifc, &st[nst]);
		xw_iface__close(ifc);
		if (rc)
			goto out;
		nst++;
	}
	if (!nst && opt_clean) {
		/* Nothing attached: the clean-up is the whole answer. */
		if (cli_json)
			json_obj_begin();
		print_removed(&rm);
		if (cli_json)
			json_obj_end();
		goto out;
	}
	if (!nst) {
		rc = cli_fail(EXIT_NOTFOUND, -ENOENT,
			      "no xdpwake program attached (%s%s)",
			      nstale ? "only stale pin directories under " : "nothing pinned under ",
			      a->pin_root);
		if (nstale && !cli_json)
			print_findings(&ss.notes, "  ");
		goto out;
	}
	check_system(&ss);

	if (cli_json) {
		json_obj_begin();
		if (opt_clean)
			print_removed(&rm);
		json_key("interfaces");
		json_arr_begin();
		for (int i = 0; i < nst; i++)
			json_iface(&st[i]);
		json_arr_end();
		json_key("system");
		json_obj_begin();
		json_key("busy_poll");
		if (ss.busy_poll_err)
			json_null();
		else
			json_i64(ss.busy_poll);
		json_key("busy_read");
		if (ss.busy_read_err)
			json_null();
		else
			json_i64(ss.busy_read);
		json_findings(&ss.notes);
		json_obj_end();
		json_obj_end();
	} else {
		if (opt_clean) {
			print_removed(&rm);
			putchar('\n');
		}
		for (int i = 0; i < nst; i++) {
			if (i)
				putchar('\n');
			print_iface(&st[i]);
		}
		if (ss.notes.n || cli_verbose) {
			printf("\nsystem:\n");
			if (cli_verbose && !ss.busy_poll_err && !ss.busy_read_err)
				printf("  net.core.busy_poll %ld  net.core.busy_read %ld\n",
				       ss.busy_poll, ss.busy_read);
			print_findings(&ss.notes, "  ");
		}
	}
out:
	for (int i = 0; i < rm.n; i++)
		free(rm.path[i]);
	free(rm.path);
	free(st);
	cli_free_names(names, n);
	return rc;
}

const struct cli_cmd cli_cmd_status = {
	.name = "status",
	.args = "[IFACE]",
	.min_pos = 0,
	.max_pos = 1,
	.summary = "program, knobs, endpoints, conflicting settings",
	.desc = "For IFACE, or for every interface with a directory under PIN_ROOT: the "
		"program id, XDP mode, whether the libxdp dispatcher is used, the "
		"per-interface knobs (encap, ethertype, udp_port), and the active endpoints "
		"with their queue, UDP port (udp_port + queue, with UDP encapsulation), owner "
		"process and policy. Then warnings about settings that fight the wake "
		"policy, each with the command that fixes it: NIC interrupt coalescing "
		"(ethtool -c) and the net.core.busy_poll / busy_read sysctls; and, when "
		"live endpoints use several queues, the steering of their frames to their "
		"queues: n-tuple rules missing on the NIC (xdpwake steer), a veth (its RX "
		"queue follows the sender's TX queue: steer on the path), Ethernet "
		"encapsulation (not steerable per process). Never attaches anything; exits with 3 if xdpwake is not attached "
		"(to IFACE, or anywhere under PIN_ROOT). -v also shows the coalescing and "
		"sysctl values. --clean first removes what endpoints of killed processes left "
		"in /dev/shm (their local inboxes and claim files; of IFACE in this network "
		"namespace, or of every interface and namespace) and lists each file removed; "
		"a live endpoint's files are never touched. With --clean, nothing attached is "
		"no error.",
	.opts = (const struct cli_opt[]){
		{ "clean", 0x101, NULL,
		  "remove the /dev/shm files of dead endpoints first, and list them",
		  parse_clean },
		CLI_OPT_PIN_ROOT, { NULL } },
	.run = run_status,
};
