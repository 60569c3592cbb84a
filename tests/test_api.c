// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Unit tests of the library API that need no privileges and touch no
 * interface: knob parsing and metadata, policy / reason / packet type /
 * counter names, xw_strerror, options struct validation and argument checks
 * of xw_iface__open (on interfaces that do not exist), NULL handling of the
 * xw_iface__* accessors, and logging: a callback receives the library's
 * messages, and with none installed the library prints nothing at all.
 */
#include <stddef.h>
#include <sys/stat.h>

#include "harness.h"
#include "xdpwake.h"

#define MISSING_IF "xw-no-such-if0" /* 14 characters: a valid name */

/* ---- knobs -------------------------------------------------------------- */

static int knob(const char *name)
{
	int idx = xw_knob_find(name);

	REQUIRE(idx >= 0, "knob %s not found (%d)", name, idx);
	return idx;
}

/* Parse @text for knob @name and expect @want_err (0: success with @want). */
static void expect_parse(const char *name, const char *text, int want_err, __u32 want)
{
	__u32 v = 0xDEADBEEF;
	int err = xw_knob_parse(knob(name), text, &v);

	if (want_err) {
		CHECK(err == want_err, "xw_knob_parse(%s, \"%s\") = %d, want %d", name, text, err,
		      want_err);
		CHECK(v == 0xDEADBEEF, "xw_knob_parse(%s, \"%s\") wrote %u (must not, on error)", name,
		      text, v);
	} else {
		CHECK(err == 0 && v == want, "xw_knob_parse(%s, \"%s\") = %d value %u, want 0 value %u",
		      name, text, err, v, want);
	}
}

static void test_knob_metadata(void)
{
	XW_OPTS(xw_knob_info, ki);
	XW_OPTS(xw_knob_info, kj);
	int n = xw_knob_count();

	CHECK(n == 13, "xw_knob_count() = %d", n);
	for (int i = 0; i < n; i++) {
		ki = (struct xw_knob_info){ .sz = sizeof(ki) };
		CHECK(xw_knob_info(i, &ki) == 0, "xw_knob_info(%d)", i);
		CHECK(ki.name && *ki.name, "knob %d has no name", i);
		if (!ki.name)
			continue;
		CHECK(ki.help && *ki.help, "knob %s has no help", ki.name);
		CHECK(ki.min <= ki.max, "knob %s: min %u > max %u", ki.name, ki.min, ki.max);
		CHECK(ki.def >= ki.min && ki.def <= ki.max, "knob %s: default %u outside [%u, %u]",
		      ki.name, ki.def, ki.min, ki.max);
		CHECK(xw_knob_find(ki.name) == i, "xw_knob_find(%s) = %d, want %d", ki.name,
		      xw_knob_find(ki.name), i);
		for (int j = 0; j < i; j++) {
			xw_knob_info(j, &kj);
			CHECK(kj.name && strcmp(ki.name, kj.name), "knobs %d and %d are both %s", j, i,
			      ki.name);
		}
		/* Per-interface knobs: the encapsulation ones and auto_detach. */
		CHECK(ki.per_endpoint == !(!strcmp(ki.name, "encap") || !strcmp(ki.name, "ethertype") ||
					   !strcmp(ki.name, "udp_port") ||
					   !strcmp(ki.name, "auto_detach")),
		      "knob %s: per_endpoint %d", ki.name, ki.per_endpoint);
	}
	CHECK(xw_knob_info(-1, &ki) == -ERANGE, "xw_knob_info(-1)");
	CHECK(xw_knob_info(n, &ki) == -ERANGE, "xw_knob_info(count)");
	CHECK(xw_knob_info(INT_MAX, &ki) == -ERANGE, "xw_knob_info(INT_MAX)");
	CHECK(xw_knob_info(0, NULL) < 0, "xw_knob_info(0, NULL)");
	/* sz: none is -EINVAL; a shorter struct (an older header) gets its
	 * part, a longer one (a newer header) its tail zeroed. */
	ki = (struct xw_knob_info){ .sz = 0 };
	CHECK(xw_knob_info(0, &ki) == -EINVAL && !ki.name, "xw_knob_info(sz 0)");
	ki = (struct xw_knob_info){ .sz = offsetof(struct xw_knob_info, help) };
	CHECK(xw_knob_info(0, &ki) == 0 && ki.name && !ki.help &&
		      ki.sz == offsetof(struct xw_knob_info, help),
	      "xw_knob_info(sz without help)");
	{
		struct {
			struct xw_knob_info k;
			unsigned char tail[16];
		} big;

		memset(&big, 0xAA, sizeof(big));
		big.k.sz = sizeof(big);
		CHECK(xw_knob_info(0, &big.k) == 0 && big.k.help && big.k.sz == sizeof(big) &&
			      !memcmp(big.tail, (unsigned char[16]){ 0 }, sizeof(big.tail)),
		      "xw_knob_info(larger sz): tail zeroed");
	}
	CHECK(xw_knob_find("no_such_knob") == -ENOENT, "xw_knob_find(unknown) = %d",
	      xw_knob_find("no_such_knob"));
	CHECK(xw_knob_find("") == -ENOENT, "xw_knob_find(\"\") = %d", xw_knob_find(""));
	CHECK(xw_knob_find("policyx") == -ENOENT, "xw_knob_find(policyx)");
	CHECK(xw_knob_find("k_policy") == -ENOENT, "xw_knob_find(k_policy) (the BPF map name)");
	CHECK(xw_knob_find(NULL) < 0, "xw_knob_find(NULL) = %d", xw_knob_find(NULL));

	/* Defaults documented in proto.h. */
	xw_knob_info(knob("policy"), &ki);
	CHECK(ki.def == XW_POLICY_MARKER && ki.min == 0 && ki.max == XW_POLICY_MAX - 1,
	      "policy: def %u range [%u, %u]", ki.def, ki.min, ki.max);
	xw_knob_info(knob("encap"), &ki);
	CHECK(ki.def == XW_ENCAP_ETH && ki.min == 1 && ki.max == XW_ENCAP_ALL, "encap");
	xw_knob_info(knob("ethertype"), &ki);
	CHECK(ki.def == XW_DEFAULT_ETHERTYPE && ki.min == 0x0600 && ki.max == 0xFFFF, "ethertype");
	xw_knob_info(knob("udp_port"), &ki);
	CHECK(ki.def == XW_DEFAULT_UDP_PORT && ki.min == 1 && ki.max == 0xFFFF, "udp_port");
}

