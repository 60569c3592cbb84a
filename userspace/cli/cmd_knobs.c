// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * xdpwake set / get / knobs.
 *
 * A knob value is shown as text ("stream", "eth,udp", "0x88b5", "75") and
 * in JSON as an object {"value": N, "name": "stream", "scope": ..., "ep": ...}
 * where "name" is present only for knobs with symbolic values (policy, encap,
 * lat_mask).  `set` checks every KEY=VALUE before it changes anything.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct kv {
	const char *text;	/* the argument as given */
	char key[64];
	int idx;
	__u32 value;
};

static bool per_ep(int idx)
{
	XW_OPTS(xw_knob_info, ki);

	return !xw_knob_info(idx, &ki) && ki.per_endpoint;
}

static const char *knob_name(int idx)
{
	XW_OPTS(xw_knob_info, ki);

	return xw_knob_info(idx, &ki) ? "?" : ki.name;
}

static void append(char *buf, size_t len, const char *sep, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t len, const char *sep, const char *fmt, ...)
{
	size_t o = strlen(buf);
	va_list ap;

	if (o && o < len)
		o += snprintf(buf + o, len - o, "%s", sep);
	if (o >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + o, len - o, fmt, ap);
	va_end(ap);
}

/* Validate one KEY=VALUE; on error append a message to @errs. */
static void check_pair(struct kv *p, char *errs, size_t len, const char *sep)
{
	const char *eq = strchr(p->text, '=');
	char range[256], names[512];
	size_t klen;
	int err;

	p->idx = -1;
	if (!eq || eq == p->text) {
		append(errs, len, sep, "'%s' is not KEY=VALUE", p->text);
		return;
	}
	klen = (size_t)(eq - p->text);
	if (klen >= sizeof(p->key)) {
		append(errs, len, sep, "unknown knob '%.*s'; knobs: %s", (int)klen, p->text,
		       cli_knob_names(names, sizeof(names)));
		return;
	}
	memcpy(p->key, p->text, klen);
	p->key[klen] = '\0';
	p->idx = xw_knob_find(p->key);
	if (p->idx < 0) {
		append(errs, len, sep, "unknown knob '%s'; knobs: %s", p->key,
		       cli_knob_names(names, sizeof(names)));
		return;
	}
	err = xw_knob_parse(p->idx, eq + 1, &p->value);
	if (err) {
		append(errs, len, sep, "%s value '%s' for %s: expected %s",
		       err == -ERANGE ? "out-of-range" : "bad", eq + 1, p->key,
		       cli_knob_range(p->idx, range, sizeof(range)));
		p->idx = -1;
	}
}

static void json_knob(int idx, __u32 v, int ep)
{
	json_key(knob_name(idx));
	json_obj_begin();
	cli_json_knob_fields(idx, v);
	json_kv_str("scope", per_ep(idx) ? "endpoint" : "interface");
	if (per_ep(idx))
		json_kv_i64("ep", ep);
	json_obj_end();
}

static int run_set(struct cli_args *a)
{
	const char *ifname = a->pos[0], *sep = cli_json ? "; " : "\nxdpwake set: ";
	int npairs = a->npos - 1, rc, applied = 0;
	struct xw_iface *ifc;
	struct kv *pairs;
	char errs[4096] = "";

	rc = cli_check_ifname(ifname);
	if (rc)
		return rc;
	pairs = calloc(npairs, sizeof(*pairs));
	if (!pairs)
		return cli_fail(EXIT_RUNTIME, -ENOMEM, "%s", xw_strerror(-ENOMEM));
	for (int i = 0; i < npairs; i++) {
		pairs[i].text = a->pos[i + 1];
		check_pair(&pairs[i], errs, sizeof(errs), sep);
	}
	if (errs[0]) {
		append(errs, sizeof(errs), sep, "nothing was changed");
		rc = cli_usage("%s", errs);
		goto out;
	}

	rc = cli_require_iface(ifname);
	if (!rc)
		rc = cli_open_attached(a, ifname, &ifc);
	if (rc)
		goto out;
	for (int i = 0; i < npairs; i++) {
		struct kv *p = &pairs[i];
		int first = 0, last = 0, err = 0;

		if (per_ep(p->idx)) {
			first = a->ep == CLI_EP_ALL ? 0 : a->ep;
			last = a->ep == CLI_EP_ALL ? (int)xw_iface__max_endpoints(ifc) - 1 : a->ep;
		} else if (a->ep_set && cli_verbose) {
			cli_note("%s is per interface: --ep ignored", p->key);
		}
		for (int ep = first; ep <= last && !err; ep++)
			err = xw_iface__set_knob(ifc, p->key, (__u32)ep, p->value);
		if (err) {
			rc = cli_fail(EXIT_RUNTIME, err,
				      "%s: cannot set %s: %s (%d of %d settings applied before)",
				      ifname, p->key, xw_strerror(err), applied, npairs);
			xw_iface__close(ifc);
			goto out;
		}
		applied++;
	}
	xw_iface__close(ifc);

	if (cli_json) {
		json_obj_begin();
		for (int i = 0; i < npairs; i++)
			json_knob(pairs[i].idx, pairs[i].value, a->ep);
		json_obj_end();
	} else {
		for (int i = 0; i < npairs; i++) {
			char txt[256];

			printf("%s: %s = %s", ifname, pairs[i].key,
			       cli_knob_text(pairs[i].idx, pairs[i].value, txt, sizeof(txt)));
			if (!per_ep(pairs[i].idx))
				printf(" (interface)\n");
			else if (a->ep == CLI_EP_ALL)
				printf(" (all endpoints)\n");
			else
				printf(" (endpoint %d)\n", a->ep);
		}
	}
out:
	free(pairs);
	return rc;
}

