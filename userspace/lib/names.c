// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Names of policies, reasons, packet types, knobs and counters. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>

#include "internal.h"

static const char *const policy_names[XW_POLICY_MAX] = {
	[XW_POLICY_EVERY] = "every",   [XW_POLICY_TIMEOUT] = "timeout",
	[XW_POLICY_MARKER] = "marker", [XW_POLICY_STREAM] = "stream",
	[XW_POLICY_ADAPTIVE] = "adaptive",
};

static const char *const reason_names[XW_WAKE_REASON_MAX] = {
	[XW_WAKE_NONE] = "none",	 [XW_WAKE_EVERY] = "every",
	[XW_WAKE_MARKER] = "marker",	 [XW_WAKE_STREAM] = "stream",
	[XW_WAKE_FRAMES] = "frames",	 [XW_WAKE_TIMEOUT] = "timeout",
	[XW_WAKE_WATCHDOG] = "watchdog",
};

static const char *const type_names[XW_PKT_TYPE_MAX] = {
	[XW_PKT_INVALID] = "invalid",	     [XW_PKT_SMALL] = "small",
	[XW_PKT_MEDIUM] = "medium",	     [XW_PKT_RNDV] = "rndv",
	[XW_PKT_PULL] = "pull",		     [XW_PKT_PULL_REPLY] = "pull_reply",
	[XW_PKT_NOTIFY] = "notify",	     [XW_PKT_ACK] = "ack",
	[XW_PKT_CONNECT] = "connect",	     [XW_PKT_CONNECT_REPLY] = "connect_reply",
	[XW_PKT_CLOSE] = "close",
	[XW_PKT_PROBE] = "probe",
	[XW_PKT_PROBE_REPLY] = "probe_reply",
};

XW_API const char *xw_policy_name(unsigned int policy)
{
	return policy < XW_POLICY_MAX ? policy_names[policy] : NULL;
}

XW_API int xw_policy_parse(const char *name)
{
	if (!name)
		return -EINVAL;
	for (int i = 0; i < XW_POLICY_MAX; i++)
		if (!strcasecmp(name, policy_names[i]))
			return i;
	return -EINVAL;
}

XW_API const char *xw_wake_reason_name(unsigned int reason)
{
	return reason < XW_WAKE_REASON_MAX ? reason_names[reason] : NULL;
}

XW_API const char *xw_pkt_type_name(unsigned int type)
{
	return type < XW_PKT_TYPE_MAX ? type_names[type] : NULL;
}

/* ---- knobs ---------------------------------------------------------- */

static const struct xw_knob_info knobs[] = {
#define XWI__KNOB_INFO(n, scope, d, lo, hi)                                          \
	{ .sz = sizeof(struct xw_knob_info), .name = #n,                             \
	  .per_endpoint = (scope) == XW_SCOPE_EP, .def = (d), .min = (lo), .max = (hi) },
	XW_KNOBS(XWI__KNOB_INFO)
#undef XWI__KNOB_INFO
};

static const char *const knob_help[XWI_KNOB_NR] = {
	[XWI_KNOB_policy] = "wake policy: every, timeout, marker, stream, adaptive",
	[XWI_KNOB_coalesce_usecs] = "timeout rule and deferral bound, microseconds",
	[XWI_KNOB_coalesce_frames] = "timeout rule: wake after this many pending frames",
	[XWI_KNOB_stream_gap_usecs] =
		"stream: also defer a LAT wake while frames arrive less than this apart (0: MORE hint only)",
	[XWI_KNOB_lat_mask] = "packet types whose LAT flag is honoured (bit = 1 << type)",
	[XWI_KNOB_adapt_enter_usecs] = "adaptive: switch to stream when the mean gap falls below",
	[XWI_KNOB_adapt_exit_usecs] = "adaptive: switch back to marker when the mean gap exceeds",
	[XWI_KNOB_session] = "drop frames whose session differs (0: no check)",
	[XWI_KNOB_watchdog_usecs] = "handle unconsumed frames by the watchdog thread this long after they arrived (0: off)",
	[XWI_KNOB_encap] = "encapsulations accepted: eth, udp, or eth,udp",
	[XWI_KNOB_ethertype] = "EtherType of Ethernet encapsulation",
	[XWI_KNOB_udp_port] = "UDP destination port of UDP encapsulation",
	[XWI_KNOB_auto_detach] =
		"1: attached by an endpoint, detached when the last endpoint closes (0: stays)",
};

static const char *const other_maps[] = {
#define XWI__MAP_NAME(n) #n,
	XWI_MAPS(XWI__MAP_NAME)
#undef XWI__MAP_NAME
};