/* Generic number rules, applied to every knob. */
static void test_knob_numbers(void)
{
	static const char *const garbage[] = {
		"", "abc", "12abc", "1.5", "1e3", "0x", "0xg", "x10", "--1", "+1", "+0", "-0",
		"-1", "-4294967295", "-18446744073709551615", " -1", "\t-1",
		" -18446744073709551615", "18446744073709551616", "99999999999999999999999",
		"0x10000000000000000", "1 2", ",", ",,", "5,", "\n",
	};
	XW_OPTS(xw_knob_info, ki);
	char t[64];
	__u32 v;

	for (int i = 0; i < xw_knob_count(); i++) {
		xw_knob_info(i, &ki);
		/* Boundaries accepted, decimal and hex. */
		snprintf(t, sizeof(t), "%u", ki.min);
		expect_parse(ki.name, t, 0, ki.min);
		snprintf(t, sizeof(t), "%u", ki.max);
		expect_parse(ki.name, t, 0, ki.max);
		snprintf(t, sizeof(t), "0x%x", ki.max);
		expect_parse(ki.name, t, 0, ki.max);
		snprintf(t, sizeof(t), "0X%X", ki.min);
		expect_parse(ki.name, t, 0, ki.min);
		snprintf(t, sizeof(t), "%u", ki.def);
		expect_parse(ki.name, t, 0, ki.def);
		/* One outside each end. */
		if (ki.min > 0) {
			snprintf(t, sizeof(t), "%u", ki.min - 1);
			expect_parse(ki.name, t, -ERANGE, 0);
			snprintf(t, sizeof(t), "0x%x", ki.min - 1);
			expect_parse(ki.name, t, -ERANGE, 0);
		}
		snprintf(t, sizeof(t), "%llu", (unsigned long long)ki.max + 1);
		expect_parse(ki.name, t, -ERANGE, 0);
		snprintf(t, sizeof(t), "0x%llx", (unsigned long long)ki.max + 1);
		expect_parse(ki.name, t, -ERANGE, 0);
		expect_parse(ki.name, "4294967296", -ERANGE, 0);
		expect_parse(ki.name, "18446744073709551615", -ERANGE, 0);
		for (size_t g = 0; g < sizeof(garbage) / sizeof(garbage[0]); g++)
			expect_parse(ki.name, garbage[g], -EINVAL, 0);
		/* Names of another knob's vocabulary are garbage here. */
		if (strcmp(ki.name, "policy"))
			expect_parse(ki.name, "stream", -EINVAL, 0);
		if (strcmp(ki.name, "encap"))
			expect_parse(ki.name, "eth", -EINVAL, 0);
		if (strcmp(ki.name, "lat_mask")) {
			expect_parse(ki.name, "all", -EINVAL, 0);
			expect_parse(ki.name, "none", -EINVAL, 0);
			expect_parse(ki.name, "small", -EINVAL, 0);
		}
	}
	v = 7;
	CHECK(xw_knob_parse(-1, "1", &v) == -EINVAL && v == 7, "xw_knob_parse(-1)");
	CHECK(xw_knob_parse(xw_knob_count(), "1", &v) == -EINVAL && v == 7, "xw_knob_parse(count)");
	CHECK(xw_knob_parse(0, NULL, &v) == -EINVAL && v == 7, "xw_knob_parse(text NULL)");
	CHECK(xw_knob_parse(0, "1", NULL) == -EINVAL, "xw_knob_parse(value NULL)");
}