struct knob_read {
	int idx;
	__u32 value;		/* of the endpoint asked, or of endpoint 0 */
	bool uniform;		/* every endpoint has value (ep all)        */
	int ndiff;		/* endpoints whose value differs             */
	int first_diff;
	__u32 nvalues;		/* the interface's endpoint ids (ep all)    */
	__u32 values[XW_MAX_ENDPOINTS];
};

static int read_knob(struct xw_iface *ifc, int ep, struct knob_read *r)
{
	int err;

	r->uniform = true;
	r->ndiff = 0;
	if (!per_ep(r->idx) || ep != CLI_EP_ALL)
		return xw_iface__get_knob(ifc, knob_name(r->idx),
					  ep == CLI_EP_ALL ? 0 : (__u32)ep, &r->value);
	r->nvalues = xw_iface__max_endpoints(ifc);
	for (__u32 e = 0; e < r->nvalues; e++) {
		err = xw_iface__get_knob(ifc, knob_name(r->idx), e, &r->values[e]);
		if (err)
			return err;
		if (r->values[e] != r->values[0]) {
			if (!r->ndiff++)
				r->first_diff = (int)e;
			r->uniform = false;
		}
	}
	r->value = r->values[0];
	return 0;
}

static int run_get(struct cli_args *a)
{
	const char *ifname = a->pos[0];
	int first = 0, last = xw_knob_count() - 1, rc, n;
	struct knob_read *reads;
	struct xw_iface *ifc;
	char names[512];

	rc = cli_check_ifname(ifname);
	if (rc)
		return rc;
	if (a->npos > 1) {
		first = last = xw_knob_find(a->pos[1]);
		if (first < 0)
			return cli_usage("unknown knob '%s'; knobs: %s", a->pos[1],
					 cli_knob_names(names, sizeof(names)));
	}
	n = last - first + 1;
	reads = calloc(n, sizeof(*reads));
	if (!reads)
		return cli_fail(EXIT_RUNTIME, -ENOMEM, "%s", xw_strerror(-ENOMEM));
	rc = cli_require_iface(ifname);
	if (!rc)
		rc = cli_open_attached(a, ifname, &ifc);
	if (rc)
		goto out;
	for (int i = 0; i < n; i++) {
		int err;

		reads[i].idx = first + i;
		err = read_knob(ifc, a->ep, &reads[i]);
		if (err) {
			rc = cli_fail(EXIT_RUNTIME, err, "%s: cannot read %s: %s", ifname,
				      knob_name(reads[i].idx), xw_strerror(err));
			break;
		}
	}
	xw_iface__close(ifc);
	if (rc)
		goto out;

	if (cli_json) {
		json_obj_begin();
		for (int i = 0; i < n; i++) {
			const struct knob_read *r = &reads[i];

			json_key(knob_name(r->idx));
			json_obj_begin();
			cli_json_knob_fields(r->idx, r->value);
			json_kv_str("scope", per_ep(r->idx) ? "endpoint" : "interface");
			if (per_ep(r->idx)) {
				json_kv_i64("ep", r->uniform ? a->ep : 0);
				if (a->ep == CLI_EP_ALL)
					json_kv_bool("uniform", r->uniform);
				if (!r->uniform) {
					json_key("values");
					json_arr_begin();
					for (__u32 e = 0; e < r->nvalues; e++)
						json_u64(r->values[e]);
					json_arr_end();
				}
			}
			json_obj_end();
		}
		json_obj_end();
	} else {
		bool help = n > 1 || cli_verbose;

		for (int i = 0; i < n; i++) {
			const struct knob_read *r = &reads[i];
			XW_OPTS(xw_knob_info, ki);
			char txt[256], note[160] = "";

			xw_knob_info(r->idx, &ki);
			cli_knob_text(r->idx, r->value, txt, sizeof(txt));
			if (!r->uniform) {
				char other[128];

				snprintf(note, sizeof(note),
					 " (endpoint 0; %d endpoint%s differ%s, e.g. %d: %s; use "
					 "--ep N)",
					 r->ndiff, r->ndiff > 1 ? "s" : "", r->ndiff > 1 ? "" : "s",
					 r->first_diff,
					 cli_knob_text(r->idx, r->values[r->first_diff], other,
						       sizeof(other)));
			}
			if (cli_verbose && cli_knob_symbol(r->idx, r->value, (char[256]){ 0 }, 256))
				snprintf(txt + strlen(txt), sizeof(txt) - strlen(txt), " (%u)",
					 r->value);
			if (help)
				printf("%-18s %-14s %-9s %s%s\n", ki.name, txt,
				       ki.per_endpoint ? "endpoint" : "interface", ki.help, note);
			else
				printf("%s %s%s\n", ki.name, txt, note);
		}
	}
out:
	free(reads);
	return rc;
}

