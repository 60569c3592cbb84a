// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Helpers shared by the subcommands: argument parsing, knob formatting,
 * opening an attached program, listing the pinned interfaces. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli.h"
#include "measure.h"

double cli_now(void)
{
	return xwu_now_ns() / 1e9;
}

int cli_parse_ulong(const char *s, unsigned long min, unsigned long max, unsigned long *v)
{
	unsigned long long x;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+' || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	x = strtoull(s, &end, 0);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || x < min || x > max)
		return -ERANGE;
	*v = (unsigned long)x;
	return 0;
}

int cli_parse_pin_root(struct cli_args *a, const char *val)
{
	size_t n = strlen(val);

	if (!n) {
		snprintf(a->err, sizeof(a->err), "empty directory name");
		return -EINVAL;
	}
	if (val[0] != '/') {
		snprintf(a->err, sizeof(a->err), "'%s' is not an absolute path", val);
		return -EINVAL;
	}
	if (n + IF_NAMESIZE + 64 >= PATH_MAX) {
		snprintf(a->err, sizeof(a->err), "path too long");
		return -ENAMETOOLONG;
	}
	a->pin_root = val;
	return 0;
}

static int parse_ep(struct cli_args *a, const char *val, bool stats)
{
	unsigned long v;

	if (!strcmp(val, "all") || !strcmp(val, "-1")) {
		a->ep = CLI_EP_ALL;
	} else if (stats && !strcmp(val, "iface")) {
		a->ep = CLI_EP_IFACE;
	} else if (!cli_parse_ulong(val, 0, stats ? XW_STATS_IFACE : XW_MAX_ENDPOINTS - 1,
				    &v)) {
		a->ep = (int)v;
	} else {
		snprintf(a->err, sizeof(a->err), "bad endpoint '%s': expected 0-%d%s or all",
			 val, XW_MAX_ENDPOINTS - 1, stats ? ", iface" : "");
		return -EINVAL;
	}
	a->ep_set = true;
	return 0;
}

int cli_parse_ep(struct cli_args *a, const char *val)
{
	return parse_ep(a, val, false);
}

int cli_parse_ep_stats(struct cli_args *a, const char *val)
{
	return parse_ep(a, val, true);
}

int cli_check_ifname(const char *ifname)
{
	size_t n = strlen(ifname);

	if (!n || n >= IF_NAMESIZE)
		return cli_usage("bad interface name '%s': 1 to %d characters", ifname,
				 IF_NAMESIZE - 1);
	for (const char *p = ifname; *p; p++)
		if (*p == '/' || *p == ':' || isspace((unsigned char)*p))
			return cli_usage("bad interface name '%s'", ifname);
	if (!strcmp(ifname, ".") || !strcmp(ifname, ".."))
		return cli_usage("bad interface name '%s'", ifname);
	return EXIT_OK;
}

bool cli_pin_root_denied(const char *pin_root)
{
	return access(pin_root, X_OK) && errno == EACCES;
}

int cli_require_iface(const char *ifname)
{
	if (if_nametoindex(ifname))
		return EXIT_OK;
	if (errno == ENODEV || errno == ENXIO)
		return cli_fail(EXIT_RUNTIME, -ENODEV, "%s: %s", ifname, xw_strerror(-ENODEV));
	return cli_fail(EXIT_RUNTIME, -errno, "%s: cannot look up the interface: %s", ifname,
			strerror(errno));
}

/* ---- knobs ---------------------------------------------------------- */

static bool knob_is(int idx, const char *name)
{
	XW_OPTS(xw_knob_info, ki);

	return !xw_knob_info(idx, &ki) && !strcmp(ki.name, name);
}

/* Names of the bits of @v from @names (n of them); false if @v has a bit
 * with no name. */
static bool bit_list(__u32 v, const char *(*name)(unsigned int), unsigned int n, char *buf,
		     size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (unsigned int i = 0; i < 32; i++) {
		if (!(v & (1u << i)))
			continue;
		if (i >= n || !name(i))
			return false;
		o += snprintf(buf + o, o < len ? len - o : 0, "%s%s", o ? "," : "", name(i));
	}
	return o < len;
}

static const char *encap_name(unsigned int bit)
{
	static const char *const names[] = { "eth", "udp" };

	return bit < 2 ? names[bit] : NULL;
}

const char *cli_knob_symbol(int idx, __u32 v, char *buf, size_t len)
{
	if (knob_is(idx, "policy"))
		return xw_policy_name(v);
	if (knob_is(idx, "encap")) {
		if (!v)
			return "none";
		return bit_list(v, encap_name, 2, buf, len) ? buf : NULL;
	}
	if (knob_is(idx, "lat_mask")) {
		if (v == 0xFFFFFFFFu)
			return "all";
		if (!v)
			return "none";
		return bit_list(v, xw_pkt_type_name, XW_PKT_TYPE_MAX, buf, len) ? buf : NULL;
	}
	return NULL;
}