static void test_knob_words(void)
{
	char t[256];

	/* policy: names, any case, or numbers */
	expect_parse("policy", "every", 0, XW_POLICY_EVERY);
	expect_parse("policy", "TIMEOUT", 0, XW_POLICY_TIMEOUT);
	expect_parse("policy", "Marker", 0, XW_POLICY_MARKER);
	expect_parse("policy", "stream", 0, XW_POLICY_STREAM);
	expect_parse("policy", "AdApTiVe", 0, XW_POLICY_ADAPTIVE);
	expect_parse("policy", "3", 0, XW_POLICY_STREAM);
	expect_parse("policy", "0x4", 0, XW_POLICY_ADAPTIVE);
	expect_parse("policy", "5", -ERANGE, 0);
	expect_parse("policy", "streams", -EINVAL, 0);
	expect_parse("policy", "stream,marker", -EINVAL, 0);
	expect_parse("policy", "every ", -EINVAL, 0);

	/* encap: eth, udp, lists of them */
	expect_parse("encap", "eth", 0, XW_ENCAP_ETH);
	expect_parse("encap", "udp", 0, XW_ENCAP_UDP);
	expect_parse("encap", "eth,udp", 0, XW_ENCAP_ALL);
	expect_parse("encap", "udp,eth", 0, XW_ENCAP_ALL);
	expect_parse("encap", "ETH,Udp", 0, XW_ENCAP_ALL);
	expect_parse("encap", "eth,eth", 0, XW_ENCAP_ETH);
	expect_parse("encap", "3", 0, XW_ENCAP_ALL);
	expect_parse("encap", "0", -ERANGE, 0);
	expect_parse("encap", "4", -ERANGE, 0);
	expect_parse("encap", "eth,ip", -EINVAL, 0);
	expect_parse("encap", "ip", -EINVAL, 0);
	expect_parse("encap", "ethudp", -EINVAL, 0);

	/* lat_mask: packet type lists, all, none, numbers */
	expect_parse("lat_mask", "all", 0, 0xFFFFFFFFu);
	expect_parse("lat_mask", "ALL", 0, 0xFFFFFFFFu);
	expect_parse("lat_mask", "none", 0, 0);
	expect_parse("lat_mask", "None", 0, 0);
	expect_parse("lat_mask", "small", 0, 1u << XW_PKT_SMALL);
	expect_parse("lat_mask", "small,rndv", 0, (1u << XW_PKT_SMALL) | (1u << XW_PKT_RNDV));
	expect_parse("lat_mask", "PULL_REPLY,Close", 0,
		     (1u << XW_PKT_PULL_REPLY) | (1u << XW_PKT_CLOSE));
	t[0] = '\0';
	for (unsigned int ty = XW_PKT_SMALL; ty < XW_PKT_TYPE_MAX; ty++) {
		if (ty > XW_PKT_SMALL)
			strcat(t, ",");
		strcat(t, xw_pkt_type_name(ty));
	}
	expect_parse("lat_mask", t, 0, ((1u << XW_PKT_TYPE_MAX) - 1) & ~1u);
	for (unsigned int ty = XW_PKT_SMALL; ty < XW_PKT_TYPE_MAX; ty++)
		expect_parse("lat_mask", xw_pkt_type_name(ty), 0, 1u << ty);
	expect_parse("lat_mask", "0xff", 0, 0xFF);
	expect_parse("lat_mask", "small,bogus", -EINVAL, 0);
	expect_parse("lat_mask", "smal", -EINVAL, 0);

	/* numeric knobs */
	expect_parse("ethertype", "0x88b5", 0, 0x88B5);
	expect_parse("ethertype", "0x88B5", 0, 0x88B5);
	expect_parse("ethertype", "35000", 0, 35000);
	expect_parse("ethertype", "1535", -ERANGE, 0);
	expect_parse("udp_port", "49152", 0, 49152);
	expect_parse("udp_port", "0xc000", 0, 49152);
	expect_parse("udp_port", "0", -ERANGE, 0);
	expect_parse("udp_port", "65536", -ERANGE, 0);
	expect_parse("coalesce_frames", "0", -ERANGE, 0);
	expect_parse("coalesce_usecs", "10000000", 0, 10000000);
	expect_parse("coalesce_usecs", "10000001", -ERANGE, 0);
	expect_parse("session", "0xffffffff", 0, 0xFFFFFFFFu);
	expect_parse("session", "4294967295", 0, 0xFFFFFFFFu);
}

