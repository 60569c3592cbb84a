// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * xdpwake steer: the n-tuple rules "UDP/IPv4 destination port udp_port + q
 * -> RX queue q" that give every process of a host its own queue on a real
 * NIC (an endpoint on queue q with UDP encapsulation has port udp_port + q):
 * shows them and their state (default), installs (--apply) or removes
 * (--remove) them through the ethtool ioctl interface (ntuple.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum steer_mode { STEER_SHOW, STEER_APPLY, STEER_REMOVE };

static struct {
	enum steer_mode mode;
	unsigned long queues;
	bool queues_set;
} so;

enum rule_state { R_MISSING, R_INSTALLED, R_CONFLICT, R_ADDED, R_REPLACED, R_REMOVED, R_ABSENT };

static const char *const state_names[] = {
	[R_MISSING] = "missing",     [R_INSTALLED] = "installed", [R_CONFLICT] = "conflict",
	[R_ADDED] = "added",	     [R_REPLACED] = "replaced",	  [R_REMOVED] = "removed",
	[R_ABSENT] = "absent",
};

struct steer_row {
	__u32 queue;
	__u16 port;
	enum rule_state state;
	long loc;		/* -1: none */
	long other_queue;	/* conflict: where the port goes now (-1: dropped) */
};

static int parse_apply(struct cli_args *a, const char *val)
{
	if (so.mode == STEER_REMOVE) {
		snprintf(a->err, sizeof(a->err), "--apply and --remove exclude each other");
		return -EINVAL;
	}
	so.mode = STEER_APPLY;
	return 0;
}

static int parse_remove(struct cli_args *a, const char *val)
{
	if (so.mode == STEER_APPLY) {
		snprintf(a->err, sizeof(a->err), "--apply and --remove exclude each other");
		return -EINVAL;
	}
	so.mode = STEER_REMOVE;
	return 0;
}

static int parse_queues(struct cli_args *a, const char *val)
{
	if (cli_parse_ulong(val, 1, XW_MAX_QUEUES, &so.queues)) {
		snprintf(a->err, sizeof(a->err), "bad queue count '%s': expected 1-%d", val,
			 XW_MAX_QUEUES);
		return -EINVAL;
	}
	so.queues_set = true;
	return 0;
}

static int parse_port(struct cli_args *a, const char *val)
{
	unsigned long v;

	if (cli_parse_ulong(val, 1, 0xFFFF, &v)) {
		snprintf(a->err, sizeof(a->err), "bad UDP port '%s': expected 1-65535", val);
		return -EINVAL;
	}
	a->udp_port = (__u32)v;
	a->udp_port_set = true;
	return 0;
}

/* The rule for @port in @l: installed (exact, to @q), else a conflicting one. */
static void classify(const struct cli_ntuple_list *l, struct steer_row *r)
{
	r->state = R_MISSING;
	r->loc = -1;
	r->other_queue = -1;
	for (int i = 0; i < l->n; i++) {
		const struct cli_ntuple_rule *x = &l->rules[i];

		if (x->port != r->port)
			continue;
		if (x->exact && !x->drop && x->queue == r->queue) {
			r->state = R_INSTALLED;
			r->loc = x->loc;
			return;
		}
		r->state = R_CONFLICT;
		r->loc = x->loc;
		r->other_queue = x->drop ? -1 : (long)x->queue;
	}
}

static int fail_rules(const char *ifname, int err, const char *what)
{
	char drv[64] = "";

	cli_driver(ifname, drv, sizeof(drv));
	if (err == -EOPNOTSUPP && !strcmp(drv, "veth"))
		return cli_fail(EXIT_RUNTIME, err,
				"%s: %s: veth has no n-tuple filters (the ethtool rxnfc "
				"interface is not supported): its RX queue is the sender's TX "
				"queue, so steering has to be done on the path (the tests use "
				"bpf/steer.bpf.c on the bridge ports)",
				ifname, what);
	if (err == -EOPNOTSUPP)
		return cli_fail(EXIT_RUNTIME, err,
				"%s: %s: the device (driver %s) has no n-tuple filters, or they "
				"are off (ethtool -K %s ntuple on): frames cannot be steered to "
				"queues by UDP port",
				ifname, what, drv[0] ? drv : "?", ifname);
	return cli_fail(EXIT_RUNTIME, err, "%s: %s: %s", ifname, what, xw_strerror(err));
}

static int run_steer(struct cli_args *a)
{
	const char *ifname = a->pos[0];
	struct cli_ntuple_list l;
	struct steer_row *rows;
	__u32 base = XW_DEFAULT_UDP_PORT, loc;
	bool attached = false;
	int rc, err, nq;

	rc = cli_check_ifname(ifname);
	if (!rc)
		rc = cli_require_iface(ifname);
	if (rc)
		return rc;
	if (a->udp_port_set) {
		base = a->udp_port;
	} else {
		XW_OPTS(xw_iface_opts, probe, .pin_root = a->pin_root, .no_attach = true);
		struct xw_iface *ifc;

		if (xw_iface__open(ifname, &probe, &ifc) == 0) {
			attached = xw_iface__get_knob(ifc, "udp_port", 0, &base) == 0;
			xw_iface__close(ifc);
		}
	}
	if (so.queues_set) {
		nq = (int)so.queues;
	} else {
		nq = cli_rx_queues(ifname);
		if (nq <= 0)
			return cli_fail(EXIT_RUNTIME, nq ? nq : -ENODATA,
					"%s: cannot read the number of RX queues (%s): give --queues",
					ifname, xw_strerror(nq ? nq : -ENODATA));
	}
	if (base + (__u32)nq - 1 > 0xFFFF)
		return cli_usage("UDP ports %u..%u: beyond 65535", base, base + nq - 1);
	err = cli_ntuple_list(ifname, &l);
	if (err)
		return fail_rules(ifname, err, "cannot read the n-tuple rules");
	rows = calloc((size_t)nq, sizeof(*rows));
	if (!rows) {
		cli_ntuple_free(&l);
		return cli_fail(EXIT_RUNTIME, -ENOMEM, "%s", xw_strerror(-ENOMEM));
	}
	for (int q = 0; q < nq; q++) {
		struct steer_row *r = &rows[q];

		r->queue = (__u32)q;
		r->port = (__u16)(base + (__u32)q);
		classify(&l, r);
		if (so.mode == STEER_SHOW)
			continue;
		if (so.mode == STEER_REMOVE) {
			if (r->state != R_INSTALLED) {
				r->state = R_ABSENT;
				continue;
			}
			err = cli_ntuple_del(ifname, (__u32)r->loc);
			if (err)
				break;
			r->state = R_REMOVED;
			continue;
		}
		if (r->state == R_INSTALLED)
			continue;
		if (r->state == R_CONFLICT) {
			/* Every other rule for this port goes first. */
			for (int i = 0; i < l.n && !err; i++)
				if (l.rules[i].port == r->port)
					err = cli_ntuple_del(ifname, l.rules[i].loc);
			if (err)
				break;
		}
		cli_ntuple_free(&l);
		err = cli_ntuple_list(ifname, &l);
		if (err)
			break;
		err = cli_ntuple_add(ifname, &l, r->port, r->queue, &loc);
		if (err)
			break;
		r->state = r->state == R_CONFLICT ? R_REPLACED : R_ADDED;
		r->loc = loc;
		cli_ntuple_free(&l);
		err = cli_ntuple_list(ifname, &l);
		if (err)
			break;
	}
	cli_ntuple_free(&l);
	if (err) {
		rc = fail_rules(ifname, err,
				so.mode == STEER_REMOVE ? "cannot delete a rule" : "cannot insert a rule");
		free(rows);
		return rc;
	}

	if (cli_json) {
		json_obj_begin();
		json_kv_str("ifname", ifname);
		json_kv_u64("udp_port", base);
		json_kv_bool("xdpwake_attached", attached);
		json_kv_u64("queues", (unsigned long long)nq);
		json_kv_str("action", so.mode == STEER_APPLY    ? "apply"
				      : so.mode == STEER_REMOVE ? "remove"
								: "show");
		json_key("rules");
		json_arr_begin();
		for (int q = 0; q < nq; q++) {
			json_obj_begin();
			json_kv_u64("queue", rows[q].queue);
			json_kv_u64("port", rows[q].port);
			json_kv_str("state", state_names[rows[q].state]);
			json_key("location");
			if (rows[q].loc < 0)
				json_null();
			else
				json_u64((unsigned long long)rows[q].loc);
			if (rows[q].state == R_CONFLICT) {
				json_key("steered_to");
				if (rows[q].other_queue < 0)
					json_null();
				else
					json_u64((unsigned long long)rows[q].other_queue);
			}
			json_obj_end();
		}
		json_arr_end();
		json_obj_end();
	} else {
		printf("%s: n-tuple rules for %d queue%s, UDP ports %u..%u (udp_port %u%s)\n",
		       ifname, nq, nq == 1 ? "" : "s", base, base + nq - 1, base,
		       attached ? " of the attached program" : "");
		printf("  %-6s %-6s %-10s %-8s %s\n", "QUEUE", "PORT", "STATE", "LOC", "RULE");
		for (int q = 0; q < nq; q++) {
			char locs[24] = "-", note[48] = "";

			if (rows[q].loc >= 0)
				snprintf(locs, sizeof(locs), "%ld", rows[q].loc);
			if (rows[q].state == R_CONFLICT && rows[q].other_queue >= 0)
				snprintf(note, sizeof(note), " (now to queue %ld)", rows[q].other_queue);
			else if (rows[q].state == R_CONFLICT)
				snprintf(note, sizeof(note), " (now dropped)");
			printf("  %-6u %-6u %-10s %-8s flow-type udp4 dst-port %u action %u%s\n",
			       rows[q].queue, rows[q].port, state_names[rows[q].state], locs,
			       rows[q].port, rows[q].queue, note);
		}
		if (so.mode == STEER_SHOW)
			printf("  (--apply installs the missing ones, --remove removes them)\n");
	}
	free(rows);
	return EXIT_OK;
}

const struct cli_cmd cli_cmd_steer = {
	.name = "steer",
	.args = "IFACE",
	.min_pos = 1,
	.max_pos = 1,
	.summary = "n-tuple rules: each process's UDP port to its queue",
	.desc = "Several processes on one NIC each bind their own queue; with UDP "
		"encapsulation an endpoint on queue q has port udp_port + q, and the NIC "
		"must deliver that port's frames on queue q. This command shows the n-tuple "
		"(flow steering) rules \"UDP/IPv4 destination port udp_port + q -> RX queue "
		"q\" for q = 0 .. --queues - 1 (default: every RX queue of IFACE) and their "
		"state: installed, missing, or conflict (a rule sends the port elsewhere); "
		"--apply installs the missing ones (replacing conflicting ones), --remove "
		"removes them. udp_port is the attached program's, else --udp-port, else "
		"49152. Uses the ethtool ioctl interface (as `ethtool -N IFACE flow-type "
		"udp4 dst-port P action Q` would). A device without n-tuple filters (veth, "
		"or the feature off) is an error.",
	.opts = (const struct cli_opt[]){
		{ "queues", 'n', "N", "number of queues (ports) to steer, 1-256 (default: the "
				      "RX queues of IFACE)",
		  parse_queues },
		{ "apply", 'a', NULL, "install the missing rules", parse_apply },
		{ "remove", 'r', NULL, "remove the rules", parse_remove },
		{ "udp-port", 0x103, "N", "udp_port (queue 0's port) when xdpwake is not "
					  "attached (default 49152)",
		  parse_port },
		CLI_OPT_PIN_ROOT,
		{ NULL } },
	.run = run_steer,
};
