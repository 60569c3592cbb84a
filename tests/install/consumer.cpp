// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The C++ twin of consumer.c: the installed <xdpwake.h> must compile as
 * C++17 under g++ -Wall -Wextra -Werror (extern "C", static_assert in
 * xdpwake/proto.h) and link against the installed library.
 *
 * XW_OPTS() relies on GNU C statement expressions and compound literals with
 * designated initializers.  g++ accepts those as GNU extensions, but with
 * -Wextra it warns (-Wmissing-field-initializers) about every member the
 * designated initializer leaves out, which -Werror turns into an error; so
 * the options used for the call are built by hand (zeroed, sz = sizeof),
 * and XW_OPTS() itself is exercised with that one warning switched off.
 * Needs no privileges and attaches nothing.
 */
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <xdpwake.h>

// As in consumer.c: no <linux/bpf.h>, no internal bpf/xdpwake_maps.h.
#if defined(__LINUX_BPF_H__) || defined(_UAPI__LINUX_BPF_H__)
#error "<xdpwake.h> pulls in <linux/bpf.h>"
#endif
#ifdef XDPWAKE_MAPS_H
#error "<xdpwake.h> pulls in the internal xdpwake_maps.h"
#endif

static int failures;

#define EXPECT(cond, ...)                                                \
	do {                                                             \
		if (!(cond)) {                                           \
			failures++;                                      \
			std::fprintf(stderr, "consumer++: FAIL %s: ", #cond); \
			std::fprintf(stderr, __VA_ARGS__);               \
			std::fputc('\n', stderr);                        \
		}                                                        \
	} while (0)

static_assert(sizeof(struct xw_hdr) == 64, "struct xw_hdr is 64 bytes");

static bool mentions_privileges(const char *s)
{
	static const char *const words[] = { "CAP_", "root", "privilege", "permission",
					     "permitted" };

	for (const char *w : words)
		if (std::strstr(s, w))
			return true;
	return false;
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static struct xw_iface_opts macro_opts()
{
	XW_OPTS(xw_iface_opts, o, .mode = XW_MODE_GENERIC, .no_attach = true);
	return o;
}
#pragma GCC diagnostic pop

int main()
{
	struct xw_iface *ifc = reinterpret_cast<struct xw_iface *>(&failures);
	struct xw_knob_info ki;
	const char *v = xw_version(), *e;
	int n, err;

	EXPECT(v && *v && std::strchr(v, '.'), "xw_version() is not MAJOR.MINOR.PATCH");

	e = xw_strerror(-EPERM);
	EXPECT(e && *e, "xw_strerror(-EPERM) is empty");
	EXPECT(e && mentions_privileges(e), "xw_strerror(-EPERM) \"%s\" does not mention privileges",
	       e ? e : "");

	n = xw_knob_count();
	EXPECT(n > 0, "xw_knob_count() = %d", n);
	for (int i = 0; i < n; i++) {
		std::memset(&ki, 0, sizeof(ki));
		ki.sz = sizeof(ki);
		err = xw_knob_info(i, &ki);
		EXPECT(err == 0, "xw_knob_info(%d) = %d", i, err);
		EXPECT(ki.name && *ki.name && ki.help && *ki.help, "knob %d: name/help missing", i);
		EXPECT(ki.min <= ki.max, "knob %d: min > max", i);
		if (ki.name)
			EXPECT(xw_knob_find(ki.name) == i, "xw_knob_find(%s) != %d", ki.name, i);
	}

	EXPECT(xw_policy_parse("stream") == XW_POLICY_STREAM, "xw_policy_parse(stream) = %d",
	       xw_policy_parse("stream"));
	EXPECT(xw_policy_name(XW_POLICY_STREAM) &&
		       !std::strcmp(xw_policy_name(XW_POLICY_STREAM), "stream"),
	       "xw_policy_name(XW_POLICY_STREAM) is wrong");
	EXPECT(xw_stat_count() == XW_STATS_NR, "xw_stat_count() = %d, XW_STATS_NR = %d",
	       xw_stat_count(), XW_STATS_NR);

	/* XW_OPTS as a GNU extension in C++. */
	struct xw_iface_opts mo = macro_opts();
	EXPECT(mo.sz == sizeof(struct xw_iface_opts), "XW_OPTS (C++) did not set sz");
	EXPECT(mo.mode == XW_MODE_GENERIC && mo.no_attach && !mo.pin_root && !mo.encap,
	       "XW_OPTS (C++) did not set/zero the fields");

	/* The portable C++ way: zero the struct, set sz. */
	struct xw_iface_opts opts;
	std::memset(&opts, 0, sizeof(opts));
	opts.sz = sizeof(opts);
	opts.mode = XW_MODE_GENERIC;
	opts.no_attach = true;
	err = xw_iface__open("xw-no-such-if0", &opts, &ifc);
	EXPECT(err == -ENODEV, "xw_iface__open(missing interface) = %d (%s), want -ENODEV", err,
	       xw_strerror(err));
	EXPECT(ifc == nullptr, "xw_iface__open left *ifacep set on failure");
	if (!err && ifc)
		xw_iface__close(ifc);

	if (failures) {
		std::fprintf(stderr, "consumer (C++): %d check(s) failed\n", failures);
		return 1;
	}
	std::printf("consumer (C++): libxdpwake %s, %d knobs, %d counters: ok\n", v, n,
		    xw_stat_count());
	return 0;
}
