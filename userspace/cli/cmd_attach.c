// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* xdpwake attach / detach. */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli.h"

/* Parse an option that sets the initial value of knob @name. */
static int knob_opt(struct cli_args *a, const char *name, const char *val, __u32 *out,
		    bool *set)
{
	int idx = xw_knob_find(name), err;
	char range[256];

	if (idx < 0) {
		snprintf(a->err, sizeof(a->err), "knob %s unknown to the library", name);
		return idx;
	}
	err = xw_knob_parse(idx, val, out);
	if (err) {
		snprintf(a->err, sizeof(a->err), "%s value '%s': expected %s",
			 err == -ERANGE ? "out-of-range" : "bad", val,
			 cli_knob_range(idx, range, sizeof(range)));
		return err;
	}
	*set = true;
	return 0;
}

static int parse_mode(struct cli_args *a, const char *val)
{
	if (!strcmp(val, "native") || !strcmp(val, "drv") || !strcmp(val, "driver"))
		a->mode = XW_MODE_NATIVE;
	else if (!strcmp(val, "generic") || !strcmp(val, "skb"))
		a->mode = XW_MODE_GENERIC;
	else if (!strcmp(val, "auto"))
		a->mode = XW_MODE_AUTO;
	else {
		snprintf(a->err, sizeof(a->err),
			 "bad mode '%s': expected native, generic or auto", val);
		return -EINVAL;
	}
	a->mode_set = true;
	return 0;
}

static int parse_encap(struct cli_args *a, const char *val)
{
	return knob_opt(a, "encap", val, &a->encap, &a->encap_set);
}

static int parse_ethertype(struct cli_args *a, const char *val)
{
	return knob_opt(a, "ethertype", val, &a->ethertype, &a->ethertype_set);
}

static int parse_udp_port(struct cli_args *a, const char *val)
{
	return knob_opt(a, "udp_port", val, &a->udp_port, &a->udp_port_set);
}

static int parse_policy(struct cli_args *a, const char *val)
{
	return knob_opt(a, "policy", val, &a->policy, &a->policy_set);
}

static int parse_max_endpoints(struct cli_args *a, const char *val)
{
	unsigned long v;

	if (cli_parse_ulong(val, 1, XW_MAX_ENDPOINTS, &v)) {
		snprintf(a->err, sizeof(a->err), "bad endpoint count '%s': expected 1-%d", val,
			 XW_MAX_ENDPOINTS);
		return -EINVAL;
	}
	a->max_endpoints = (__u32)v;
	return 0;
}

static const char *mode_name(int mode)
{
	return mode == XW_MODE_GENERIC ? "generic" : mode == XW_MODE_NATIVE ? "native" : "auto";
}

static const char *attach_kind(int multiprog)
{
	return multiprog ? "libxdp dispatcher (multi-program)"
			 : "single program (libxdp dispatcher not in use)";
}

static int run_attach(struct cli_args *a)
{
	const char *ifname = a->pos[0];
	XW_OPTS(xw_iface_opts, probe, .pin_root = a->pin_root, .no_attach = true);
	XW_OPTS(xw_iface_opts, o, .pin_root = a->pin_root, .mode = a->mode, .encap = a->encap,
		.ethertype = a->ethertype, .udp_port = a->udp_port,
		.policy_set = a->policy_set, .policy = a->policy,
		.max_endpoints = a->max_endpoints);
	const char *ignored[6];
	struct xw_iface *ifc = NULL;
	char dir[PATH_MAX];
	struct stat st;
	bool existed, already = false;
	int err, rc, nign = 0;

	rc = cli_check_ifname(ifname);
	if (!rc)
		rc = cli_require_iface(ifname);
	if (rc)
		return rc;
	snprintf(dir, sizeof(dir), "%s/%s", a->pin_root, ifname);
	existed = !stat(dir, &st);

	/* Already attached?  Then share it: open its pins, change nothing. */
	err = xw_iface__open(ifname, &probe, &ifc);
	if (!err)
		already = true;
	else if (err == -ENOENT)
		err = xw_iface__open(ifname, &o, &ifc);
	if (err) {
		if (!existed)
			rmdir(dir);
		if (err == -ENODEV)
			return cli_fail(EXIT_RUNTIME, err, "%s: %s", ifname, xw_strerror(err));
		return cli_fail(EXIT_RUNTIME, err, "%s: cannot attach: %s", ifname,
				xw_strerror(err));
	}

	if (already) {
		if (a->mode_set && a->mode != XW_MODE_AUTO && (int)a->mode != xw_iface__mode(ifc))
			ignored[nign++] = "--mode";
		if (a->encap_set)
			ignored[nign++] = "--encap";
		if (a->ethertype_set)
			ignored[nign++] = "--ethertype";
		if (a->udp_port_set)
			ignored[nign++] = "--udp-port";
		if (a->policy_set)
			ignored[nign++] = "--policy";
		if (a->max_endpoints && a->max_endpoints != xw_iface__max_endpoints(ifc))
			ignored[nign++] = "--max-endpoints";
	}

	if (cli_json) {
		json_obj_begin();
		json_kv_str("ifname", ifname);
		json_kv_i64("ifindex", xw_iface__ifindex(ifc));
		json_kv_bool("already_attached", already);
		json_kv_u64("prog_id", xw_iface__prog_id(ifc));
		json_kv_str("mode", mode_name(xw_iface__mode(ifc)));
		json_kv_bool("multiprog", xw_iface__multiprog(ifc) == 1);
		json_kv_str("pin_dir", xw_iface__pin_dir(ifc));
		json_kv_u64("max_endpoints", xw_iface__max_endpoints(ifc));
		json_key("ignored_options");
		json_arr_begin();
		for (int i = 0; i < nign; i++)
			json_str(ignored[i]);
		json_arr_end();
		json_obj_end();
	} else {
		if (already)
			printf("%s: xdpwake already attached, sharing program id %u\n", ifname,
			       xw_iface__prog_id(ifc));
		else
			printf("%s: attached xdpwake, program id %u\n", ifname,
			       xw_iface__prog_id(ifc));
		printf("  mode      %s\n", mode_name(xw_iface__mode(ifc)));
		printf("  attach    %s\n", attach_kind(xw_iface__multiprog(ifc)));
		printf("  pin dir   %s\n", xw_iface__pin_dir(ifc));
		printf("  endpoints %u (ids 0-%u)\n", xw_iface__max_endpoints(ifc),
		       xw_iface__max_endpoints(ifc) - 1);
		for (int i = 0; i < nign; i++)
			cli_note("%s ignored: the program is already attached (detach first, "
				 "or change knobs with `xdpwake set %s`)",
				 ignored[i], ifname);
	}
	/* The program stays attached: close only drops this handle. */
	xw_iface__close(ifc);
	return EXIT_OK;
}