const char *cli_knob_text(int idx, __u32 v, char *buf, size_t len)
{
	const char *sym = cli_knob_symbol(idx, v, buf, len);

	if (sym) {
		if (sym != buf)
			snprintf(buf, len, "%s", sym);
		return buf;
	}
	if (knob_is(idx, "ethertype") || knob_is(idx, "lat_mask") || knob_is(idx, "encap") ||
	    (knob_is(idx, "session") && v))
		snprintf(buf, len, "0x%04x", v);
	else
		snprintf(buf, len, "%u", v);
	return buf;
}

const char *cli_knob_range(int idx, char *buf, size_t len)
{
	XW_OPTS(xw_knob_info, ki);
	size_t o;

	if (xw_knob_info(idx, &ki)) {
		snprintf(buf, len, "?");
		return buf;
	}
	if (!strcmp(ki.name, "policy")) {
		o = 0;
		buf[0] = '\0';
		for (unsigned int p = 0; xw_policy_name(p); p++)
			o += snprintf(buf + o, o < len ? len - o : 0, "%s%s", p ? "|" : "",
				      xw_policy_name(p));
		if (o < len)
			snprintf(buf + o, len - o, " (or %u-%u)", ki.min, ki.max);
	} else if (!strcmp(ki.name, "encap")) {
		snprintf(buf, len, "eth|udp|eth,udp (or %u-%u)", ki.min, ki.max);
	} else if (!strcmp(ki.name, "lat_mask")) {
		snprintf(buf, len, "all|none|list of packet types (small,medium,rndv,...)"
				   "|mask 0x0-0x%x",
			 ki.max);
	} else if (!strcmp(ki.name, "ethertype")) {
		snprintf(buf, len, "0x%04x-0x%04x", ki.min, ki.max);
	} else if (!strcmp(ki.name, "session")) {
		snprintf(buf, len, "0-0x%x", ki.max);
	} else {
		snprintf(buf, len, "%u-%u", ki.min, ki.max);
	}
	return buf;
}

void cli_json_knob_fields(int idx, __u32 v)
{
	char buf[256];
	const char *sym = cli_knob_symbol(idx, v, buf, sizeof(buf));

	json_kv_u64("value", v);
	if (sym)
		json_kv_str("name", sym);
}

const char *cli_knob_names(char *buf, size_t len)
{
	XW_OPTS(xw_knob_info, ki);
	size_t o = 0;

	buf[0] = '\0';
	for (int i = 0; i < xw_knob_count() && !xw_knob_info(i, &ki); i++)
		o += snprintf(buf + o, o < len ? len - o : 0, "%s%s", i ? ", " : "", ki.name);
	return buf;
}

/* ---- interfaces ----------------------------------------------------- */

int cli_open_attached(const struct cli_args *a, const char *ifname, struct xw_iface **ifc)
{
	XW_OPTS(xw_iface_opts, o, .pin_root = a->pin_root, .no_attach = true);
	char dir[PATH_MAX];
	struct stat st;
	bool existed;
	int err;

	*ifc = NULL;
	snprintf(dir, sizeof(dir), "%s/%s", a->pin_root, ifname);
	existed = !stat(dir, &st);
	err = xw_iface__open(ifname, &o, ifc);
	if (!err)
		return EXIT_OK;
	/* The library creates the pin directory before it finds out that
	 * nothing is attached; do not leave an empty one behind. */
	if (!existed)
		rmdir(dir);
	if (err == -ENOENT && cli_pin_root_denied(a->pin_root))
		err = -EACCES;
	switch (-err) {
	case ENOENT:
		return cli_fail(EXIT_NOTFOUND, err,
				"%s: xdpwake is not attached (no program with maps pinned in %s)",
				ifname, dir);
	case ENODEV:
		return cli_fail(EXIT_RUNTIME, err, "%s: %s", ifname, xw_strerror(err));
	default:
		return cli_fail(EXIT_RUNTIME, err, "%s: cannot open the attached program: %s",
				ifname, xw_strerror(err));
	}
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

int cli_list_pinned(const char *pin_root, char ***namesp)
{
	char **names = NULL, **tmp;
	struct dirent *de;
	struct stat st;
	int n = 0, cap = 0, err = 0;
	DIR *d;

	*namesp = NULL;
	d = opendir(pin_root);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= IF_NAMESIZE)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISDIR(st.st_mode))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			tmp = realloc(names, cap * sizeof(*names));
			if (!tmp) {
				err = -ENOMEM;
				break;
			}
			names = tmp;
		}
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			err = -ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	if (err) {
		cli_free_names(names, n);
		return err;
	}
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	*namesp = names;
	return n;
}

void cli_free_names(char **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}