/* ---- names -------------------------------------------------------------- */

static void test_names(void)
{
	static const char *const policies[] = { "every", "timeout", "marker", "stream", "adaptive" };
	static const char *const reasons[] = { "none",	  "every",   "marker",  "stream",
					       "frames", "timeout", "watchdog" };
	static const char *const types[] = { "invalid", "small",  "medium",	   "rndv",
					     "pull",	"pull_reply", "notify",	   "ack",
					     "connect", "connect_reply", "close", "probe",
					     "probe_reply" };
	char up[32];

	CHECK(sizeof(policies) / sizeof(policies[0]) == XW_POLICY_MAX, "policy table");
	for (unsigned int p = 0; p < XW_POLICY_MAX; p++) {
		const char *n = xw_policy_name(p);

		CHECK(n && !strcmp(n, policies[p]), "xw_policy_name(%u) = %s", p, n ? n : "NULL");
		if (!n)
			continue;
		CHECK(xw_policy_parse(n) == (int)p, "xw_policy_parse(%s) = %d", n,
		      xw_policy_parse(n));
		for (size_t i = 0; i <= strlen(n) && i < sizeof(up); i++)
			up[i] = (char)(n[i] >= 'a' && n[i] <= 'z' ? n[i] - 32 : n[i]);
		CHECK(xw_policy_parse(up) == (int)p, "xw_policy_parse(%s) = %d", up,
		      xw_policy_parse(up));
	}
	CHECK(xw_policy_name(XW_POLICY_MAX) == NULL, "xw_policy_name(MAX)");
	CHECK(xw_policy_name(~0u) == NULL, "xw_policy_name(~0)");
	CHECK(xw_policy_parse(NULL) == -EINVAL, "xw_policy_parse(NULL)");
	CHECK(xw_policy_parse("") == -EINVAL, "xw_policy_parse(\"\")");
	CHECK(xw_policy_parse("bogus") == -EINVAL, "xw_policy_parse(bogus)");

	CHECK(sizeof(reasons) / sizeof(reasons[0]) == XW_WAKE_REASON_MAX, "reason table");
	for (unsigned int r = 0; r < XW_WAKE_REASON_MAX; r++) {
		const char *n = xw_wake_reason_name(r);

		CHECK(n && !strcmp(n, reasons[r]), "xw_wake_reason_name(%u) = %s", r,
		      n ? n : "NULL");
	}
	CHECK(xw_wake_reason_name(XW_WAKE_REASON_MAX) == NULL, "xw_wake_reason_name(MAX)");
	CHECK(xw_wake_reason_name(~0u) == NULL, "xw_wake_reason_name(~0)");

	CHECK(sizeof(types) / sizeof(types[0]) == XW_PKT_TYPE_MAX, "type table");
	for (unsigned int t = 0; t < XW_PKT_TYPE_MAX; t++) {
		const char *n = xw_pkt_type_name(t);

		CHECK(n && !strcmp(n, types[t]), "xw_pkt_type_name(%u) = %s", t, n ? n : "NULL");
	}
	CHECK(xw_pkt_type_name(XW_PKT_TYPE_MAX) == NULL, "xw_pkt_type_name(MAX)");
	CHECK(xw_pkt_type_name(255) == NULL, "xw_pkt_type_name(255)");
}

/* ---- statistics --------------------------------------------------------- */

static const struct {
	const char *name;
	size_t off;
} stat_fields[] = {
#define F(n, d) { #n, offsetof(struct xw_stats, n) },
	XW_STATS(F)
#undef F
};