const char *xwi_map_name(int i)
{
	if (i < 0 || i >= XWI_MAP_NR)
		return NULL;
	if (i < XWI_KNOB_NR)
		return knobs[i].name;
	return other_maps[i - XWI_KNOB_NR];
}

XW_API int xw_knob_count(void)
{
	return XWI_KNOB_NR;
}

XW_API int xw_knob_info(int idx, struct xw_knob_info *info)
{
	struct xw_knob_info ki;

	if (!info)
		return -EINVAL;
	if (idx < 0 || idx >= XWI_KNOB_NR)
		return -ERANGE;
	ki = knobs[idx];
	ki.help = knob_help[idx];
	return XWI_OUT_COPY(info, &ki, xw_knob_info);
}

XW_API int xw_knob_find(const char *name)
{
	if (!name)
		return -EINVAL;
	for (int i = 0; i < XWI_KNOB_NR; i++)
		if (!strcmp(name, knobs[i].name))
			return i;
	return -ENOENT;
}

/* Decimal or 0x-prefixed hex, digits only (no sign, space or octal). */
static int parse_u32(const char *text, unsigned long long *v)
{
	int base = 10;
	char *end;

	if ((text[0] == '0') && (text[1] == 'x' || text[1] == 'X')) {
		base = 16;
		text += 2;
		if (!isxdigit((unsigned char)*text))
			return -EINVAL;
	} else if (*text < '0' || *text > '9') {
		return -EINVAL;
	}
	errno = 0;
	*v = strtoull(text, &end, base);
	if (errno || *end)
		return -EINVAL;
	return 0;
}

/* Comma-separated list of names from @names (bit i = names[i]). */
static int parse_list(const char *text, const char *const *names, int n, __u32 *out)
{
	char buf[256], *tok, *save;
	__u32 v = 0;

	size_t len = strlen(text);

	/* No empty list, no empty element. */
	if (!len || len >= sizeof(buf) || text[0] == ',' || text[len - 1] == ',' ||
	    strstr(text, ",,"))
		return -EINVAL;
	strcpy(buf, text);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int i;

		for (i = 0; i < n; i++)
			if (names[i] && !strcasecmp(tok, names[i]))
				break;
		if (i == n)
			return -EINVAL;
		v |= 1u << i;
	}
	*out = v;
	return 0;
}

XW_API int xw_knob_parse(int idx, const char *text, __u32 *value)
{
	unsigned long long v;
	__u32 u;
	int err;

	if (idx < 0 || idx >= XWI_KNOB_NR || !text || !value)
		return -EINVAL;
	if (parse_u32(text, &v) == 0) {
		/* a number */
	} else if (idx == XWI_KNOB_policy) {
		err = xw_policy_parse(text);
		if (err < 0)
			return err;
		v = (unsigned int)err;
	} else if (idx == XWI_KNOB_encap) {
		static const char *const encaps[] = { "eth", "udp" };

		if (parse_list(text, encaps, 2, &u))
			return -EINVAL;
		v = u;
	} else if (idx == XWI_KNOB_lat_mask) {
		if (!strcasecmp(text, "all"))
			v = 0xFFFFFFFFu;
		else if (!strcasecmp(text, "none"))
			v = 0;
		else if (parse_list(text, type_names, XW_PKT_TYPE_MAX, &u))
			return -EINVAL;
		else
			v = u;
	} else {
		return -EINVAL;
	}
	if (v < knobs[idx].min || v > knobs[idx].max)
		return -ERANGE;
	*value = (__u32)v;
	return 0;
}

/* ---- statistics ----------------------------------------------------- */

static const char *const stat_names[] = {
#define XWI__STAT_NAME(n, d) #n,
	XW_STATS(XWI__STAT_NAME)
#undef XWI__STAT_NAME
};
static const char *const stat_help[] = {
#define XWI__STAT_HELP(n, d) d,
	XW_STATS(XWI__STAT_HELP)
#undef XWI__STAT_HELP
};

XW_API int xw_stat_count(void)
{
	return XW_STATS_NR;
}

XW_API const char *xw_stat_name(int idx)
{
	return idx >= 0 && idx < XW_STATS_NR ? stat_names[idx] : NULL;
}

XW_API const char *xw_stat_help(int idx)
{
	return idx >= 0 && idx < XW_STATS_NR ? stat_help[idx] : NULL;
}

XW_API __u64 xw_stat_value(const struct xw_stats *s, int idx)
{
	size_t off = XWI_STATS_OFF + (size_t)idx * sizeof(__u64);
	__u64 v;

	if (!s || idx < 0 || idx >= XW_STATS_NR || off + sizeof(v) > s->sz)
		return 0;
	memcpy(&v, (const char *)s + off, sizeof(v));
	return v;
}
