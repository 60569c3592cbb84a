// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * A program written against the installed libxdpwake only: <xdpwake.h> found
 * through `pkg-config --cflags libxdpwake`, linked with `--libs` (shared) or
 * `--static --libs` (static).  Built and run by tests/test_install.sh with
 * gcc -std=c11 -Wall -Wextra -Werror; it must compile without <linux/bpf.h>.
 * Needs no privileges and attaches nothing.  Exit 0 when every check holds; otherwise prints what failed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <xdpwake.h>

/* The installed headers need no <linux/bpf.h> (the BPF map layouts with
 * struct bpf_timer are in the library's internal bpf/xdpwake_maps.h). */
#if defined(__LINUX_BPF_H__) || defined(_UAPI__LINUX_BPF_H__)
#error "<xdpwake.h> pulls in <linux/bpf.h>"
#endif
#ifdef XDPWAKE_MAPS_H
#error "<xdpwake.h> pulls in the internal xdpwake_maps.h"
#endif

static int failures;

#define EXPECT(cond, ...)                                              \
	do {                                                           \
		if (!(cond)) {                                         \
			failures++;                                    \
			fprintf(stderr, "consumer: FAIL %s: ", #cond); \
			fprintf(stderr, __VA_ARGS__);                  \
			fputc('\n', stderr);                           \
		}                                                      \
	} while (0)

static int mentions_privileges(const char *s)
{
	static const char *const words[] = { "CAP_", "root", "privilege", "permission",
					     "permitted" };

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(s, words[i]))
			return 1;
	return 0;
}

int main(void)
{
	struct xw_iface *ifc = (struct xw_iface *)&failures; /* must be reset to NULL */
	struct xw_knob_info ki;
	const char *v = xw_version(), *e;
	int n, err;

	EXPECT(v && *v, "xw_version() is empty");
	EXPECT(v && strchr(v, '.'), "xw_version() \"%s\" is not MAJOR.MINOR.PATCH", v ? v : "");

	e = xw_strerror(-EPERM);
	EXPECT(e && *e, "xw_strerror(-EPERM) is empty");
	EXPECT(e && mentions_privileges(e), "xw_strerror(-EPERM) \"%s\" does not mention privileges",
	       e ? e : "");

	n = xw_knob_count();
	EXPECT(n > 0, "xw_knob_count() = %d", n);
	for (int i = 0; i < n; i++) {
		memset(&ki, 0, sizeof(ki));
		ki.sz = sizeof(ki);
		err = xw_knob_info(i, &ki);
		EXPECT(err == 0, "xw_knob_info(%d) = %d", i, err);
		EXPECT(ki.name && *ki.name, "knob %d has no name", i);
		EXPECT(ki.help && *ki.help, "knob %d has no help", i);
		EXPECT(ki.min <= ki.max, "knob %d: min %u > max %u", i, ki.min, ki.max);
		EXPECT(ki.def >= ki.min && ki.def <= ki.max, "knob %d: default out of range", i);
		if (ki.name)
			EXPECT(xw_knob_find(ki.name) == i, "xw_knob_find(%s) != %d", ki.name, i);
	}
	EXPECT(xw_knob_info(n, &ki) == -ERANGE, "xw_knob_info(count) does not fail");

	EXPECT(xw_policy_parse("stream") == XW_POLICY_STREAM, "xw_policy_parse(stream) = %d",
	       xw_policy_parse("stream"));
	EXPECT(xw_policy_name(XW_POLICY_STREAM) && !strcmp(xw_policy_name(XW_POLICY_STREAM), "stream"),
	       "xw_policy_name(XW_POLICY_STREAM) is wrong");
	EXPECT(xw_policy_name(XW_POLICY_MAX) == NULL, "xw_policy_name(XW_POLICY_MAX) is not NULL");

	EXPECT(xw_stat_count() == XW_STATS_NR, "xw_stat_count() = %d, XW_STATS_NR = %d",
	       xw_stat_count(), XW_STATS_NR);
	EXPECT(xw_stat_name(0) && !strcmp(xw_stat_name(0), "frames_passed"), "xw_stat_name(0)");

	EXPECT(sizeof(struct xw_hdr) == 64, "sizeof(struct xw_hdr) = %zu", sizeof(struct xw_hdr));
	EXPECT(XW_HDR_LEN == 64, "XW_HDR_LEN = %d", XW_HDR_LEN);

	/* Options through the public macro; nothing is attached: the
	 * interface does not exist. */
	XW_OPTS(xw_iface_opts, opts, .mode = XW_MODE_GENERIC, .no_attach = true);
	EXPECT(opts.sz == sizeof(struct xw_iface_opts), "XW_OPTS did not set sz");
	EXPECT(opts.mode == XW_MODE_GENERIC && opts.no_attach && !opts.pin_root && !opts.encap,
	       "XW_OPTS did not set/zero the fields");
	err = xw_iface__open("xw-no-such-if0", &opts, &ifc);
	EXPECT(err == -ENODEV, "xw_iface__open(missing interface) = %d (%s), want -ENODEV", err,
	       xw_strerror(err));
	EXPECT(ifc == NULL, "xw_iface__open left *ifacep set on failure");
	if (!err && ifc)
		xw_iface__close(ifc);

	if (failures) {
		fprintf(stderr, "consumer (C): %d check(s) failed\n", failures);
		return 1;
	}
	printf("consumer (C): libxdpwake %s, %d knobs, %d counters: ok\n", v, n, xw_stat_count());
	return 0;
}