static int run_knobs(struct cli_args *a)
{
	XW_OPTS(xw_knob_info, ki);
	char range[256], def[256];

	if (cli_json)
		json_obj_begin();
	else
		printf("%-18s %-9s %-9s %s\n", "KNOB", "SCOPE", "DEFAULT", "VALUES");
	for (int i = 0; i < xw_knob_count(); i++) {
		if (xw_knob_info(i, &ki))
			break;
		cli_knob_range(i, range, sizeof(range));
		if (cli_json) {
			json_key(ki.name);
			json_obj_begin();
			json_kv_str("scope", ki.per_endpoint ? "endpoint" : "interface");
			json_key("default");
			json_obj_begin();
			cli_json_knob_fields(i, ki.def);
			json_obj_end();
			json_kv_u64("min", ki.min);
			json_kv_u64("max", ki.max);
			json_kv_str("values", range);
			json_kv_str("help", ki.help);
			json_obj_end();
		} else {
			printf("%-18s %-9s %-9s %s\n", ki.name,
			       ki.per_endpoint ? "endpoint" : "interface",
			       cli_knob_text(i, ki.def, def, sizeof(def)), range);
			printf("    %s\n", ki.help);
		}
	}
	if (cli_json)
		json_obj_end();
	return EXIT_OK;
}

const struct cli_cmd cli_cmd_set = {
	.name = "set",
	.args = "IFACE KEY=VALUE...",
	.min_pos = 2,
	.max_pos = -1,
	.summary = "change knobs of the running program",
	.desc = "Set each knob KEY to VALUE (see `xdpwake knobs` for names and values; "
		"policies by name, encap as eth/udp/eth,udp, lat_mask as a list of packet "
		"types, numbers in decimal or 0x hex). Every pair is checked first: one bad "
		"name or value changes nothing (exit 2). Per-endpoint knobs are set on "
		"--ep N, or on every endpoint; per-interface knobs ignore --ep. A change "
		"takes effect on the next frame.",
	.opts = (const struct cli_opt[]){
		{ "ep", 'e', "N", "endpoint 0-1023 or all (default all)", cli_parse_ep },
		CLI_OPT_PIN_ROOT,
		{ NULL } },
	.run = run_set,
};

const struct cli_cmd cli_cmd_get = {
	.name = "get",
	.args = "IFACE [KEY]",
	.min_pos = 1,
	.max_pos = 2,
	.summary = "show knobs of the running program",
	.desc = "Show knob KEY, or every knob with its scope and description. Without "
		"--ep, a per-endpoint knob is shown once if every endpoint has the same "
		"value, otherwise endpoint 0's value with a note. JSON: an object of knob "
		"name -> {\"value\": N, \"name\": \"...\" (policy, encap, lat_mask only), "
		"\"scope\": \"endpoint\"|\"interface\", \"ep\": N (-1: all endpoints), "
		"\"uniform\": bool (without --ep), \"values\": [...] (when not uniform)}.",
	.opts = (const struct cli_opt[]){
		{ "ep", 'e', "N", "endpoint 0-1023 or all (default all)", cli_parse_ep },
		CLI_OPT_PIN_ROOT,
		{ NULL } },
	.run = run_get,
};

const struct cli_cmd cli_cmd_knobs = {
	.name = "knobs",
	.args = "",
	.min_pos = 0,
	.max_pos = 0,
	.summary = "list every knob: scope, default, values, help",
	.desc = "List the knobs that `set` and `get` accept, with their scope (one value "
		"per endpoint or per interface), default, accepted values and "
		"description. Needs no interface and no privileges. JSON: an object of knob "
		"name -> {\"scope\", \"default\": {\"value\"[, \"name\"]}, \"min\", \"max\", "
		"\"values\", \"help\"}.",
	.opts = (const struct cli_opt[]){ { NULL } },
	.run = run_knobs,
};