static void test_stats(void)
{
	XW_OPTS(xw_stats, s);
	int n = xw_stat_count();

	CHECK(n == XW_STATS_NR, "xw_stat_count() = %d, XW_STATS_NR %d", n, XW_STATS_NR);
	CHECK(n == (int)(sizeof(stat_fields) / sizeof(stat_fields[0])), "stat table");
	/* The counters follow sz, one __u64 each, to the end of the struct. */
	CHECK(stat_fields[0].off == sizeof(__u64) &&
		      sizeof(s) == sizeof(__u64) + (size_t)XW_STATS_NR * sizeof(__u64),
	      "struct xw_stats: sz, then %d counters", XW_STATS_NR);
	for (int i = 0; i < XW_STATS_NR; i++) {
		__u64 v = 0x1000000000ULL + (__u64)i * 7;

		memcpy((char *)&s + stat_fields[i].off, &v, sizeof(v));
	}
	for (int i = 0; i < n; i++) {
		const char *name = xw_stat_name(i), *help = xw_stat_help(i);

		CHECK(name && *name, "xw_stat_name(%d)", i);
		CHECK(help && *help, "xw_stat_help(%d)", i);
		if (!name)
			continue;
		CHECK(!strcmp(name, stat_fields[i].name), "xw_stat_name(%d) = %s, field %s", i, name,
		      stat_fields[i].name);
		CHECK(stat_fields[i].off == stat_fields[0].off + (size_t)i * 8,
		      "counter %s at offset %zu", name, stat_fields[i].off);
		for (int j = 0; j < i; j++)
			CHECK(xw_stat_name(j) && strcmp(name, xw_stat_name(j)),
			      "counters %d and %d both named %s", j, i, name);
		CHECK(xw_stat_value(&s, i) == *(__u64 *)((char *)&s + stat_fields[i].off),
		      "xw_stat_value(%s)", name);
	}
	CHECK(xw_stat_value(&s, 0) == s.frames_passed, "xw_stat_value(0) is frames_passed");
	CHECK(xw_stat_value(&s, n - 1) == s.probes_gone, "last counter is probes_gone");
	CHECK(xw_stat_name(-1) == NULL && xw_stat_help(-1) == NULL, "stat -1");
	CHECK(xw_stat_name(n) == NULL && xw_stat_help(n) == NULL, "stat count");
	CHECK(xw_stat_name(INT_MAX) == NULL, "stat INT_MAX");
	CHECK(xw_stat_value(&s, -1) == 0 && xw_stat_value(&s, n) == 0, "xw_stat_value out of range");
	CHECK(xw_stat_value(NULL, 0) == 0, "xw_stat_value(NULL)");
	/* A caller's shorter struct (an older header): counters beyond its sz
	 * read 0. */
	s.sz = stat_fields[2].off;
	CHECK(xw_stat_value(&s, 1) == s.bytes_passed && xw_stat_value(&s, 2) == 0,
	      "xw_stat_value beyond sz");
}

/* ---- errors ------------------------------------------------------------- */

static void test_strerror(void)
{
	static const struct {
		int err;
		const char *word; /* the explanation must mention this */
	} expl[] = {
		{ EPERM, "CAP_" },
		{ ENODEV, "interface" },
		{ EBUSY, "use" },
		{ EAFNOSUPPORT, "AF_XDP" },
		{ EOPNOTSUPP, "generic" },
		{ EEXIST, "XDP program" },
		{ ENOENT, "not" },
		{ EINVAL, "invalid" },
		{ ERANGE, "range" },
	};
	const size_t n = sizeof(expl) / sizeof(expl[0]);
	const char *s[sizeof(expl) / sizeof(expl[0])];

	for (size_t i = 0; i < n; i++) {
		const char *neg = xw_strerror(-expl[i].err), *pos = xw_strerror(expl[i].err);

		s[i] = neg;
		CHECK(neg && *neg, "xw_strerror(-%d) empty", expl[i].err);
		CHECK(pos && neg && !strcmp(pos, neg), "xw_strerror(%d) != xw_strerror(-%d)",
		      expl[i].err, expl[i].err);
		CHECK(neg && strstr(neg, expl[i].word), "xw_strerror(-%d) = \"%s\" lacks \"%s\"",
		      expl[i].err, neg ? neg : "", expl[i].word);
		for (size_t j = 0; j < i; j++)
			CHECK(neg && s[j] && strcmp(neg, s[j]), "xw_strerror(-%d) == xw_strerror(-%d)",
			      expl[i].err, expl[j].err);
	}
	/* EPERM explains the privileges, beyond strerror's text. */
	CHECK(strlen(xw_strerror(-EPERM)) > strlen(strerror(EPERM)), "EPERM is not explained");
	CHECK(strstr(xw_strerror(-EPERM), "root"), "EPERM does not mention root");
	CHECK(xw_strerror(0) && *xw_strerror(0), "xw_strerror(0)");
	CHECK(strstr(xw_strerror(-EAFNOSUPPORT), "CONFIG_XDP_SOCKETS"),
	      "EAFNOSUPPORT does not name the kernel option");
	/* Unknown values: a non-empty string, never NULL. */
	CHECK(xw_strerror(9999) && *xw_strerror(9999), "xw_strerror(9999)");
	CHECK(xw_strerror(-9999) && *xw_strerror(-9999), "xw_strerror(-9999)");
	CHECK(xw_strerror(INT_MAX) && *xw_strerror(INT_MAX), "xw_strerror(INT_MAX)");
	CHECK(xw_strerror(-INT_MAX) && *xw_strerror(-INT_MAX), "xw_strerror(-INT_MAX)");
	/* A plain errno the library has no special text for. */
	CHECK(!strcmp(xw_strerror(-EIO), strerror(EIO)), "xw_strerror(-EIO) = %s", xw_strerror(-EIO));
}