static int run_detach(struct cli_args *a)
{
	const char *ifname = a->pos[0];
	char dir[PATH_MAX];
	int err, rc;

	rc = cli_check_ifname(ifname);
	if (!rc)
		rc = cli_require_iface(ifname);
	if (rc)
		return rc;
	snprintf(dir, sizeof(dir), "%s/%s", a->pin_root, ifname);
	err = xw_detach(ifname, a->pin_root);
	/* The library reports "not attached" when it may not look at the
	 * interface's program; tell a permission problem apart. */
	if (err == -ENOENT && cli_pin_root_denied(a->pin_root))
		err = -EACCES;
	if (err == -ENOENT)
		return cli_fail(EXIT_NOTFOUND, err, "%s: xdpwake is not attached", ifname);
	if (err == -ENODEV)
		return cli_fail(EXIT_RUNTIME, err, "%s: %s", ifname, xw_strerror(err));
	if (err)
		return cli_fail(EXIT_RUNTIME, err, "%s: cannot detach: %s", ifname,
				xw_strerror(err));
	if (cli_json) {
		json_obj_begin();
		json_kv_str("ifname", ifname);
		json_kv_bool("detached", true);
		json_kv_str("pin_dir", dir);
		json_obj_end();
	} else {
		printf("%s: detached xdpwake, removed %s\n", ifname, dir);
	}
	return EXIT_OK;
}

const struct cli_cmd cli_cmd_attach = {
	.name = "attach",
	.args = "IFACE",
	.min_pos = 1,
	.max_pos = 1,
	.summary = "attach the XDP program to an interface",
	.desc = "Load the wake engine and attach it to IFACE through libxdp (its "
		"multi-program dispatcher where it loads, otherwise as the only program), "
		"and pin its maps under PIN_ROOT/IFACE. The program stays attached after "
		"the command exits, until `xdpwake detach`. If xdpwake is attached already, "
		"the command shares it and changes nothing: the initial settings below "
		"apply only when this command attaches. Prints the mode, how it is "
		"attached, the program id, the pin directory and the endpoint ids.",
	.opts = (const struct cli_opt[]){
		{ "mode", 'm', "MODE",
		  "native (driver), generic (skb) or auto: native, else generic "
		  "(default auto)",
		  parse_mode },
		{ "encap", 0x101, "LIST",
		  "encapsulations accepted: eth, udp or eth,udp (default eth)", parse_encap },
		{ "ethertype", 0x102, "N",
		  "EtherType of Ethernet encapsulation, 0x0600-0xffff (default 0x88b5)",
		  parse_ethertype },
		{ "udp-port", 0x103, "N", "UDP destination port of UDP encapsulation, 1-65535 "
					  "(default 49152)",
		  parse_udp_port },
		{ "policy", 'P', "NAME",
		  "initial wake policy of every endpoint: every, timeout, marker, stream "
		  "or adaptive (default marker)",
		  parse_policy },
		{ "max-endpoints", 0x104, "N",
		  "endpoint ids the program takes, 0 to N-1, 1-1024 (default: "
		  "XDPWAKE_MAX_ENDPOINTS, else twice the larger of the possible CPUs and "
		  "the interface's RX queues, rounded up to a power of two, 64-1024); its "
		  "maps are sized to it, per-CPU statistics cost 288 bytes per id and CPU",
		  parse_max_endpoints },
		CLI_OPT_PIN_ROOT,
		{ NULL } },
	.run = run_attach,
};

const struct cli_cmd cli_cmd_detach = {
	.name = "detach",
	.args = "IFACE",
	.min_pos = 1,
	.max_pos = 1,
	.summary = "detach it and remove its pinned maps",
	.desc = "Detach the xdpwake XDP program from IFACE and remove its pin directory "
		"PIN_ROOT/IFACE. Processes that still have endpoints open lose their "
		"wakes. Exits with 3 if xdpwake is not attached to IFACE.",
	.opts = (const struct cli_opt[]){ CLI_OPT_PIN_ROOT, { NULL } },
	.run = run_detach,
};