/* ---- options and arguments of xw_iface__open ----------------------------- */

struct big_opts {
	struct xw_iface_opts o;
	unsigned char tail[24]; /* fields of a newer library */
};

static void test_open_args(void)
{
	struct xw_iface *ifc, *sentinel = (struct xw_iface *)&xwt_checks;
	struct xw_iface_opts o;
	struct big_opts big;
	int err;

	/* Valid options reach the interface lookup: -ENODEV. */
	ifc = sentinel;
	err = xw_iface__open(MISSING_IF, NULL, &ifc);
	CHECK(err == -ENODEV, "open(missing, NULL opts) = %d", err);
	CHECK(ifc == NULL, "*ifacep not cleared on failure");

	XW_OPTS(xw_iface_opts, xo, .mode = XW_MODE_GENERIC, .no_attach = true);
	CHECK(xo.sz == sizeof(struct xw_iface_opts) && xo.mode == XW_MODE_GENERIC && xo.no_attach &&
		      !xo.pin_root && !xo.encap && !xo.policy_set,
	      "XW_OPTS");
	err = xw_iface__open(MISSING_IF, &xo, &ifc);
	CHECK(err == -ENODEV, "open(missing, XW_OPTS) = %d", err);

	/* sz too small for even sz itself. */
	memset(&o, 0, sizeof(o));
	o.sz = 4;
	ifc = sentinel;
	err = xw_iface__open(MISSING_IF, &o, &ifc);
	CHECK(err == -EINVAL, "open(opts.sz = 4) = %d", err);
	CHECK(ifc == NULL, "*ifacep not cleared on opts.sz = 4");
	o.sz = 0;
	CHECK(xw_iface__open(MISSING_IF, &o, &ifc) == -EINVAL, "open(opts.sz = 0)");

	/* An older, shorter struct: fields past sz are not read. */
	memset(&o, 0, sizeof(o));
	o.sz = offsetof(struct xw_iface_opts, mode);
	o.mode = (enum xw_xdp_mode)99;
	err = xw_iface__open(MISSING_IF, &o, &ifc);
	CHECK(err == -ENODEV, "open(opts.sz = offsetof(mode), mode beyond sz) = %d", err);
	o.sz = sizeof(o);
	err = xw_iface__open(MISSING_IF, &o, &ifc);
	CHECK(err == -EINVAL, "open(mode 99) = %d", err);

	/* A newer, larger struct: a non-zero unknown tail is refused, a zero
	 * one is fine. */
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	err = xw_iface__open(MISSING_IF, &big.o, &ifc);
	CHECK(err == -ENODEV, "open(larger opts, zero tail) = %d", err);
	for (size_t i = 0; i < sizeof(big.tail); i += 7) {
		memset(big.tail, 0, sizeof(big.tail));
		big.tail[i] = 0x40;
		ifc = sentinel;
		err = xw_iface__open(MISSING_IF, &big.o, &ifc);
		CHECK(err == -EINVAL, "open(larger opts, tail[%zu] = 0x40) = %d", i, err);
		CHECK(ifc == NULL, "*ifacep not cleared (tail)");
	}
	/* ... but the tail is only looked at up to sz. */
	memset(big.tail, 0, sizeof(big.tail));
	big.tail[sizeof(big.tail) - 1] = 1;
	big.o.sz = sizeof(big) - 1;
	err = xw_iface__open(MISSING_IF, &big.o, &ifc);
	CHECK(err == -ENODEV, "open(larger opts, non-zero byte past sz) = %d", err);

	/* NULL and bad names. */
	CHECK(xw_iface__open(NULL, NULL, &ifc) == -EINVAL, "open(NULL name)");
	CHECK(xw_iface__open(MISSING_IF, NULL, NULL) == -EINVAL, "open(NULL ifacep)");
	CHECK(xw_iface__open(NULL, NULL, NULL) == -EINVAL, "open(NULL, NULL, NULL)");
	ifc = sentinel;
	CHECK(xw_iface__open("", NULL, &ifc) == -EINVAL, "open(\"\")");
	CHECK(ifc == NULL || ifc == sentinel, "open(\"\") wrote a handle");
	ifc = sentinel;
	err = xw_iface__open("xw-sixteen-chars", NULL, &ifc); /* IF_NAMESIZE - 1 is the max */
	CHECK(err == -EINVAL, "open(16-character name) = %d", err);
	CHECK(ifc == NULL, "*ifacep not cleared (long name)");
	err = xw_iface__open("xw-fifteen-char", NULL, &ifc);
	CHECK(err == -ENODEV, "open(15-character name) = %d", err);
	err = xw_iface__open("xw-a-very-long-interface-name-indeed", NULL, &ifc);
	CHECK(err == -EINVAL, "open(36-character name) = %d", err);
	err = xw_iface__open("xw/0", NULL, &ifc);
	CHECK(err == -EINVAL, "open(\"xw/0\") = %d", err);
	err = xw_iface__open("../lo", NULL, &ifc);
	CHECK(err == -EINVAL, "open(\"../lo\") = %d", err);
	err = xw_iface__open("/", NULL, &ifc);
	CHECK(err == -EINVAL, "open(\"/\") = %d", err);

	/* xw_detach checks its arguments the same way. */
	CHECK(xw_detach(NULL, NULL) == -EINVAL, "xw_detach(NULL)");
	CHECK(xw_detach("", NULL) == -EINVAL, "xw_detach(\"\")");
	CHECK(xw_detach("xw/0", NULL) == -EINVAL, "xw_detach(xw/0)");
	CHECK(xw_detach("xw-sixteen-chars", NULL) == -EINVAL, "xw_detach(long name)");
	CHECK(xw_detach(MISSING_IF, NULL) == -ENODEV, "xw_detach(missing) = %d",
	      xw_detach(MISSING_IF, NULL));
}

static void test_null_iface(void)
{
	struct xw_ep_entry e;
	XW_OPTS(xw_stats, s);
	__u32 v = 5;

	CHECK(xw_iface__name(NULL) == NULL, "name(NULL)");
	CHECK(xw_iface__pin_dir(NULL) == NULL, "pin_dir(NULL)");
	CHECK(xw_iface__ifindex(NULL) == -EINVAL, "ifindex(NULL)");
	CHECK(xw_iface__mode(NULL) == -EINVAL, "mode(NULL)");
	CHECK(xw_iface__multiprog(NULL) == -EINVAL, "multiprog(NULL)");
	CHECK(xw_iface__prog_id(NULL) == 0, "prog_id(NULL)");
	CHECK(xw_iface__map_fd(NULL, "stats") == -EINVAL, "map_fd(NULL)");
	CHECK(xw_iface__map_fd(NULL, NULL) == -EINVAL, "map_fd(NULL, NULL)");
	CHECK(xw_iface__set_knob(NULL, "policy", 0, 1) == -EINVAL, "set_knob(NULL)");
	CHECK(xw_iface__set_knob(NULL, "bogus", 0, 1) == -EINVAL, "set_knob(NULL, bogus)");
	CHECK(xw_iface__get_knob(NULL, "policy", 0, &v) == -EINVAL && v == 5, "get_knob(NULL)");
	CHECK(xw_iface__stats(NULL, XW_STATS_ALL, &s) == -EINVAL, "stats(NULL)");
	CHECK(xw_iface__endpoint(NULL, 0, &e) == -EINVAL, "endpoint(NULL)");
	CHECK(xw_iface__detach(NULL) == -EINVAL, "detach(NULL)");
	xw_iface__close(NULL);
	CHECK(1, "close(NULL) returned");
}

/* ---- logging ------------------------------------------------------------ */

struct log_seen {
	int n;
	int errors;
	enum xw_log_level level;
	char last[512];
	int newline; /* a message ended in '\n' */
};

static void log_cb(enum xw_log_level level, const char *msg, void *ctx)
{
	struct log_seen *l = ctx;
	size_t len = strlen(msg);

	l->n++;
	if (level == XW_LOG_ERROR)
		l->errors++;
	l->level = level;
	snprintf(l->last, sizeof(l->last), "%s", msg);
	if (len && msg[len - 1] == '\n')
		l->newline = 1;
}

/* Failing calls that log an error when a callback is installed. */
static void failing_calls(void)
{
	struct xw_iface *ifc;
	struct xw_iface_opts o;
	struct big_opts big;

	xw_iface__open(MISSING_IF, NULL, &ifc);
	memset(&o, 0, sizeof(o));
	o.sz = 4;
	xw_iface__open(MISSING_IF, &o, &ifc);
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	big.tail[3] = 1;
	xw_iface__open(MISSING_IF, &big.o, &ifc);
	xw_detach(MISSING_IF, NULL);
	xw_iface__open("xw/0", NULL, &ifc);
}

/* Run failing_calls() with fds 1 and 2 on a temporary file; returns how many
 * bytes were written to them (-1 on a setup error). */
static long output_of_failing_calls(void)
{
	char path[] = "/tmp/xw-test-api.XXXXXX";
	int fd, save1, save2;
	struct stat st;

	fflush(stdout);
	fflush(stderr);
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	unlink(path);
	save1 = dup(1);
	save2 = dup(2);
	if (save1 < 0 || save2 < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0) {
		close(fd);
		return -1;
	}
	failing_calls();
	fflush(stdout);
	fflush(stderr);
	dup2(save1, 1);
	dup2(save2, 2);
	close(save1);
	close(save2);
	if (fstat(fd, &st)) {
		close(fd);
		return -1;
	}
	if (st.st_size > 0) {
		char buf[512];
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

		buf[n > 0 ? n : 0] = '\0';
		fprintf(stderr, "library printed: %s\n", buf);
	}
	close(fd);
	return (long)st.st_size;
}

static void test_logging(void)
{
	struct log_seen l = { 0 };
	struct xw_iface_opts o;
	struct xw_iface *ifc;
	long out;

	/* Nothing installed yet (the default): silent. */
	out = output_of_failing_calls();
	CHECK(out == 0, "the library printed %ld bytes before any xw_set_log()", out);

	/* A callback receives the error, one line, with the interface. */
	xw_set_log(log_cb, &l, XW_LOG_DEBUG);
	CHECK(xw_iface__open(MISSING_IF, NULL, &ifc) == -ENODEV, "open(missing)");
	CHECK(l.n >= 1 && l.errors >= 1, "no error message delivered (%d messages)", l.n);
	CHECK(strstr(l.last, MISSING_IF), "message \"%s\" does not name the interface", l.last);
	CHECK(!l.newline, "message ends in a newline");

	/* Options errors explain themselves. */
	memset(&l, 0, sizeof(l));
	memset(&o, 0, sizeof(o));
	o.sz = 4;
	CHECK(xw_iface__open(MISSING_IF, &o, &ifc) == -EINVAL, "open(sz 4)");
	CHECK(l.errors == 1 && strstr(l.last, "sz"), "sz message: \"%s\" (%d)", l.last, l.errors);

	/* Errors are delivered at max_level ERROR too. */
	memset(&l, 0, sizeof(l));
	xw_set_log(log_cb, &l, XW_LOG_ERROR);
	xw_iface__open(MISSING_IF, NULL, &ifc);
	CHECK(l.errors == 1 && l.level == XW_LOG_ERROR, "error at max_level ERROR: %d", l.errors);

	/* Removed: nothing delivered, nothing printed. */
	memset(&l, 0, sizeof(l));
	xw_set_log(NULL, NULL, XW_LOG_DEBUG);
	out = output_of_failing_calls();
	CHECK(out == 0, "the library printed %ld bytes with no log callback", out);
	CHECK(l.n == 0, "a removed callback still got %d messages", l.n);

	/* Installed again and removed again with max_level ERROR. */
	xw_set_log(log_cb, &l, XW_LOG_DEBUG);
	failing_calls();
	CHECK(l.n >= 3, "re-installed callback got %d messages", l.n);
	xw_set_log(NULL, &l, XW_LOG_ERROR);
	memset(&l, 0, sizeof(l));
	out = output_of_failing_calls();
	CHECK(out == 0 && l.n == 0, "printed %ld bytes / %d messages after removal", out, l.n);
}

int main(void)
{
	/* First: the library must be silent by default. */
	test_logging();
	test_knob_metadata();
	test_knob_numbers();
	test_knob_words();
	test_names();
	test_stats();
	test_strerror();
	test_open_args();
	test_null_iface();
	CHECK(!strcmp(xw_version(), "0.1.0") || strchr(xw_version(), '.'), "xw_version() = %s",
	      xw_version());
	return xwt_done();
}
