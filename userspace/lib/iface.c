// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The wake engine on one interface: load the embedded skeleton through
 * libxdp, attach, pin the maps under <pin_root>/<ifname>, or open the pins
 * of a program that is attached already; knobs and statistics.
 */
#include <dirent.h>
#include <fcntl.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "internal.h"
#include "port.h"
#include "xdpwake.skel.h"

#define XWI_PROG_NAME "xw_xdp"
#define XWI_PROG_PIN "prog"
/* The wake decision for frames from peers on this host (xw_local in
 * bpf/xdpwake.bpf.c), pinned next to the maps for every process. */
#define XWI_LOCAL_PROG_NAME "xw_local"
#define XWI_LOCAL_PIN "local"
#define XWI_LOCK_FILE ".lock"
#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif

static int lock_dir_op(const char *dir, int op);
static void unlock_dir(int fd);

static int is_bpffs(const char *path)
{
	struct statfs st;

	if (statfs(path, &st))
		return -errno;
	return st.f_type == (typeof(st.f_type))BPF_FS_MAGIC;
}

/* Make sure @root lies on a bpffs; mount one on /sys/fs/bpf if nothing is
 * mounted there (as libxdp and xdp-loader do). */
static int ensure_bpffs(const char *root)
{
	char probe[PATH_MAX];
	char *slash;
	int r;

	snprintf(probe, sizeof(probe), "%s", root);
	/* Walk up to the nearest existing directory. */
	while ((r = is_bpffs(probe)) == -ENOENT) {
		slash = strrchr(probe, '/');
		if (!slash || slash == probe)
			return -ENOENT;
		*slash = '\0';
	}
	if (r < 0) {
		xwi_err("%s: %s%s", probe, strerror(-r),
			r == -EACCES || r == -EPERM ? " (the BPF filesystem is for root only: run "
						      "as root)" : "");
		return r == -EACCES ? -EPERM : r;
	}
	if (r == 1)
		return 0;
	/* The walk stopped at /sys/fs/bpf, not on a bpffs: mount one. */
	if (!strcmp(probe, "/sys/fs/bpf")) {
		/* Processes of one mount namespace (ranks started under one
		 * `ip netns exec`) that get here together must not mount one
		 * bpffs each: stacked, the later mount hides the pins and
		 * directories made in the earlier one (-ENOENT, or a program
		 * attached without pins).  Whoever holds the lock on the
		 * directory looks again (another may have mounted since the
		 * walk above) before mounting. */
		int lock = lock_dir_op(probe, LOCK_EX);

		if (lock < 0) {
			xwi_err("cannot lock /sys/fs/bpf to mount bpffs: %s", strerror(-lock));
			return lock;
		}
		r = is_bpffs(probe);
		if (r == 0 && mount("bpf", probe, "bpf", 0, "mode=0700")) {
			r = -errno;
			xwi_err("cannot mount bpffs on /sys/fs/bpf: %s", strerror(errno));
		} else if (r == 0) {
			xwi_info("mounted bpffs on /sys/fs/bpf");
		} else if (r < 0) {
			xwi_err("/sys/fs/bpf: %s", strerror(-r));
		}
		unlock_dir(lock);
		return r < 0 ? r : 0;
	}
	xwi_err("%s is not on a BPF filesystem (mount -t bpf bpf <dir>)", root);
	return -EXDEV;
}

static int mkdir_p(const char *path)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

/* @op LOCK_EX (attach, detach) or LOCK_SH (open the pins of an attached
 * program: openers starting together do it side by side). */
static int lock_dir_op(const char *dir, int op)
{
	int fd;

	/* bpffs holds only BPF objects, so lock the directory itself. */
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (flock(fd, op)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

static int lock_dir(const char *dir)
{
	return lock_dir_op(dir, LOCK_EX);
}

static void unlock_dir(int fd)
{
	if (fd >= 0) {
		flock(fd, LOCK_UN);
		close(fd);
	}
}

static int pin_path(char *buf, size_t len, const char *dir, const char *name)
{
	if ((size_t)snprintf(buf, len, "%s/%s", dir, name) >= len)
		return -ENAMETOOLONG;
	return 0;
}

static void unpin_all(const char *dir)
{
	char p[PATH_MAX];

	for (int i = 0; i < XWI_MAP_NR; i++)
		if (!pin_path(p, sizeof(p), dir, xwi_map_name(i)))
			unlink(p);
	if (!pin_path(p, sizeof(p), dir, XWI_PROG_PIN))
		unlink(p);
	if (!pin_path(p, sizeof(p), dir, XWI_LOCAL_PIN))
		unlink(p);
}

static __u32 fd_prog_id(int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.id;
}

/*
 * Our program on @ifindex: *idp is its id (0: none) and how it is attached.
 * Returns 0, or a negative errno when the interface cannot be queried
 * (-EPERM without privileges).
 */
static int find_attached(int ifindex, __u32 *idp, int *mode, int *multi,
			 struct xdp_program **progp)
{
	struct xdp_multiprog *mp;
	struct xdp_program *p = NULL;
	int err;

	*idp = 0;
	/* The common case, a program attached alone, without libxdp: its
	 * lookups by id (1.3.x) leak the fd they open. */
	{
		LIBBPF_OPTS(bpf_xdp_query_opts, q);
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd;

		err = bpf_xdp_query(ifindex, 0, &q);
		if (err)
			return err == -ENOENT ? 0 : err;
		if (!q.prog_id)
			return 0;
		fd = bpf_prog_get_fd_by_id(q.prog_id);
		if (fd < 0)
			return -errno;
		err = bpf_obj_get_info_by_fd(fd, &info, &len);
		close(fd);
		if (err)
			return err;
		if (!strcmp(info.name, XWI_PROG_NAME)) {
			*idp = q.prog_id;
			if (mode)
				*mode = q.attach_mode == XDP_ATTACHED_SKB ? XW_MODE_GENERIC
									 : XW_MODE_NATIVE;
			if (multi)
				*multi = 0;
			if (progp)
				*progp = NULL;
			return 0;
		}
		if (strcmp(info.name, "xdp_dispatcher"))
			return 0;
	}
	mp = xdp_multiprog__get_from_ifindex(ifindex);
	err = libxdp_get_error(mp);
	if (err)
		return err == -ENOENT ? 0 : err;
	if (xdp_multiprog__is_legacy(mp)) {
		p = xdp_multiprog__main_prog(mp);
		if (p && strcmp(xdp_program__name(p), XWI_PROG_NAME))
			p = NULL;
	} else {
		while ((p = xdp_multiprog__next_prog(p, mp)))
			if (!strcmp(xdp_program__name(p), XWI_PROG_NAME))
				break;
	}
	if (p) {
		*idp = xdp_program__id(p);
		if (mode)
			*mode = xdp_multiprog__attach_mode(mp) == XDP_MODE_SKB ? XW_MODE_GENERIC
										: XW_MODE_NATIVE;
		if (multi)
			*multi = !xdp_multiprog__is_legacy(mp);
		if (progp) {
			/* A fresh handle that outlives the multiprog. */
			*progp = xdp_program__from_id(*idp);
			if (libxdp_get_error(*progp))
				*progp = NULL;
		}
	}
	xdp_multiprog__close(mp);
	return 0;
}

/* The local wake program of a program attached by another handle; one
 * attached by a library without it has none (local frames are then found
 * by the receiver's bounded sleeps only). */
static void open_local_prog(struct xw_iface *ifc)
{
	char p[PATH_MAX];

	if (pin_path(p, sizeof(p), ifc->pin_dir, XWI_LOCAL_PIN))
		return;
	ifc->local_fd = bpf_obj_get(p);
	if (ifc->local_fd < 0)
		xwi_warn("%s: no %s program pinned in %s: peers on this host cannot wake a "
			 "sleeping receiver (reattach the program)", ifc->name,
			 XWI_LOCAL_PROG_NAME, ifc->pin_dir);
}

/* The endpoint ids of the program whose maps @ifc has open: the size of
 * its `endpoints` map (every per-endpoint map has it, set at the load);
 * -EINVAL also if its `shared` map has another value layout than ours (a
 * program of an older build attached: reattach it). */
static int read_max_eps(struct xw_iface *ifc)
{
	struct bpf_map_info info = {}, sh = {};
	__u32 len = sizeof(info), shlen = sizeof(sh);

	if (bpf_obj_get_info_by_fd(ifc->map_fd[XWI_MAP_endpoints], &info, &len) ||
	    bpf_obj_get_info_by_fd(ifc->map_fd[XWI_MAP_shared], &sh, &shlen))
		return -errno;
	if (!info.max_entries || info.max_entries > XW_MAX_ENDPOINTS ||
	    sh.value_size != sizeof(struct xw_shared))
		return -EINVAL;
	ifc->max_eps = info.max_entries;
	return 0;
}

static int open_pins(struct xw_iface *ifc)
{
	char p[PATH_MAX];
	int err;

	for (int i = 0; i < XWI_MAP_NR; i++) {
		err = pin_path(p, sizeof(p), ifc->pin_dir, xwi_map_name(i));
		if (err)
			return err;
		ifc->map_fd[i] = bpf_obj_get(p);
		if (ifc->map_fd[i] < 0) {
			err = -errno;
			xwi_err("%s: cannot open pinned map %s: %s", ifc->name, p, strerror(errno));
			return err;
		}
	}
	err = read_max_eps(ifc);
	if (err) {
		if (err == -EINVAL)
			xwi_err("%s: the program attached to it is from another build of xdpwake "
				"(its pinned endpoints map, or the value size of its shared map, "
				"does not fit this library): detach it (xdpwake detach %s) and "
				"attach again", ifc->name, ifc->name);
		else
			xwi_err("%s: cannot read the pinned maps' sizes: %s", ifc->name,
				strerror(-err));
		return err;
	}
	open_local_prog(ifc);
	return 0;
}

/* XDPWAKE_MAX_ENDPOINTS: 0 not set, 1 *v its value, -EINVAL not a count
 * from 1 to XW_MAX_ENDPOINTS. */
static int env_max_eps(__u32 *v)
{
	const char *env = getenv("XDPWAKE_MAX_ENDPOINTS");
	unsigned long n;
	char *end;

	if (!env || !*env)
		return 0;
	errno = 0;
	n = strtoul(env, &end, 0);
	if (errno || *end || n < 1 || n > XW_MAX_ENDPOINTS)
		return -EINVAL;
	*v = (__u32)n;
	return 1;
}

XW_API __u32 xw_max_endpoints_default(const char *ifname)
{
	int cpus = libbpf_num_possible_cpus();
	__u32 n = cpus > 0 ? (__u32)cpus : 1, q = ifname ? xwi_rx_queues(ifname) : 0, p = 64;

	if (env_max_eps(&p) == 1)
		return p;
	n = 2 * (q > n ? q : n);
	while (p < n && p < XW_MAX_ENDPOINTS)
		p <<= 1;
	return p;
}

/* The endpoint count a program attached now takes: the option, the
 * environment's, or the host's default. */
static int choose_max_eps(struct xw_iface *ifc, const struct xw_iface_opts *opts, __u32 *n)
{
	__u32 v = XWI_OPT(opts, max_endpoints, 0);

	if (v > XW_MAX_ENDPOINTS) {
		xwi_err("%s: max_endpoints %u out of range [1, %d]", ifc->name, v,
			XW_MAX_ENDPOINTS);
		return -ERANGE;
	}
	if (!v && env_max_eps(&v) < 0) {
		xwi_err("%s: XDPWAKE_MAX_ENDPOINTS=%s is not a count from 1 to %d", ifc->name,
			getenv("XDPWAKE_MAX_ENDPOINTS"), XW_MAX_ENDPOINTS);
		return -EINVAL;
	}
	*n = v ? v : xw_max_endpoints_default(ifc->name);
	return 0;
}

/* Size the skeleton's per-endpoint maps to @n ids before the load: every
 * map of XW_MAX_ENDPOINTS entries but the queue map, and `stats` with the
 * interface's entry after them. */
static int size_maps(struct xw_xdp_bpf *skel, __u32 n)
{
	struct bpf_map *m;
	__u32 max;
	int err;

	skel->rodata->xw_max_endpoints = n;
	max = n * XW_CONNS_PER_EP;
	err = bpf_map__set_max_entries(skel->maps.conns,
				       max < XW_MAX_CONNS ? XW_MAX_CONNS
				       : max > XW_CONNS_LIMIT ? XW_CONNS_LIMIT : max);
	if (err)
		return err;
	bpf_object__for_each_map(m, skel->obj) {
		max = bpf_map__max_entries(m);
		if (m == skel->maps.udp_queues ||
		    (max != XW_MAX_ENDPOINTS && max != XW_STATS_ENTRIES))
			continue;
		err = bpf_map__set_max_entries(m, max == XW_STATS_ENTRIES ? n + 1 : n);
		if (err)
			return err;
	}
	return 0;
}

const char *xwi_skel_map_name(int i, char *buf, size_t len)
{
	XW_OPTS(xw_knob_info, ki);

	if (i < XWI_KNOB_NR) {
		xw_knob_info(i, &ki);
		snprintf(buf, len, ki.per_endpoint ? "k_%s" : ".data.%s", ki.name);
	} else {
		snprintf(buf, len, "%s", xwi_map_name(i));
	}
	return buf;
}

int xwi_map_fill(int fd, __u32 n, __u32 v)
{
	__u32 keys[XW_MAX_ENDPOINTS], vals[XW_MAX_ENDPOINTS], count = n;
	LIBBPF_OPTS(bpf_map_batch_opts, bo);

	if (n > XW_MAX_ENDPOINTS)
		return -EINVAL;
	for (__u32 k = 0; k < n; k++) {
		keys[k] = k;
		vals[k] = v;
	}
	if (n > 1 && !bpf_map_update_batch(fd, keys, vals, &count, &bo) && count == n)
		return 0;
	for (__u32 k = 0; k < n; k++)
		if (bpf_map_update_elem(fd, &k, &v, BPF_ANY))
			return -errno;
	return 0;
}

static struct bpf_map *skel_map(struct xw_xdp_bpf *skel, int i)
{
	char name[64];

	return bpf_object__find_map_by_name(skel->obj, xwi_skel_map_name(i, name, sizeof(name)));
}

static int write_defaults(struct xw_iface *ifc, const struct xw_iface_opts *opts)
{
	XW_OPTS(xw_knob_info, ki);
	__u32 v;
	int err;

	for (int i = 0; i < XWI_KNOB_NR; i++) {
		xw_knob_info(i, &ki);
		v = ki.def;
		if (i == XWI_KNOB_encap && XWI_OPT(opts, encap, 0))
			v = XWI_OPT(opts, encap, 0);
		if (i == XWI_KNOB_ethertype && XWI_OPT(opts, ethertype, 0))
			v = XWI_OPT(opts, ethertype, 0);
		if (i == XWI_KNOB_udp_port && XWI_OPT(opts, udp_port, 0))
			v = XWI_OPT(opts, udp_port, 0);
		if (i == XWI_KNOB_policy && XWI_OPT(opts, policy_set, false))
			v = XWI_OPT(opts, policy, XW_DEF_POLICY);
		if (v < ki.min || v > ki.max) {
			xwi_err("%s: initial %s %u out of range [%u, %u]", ifc->name, ki.name, v,
				ki.min, ki.max);
			return -ERANGE;
		}
		err = xwi_map_fill(ifc->map_fd[i], ki.per_endpoint ? ifc->max_eps : 1u, v);
		if (err) {
			xwi_err("%s: cannot set %s: %s", ifc->name, ki.name, strerror(-err));
			return err;
		}
	}
	return 0;
}

static void drop_loaded(struct xw_iface *ifc)
{
	if (ifc->prog)
		xdp_program__close(ifc->prog);
	ifc->prog = NULL;
	/* xdp_program__close() does not free an object passed in .obj. */
	if (ifc->skel)
		xw_xdp_bpf__destroy(ifc->skel);
	ifc->skel = NULL;
}

/* The program passes frames addressed to another host's MAC (see
 * bpf/xdpwake.bpf.c): it learns the interface's address at load time.  No
 * address (a device without one): not checked. */
static void set_ifmac(struct xw_iface *ifc)
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	__u16 hi;
	__u32 lo;

	if (fd < 0)
		return;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifc->name);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) == 0 && ifr.ifr_hwaddr.sa_family == ARPHRD_ETHER) {
		memcpy(&hi, ifr.ifr_hwaddr.sa_data, 2);
		memcpy(&lo, ifr.ifr_hwaddr.sa_data + 2, 4);
		ifc->skel->data_ifmac->xw_ifmac_hi = hi;
		ifc->skel->data_ifmac->xw_ifmac_lo = lo;
	}
	close(fd);
}

/* One attempt with a fresh skeleton: libxdp tries its multi-program
 * dispatcher first and falls back to attaching the program alone where the
 * dispatcher cannot load.  *loaded tells whether the program passed the
 * verifier (so a failure is about the attach mode). */
static int try_attach(struct xw_iface *ifc, enum xdp_attach_mode m, __u32 max_eps,
		      bool *loaded)
{
	char p[PATH_MAX];
	int err;

	*loaded = false;
	drop_loaded(ifc);
	unpin_all(ifc->pin_dir);
	ifc->skel = xw_xdp_bpf__open();
	if (!ifc->skel) {
		err = -errno;
		xwi_err("cannot open the embedded BPF object: %s", strerror(errno));
		return err;
	}
	set_ifmac(ifc);
	err = size_maps(ifc->skel, max_eps);
	if (err)
		return err;
	for (int i = 0; i < XWI_MAP_NR; i++) {
		struct bpf_map *map = skel_map(ifc->skel, i);

		if (!map)
			return -ENOENT;
		err = pin_path(p, sizeof(p), ifc->pin_dir, xwi_map_name(i));
		if (err)
			return err;
		err = bpf_map__set_pin_path(map, p);
		if (err)
			return err;
	}

	DECLARE_LIBXDP_OPTS(xdp_program_opts, po, .obj = ifc->skel->obj,
			    .prog_name = XWI_PROG_NAME);
	ifc->prog = xdp_program__create(&po);
	err = libxdp_get_error(ifc->prog);
	if (err) {
		ifc->prog = NULL;
		xwi_err("%s: cannot create the XDP program: %s", ifc->name, strerror(-err));
		return err;
	}
	err = xdp_program__attach(ifc->prog, ifc->ifindex, m, 0);
	*loaded = xdp_program__fd(ifc->prog) >= 0;
	if (err)
		xwi_dbg("%s: attach in %s mode: %s%s", ifc->name,
			m == XDP_MODE_NATIVE ? "native" : "generic", strerror(-err),
			*loaded ? "" : " (program did not load)");
	return err;
}

static int load_and_attach(struct xw_iface *ifc, const struct xw_iface_opts *opts)
{
	enum xw_xdp_mode mode = XWI_OPT(opts, mode, XW_MODE_AUTO);
	struct bpf_program *lp;
	char p[PATH_MAX];
	bool loaded;
	__u32 n;
	int err;

	err = choose_max_eps(ifc, opts, &n);
	if (err)
		return err;
	if (mode == XW_MODE_GENERIC) {
		err = try_attach(ifc, XDP_MODE_SKB, n, &loaded);
	} else {
		err = try_attach(ifc, XDP_MODE_NATIVE, n, &loaded);
		if (err && loaded && mode == XW_MODE_AUTO && err != -EPERM && err != -EEXIST &&
		    err != -EBUSY) {
			xwi_warn("%s: native XDP failed (%s), using generic mode", ifc->name,
				 strerror(-err));
			err = try_attach(ifc, XDP_MODE_SKB, n, &loaded);
		}
	}
	if (err) {
		if (!loaded && err != -EPERM)
			xwi_err("%s: the BPF program failed to load: %s", ifc->name,
				strerror(-err));
		if (err == -EBUSY)
			err = -EEXIST;
		xwi_err("%s: cannot attach the XDP program: %s", ifc->name, xw_strerror(err));
		return err;
	}

	for (int i = 0; i < XWI_MAP_NR; i++) {
		ifc->map_fd[i] = dup(bpf_map__fd(skel_map(ifc->skel, i)));
		if (ifc->map_fd[i] < 0)
			return -errno;
	}
	ifc->max_eps = n;
	err = write_defaults(ifc, opts);
	if (err)
		return err;
	err = pin_path(p, sizeof(p), ifc->pin_dir, XWI_PROG_PIN);
	if (!err && bpf_obj_pin(xdp_program__fd(ifc->prog), p))
		err = -errno;
	if (err) {
		xwi_err("%s: cannot pin the program: %s", ifc->name, strerror(-err));
		return err;
	}
	/* The local wake program came with the object (not attached). */
	lp = bpf_object__find_program_by_name(ifc->skel->obj, XWI_LOCAL_PROG_NAME);
	ifc->local_fd = lp && bpf_program__fd(lp) >= 0 ? dup(bpf_program__fd(lp)) : -1;
	if (ifc->local_fd < 0 ||
	    pin_path(p, sizeof(p), ifc->pin_dir, XWI_LOCAL_PIN) ||
	    bpf_obj_pin(ifc->local_fd, p)) {
		err = ifc->local_fd < 0 ? -ENOENT : -errno;
		xwi_err("%s: cannot pin the %s program: %s", ifc->name, XWI_LOCAL_PROG_NAME,
			strerror(-err));
		return err;
	}
	err = find_attached(ifc->ifindex, &ifc->prog_id, &ifc->mode, &ifc->multiprog, NULL);
	if (err || !ifc->prog_id) {
		xwi_err("%s: program attached but not found on the interface", ifc->name);
		return err ? err : -ENOENT;
	}
	ifc->prog_id = xdp_program__id(ifc->prog);
	xwi_info("%s: attached %s in %s mode%s, endpoint ids 0-%u", ifc->name, XWI_PROG_NAME,
		 ifc->mode == XW_MODE_GENERIC ? "generic" : "native",
		 ifc->multiprog ? " (libxdp dispatcher)" : " (single program)", n - 1);
	return 0;
}

static void iface_free(struct xw_iface *ifc)
{
	if (!ifc)
		return;
	if (ifc->shared)
		munmap(ifc->shared, ifc->shared_len);
	if (ifc->local_fd >= 0)
		close(ifc->local_fd);
	for (int i = 0; i < XWI_MAP_NR; i++)
		if (ifc->map_fd[i] >= 0)
			close(ifc->map_fd[i]);
	drop_loaded(ifc);
	free(ifc);
}

static int iface_dir(char *buf, size_t len, const char *root, const char *ifname)
{
	if ((size_t)snprintf(buf, len, "%s/%s", root ? root : XW_DEFAULT_PIN_ROOT, ifname) >=
	    len)
		return -ENAMETOOLONG;
	return 0;
}

XW_API int xw_iface__open(const char *ifname, const struct xw_iface_opts *opts,
			  struct xw_iface **ifacep)
{
	const char *root;
	struct xw_iface *ifc;
	__u32 id, pinned_id = 0;
	char p[PATH_MAX];
	int err, lock = -1, fd;

	xwi_hook_lib_logs();
	if (!ifacep || !ifname || !*ifname)
		return -EINVAL;
	*ifacep = NULL;
	if (!XWI_OPTS_VALID(opts, xw_iface_opts))
		return -EINVAL;
	if (strlen(ifname) >= IF_NAMESIZE || strchr(ifname, '/'))
		return -EINVAL;
	if (XWI_OPT(opts, mode, XW_MODE_AUTO) > XW_MODE_GENERIC)
		return -EINVAL;

	ifc = calloc(1, sizeof(*ifc));
	if (!ifc)
		return -ENOMEM;
	for (int i = 0; i < XWI_MAP_NR; i++)
		ifc->map_fd[i] = -1;
	ifc->local_fd = -1;
	snprintf(ifc->name, sizeof(ifc->name), "%s", ifname);
	ifc->ifindex = if_nametoindex(ifname);
	if (!ifc->ifindex) {
		xwi_err("%s: no such interface", ifname);
		err = -ENODEV;
		goto out;
	}
	root = XWI_OPT(opts, pin_root, NULL);
	err = iface_dir(ifc->pin_dir, sizeof(ifc->pin_dir), root, ifname);
	if (err)
		goto out;
	err = ensure_bpffs(root ? root : XW_DEFAULT_PIN_ROOT);
	if (err)
		goto out;
	if (XWI_OPT(opts, no_attach, false) && access(ifc->pin_dir, F_OK)) {
		/* Only opening: create nothing.  Tell EPERM from absence. */
		err = errno == ENOENT ? -ENOENT : -errno;
		if (err == -ENOENT && geteuid() != 0 &&
		    find_attached(ifc->ifindex, &id, NULL, NULL, NULL) == -EPERM)
			err = -EPERM;
		goto out;
	}
	err = mkdir_p(ifc->pin_dir);
	if (err) {
		xwi_err("cannot create %s: %s", ifc->pin_dir, strerror(-err));
		goto out;
	}
	/* Shared while we only open the pins of an attached program;
	 * exclusive (a second round) to attach one. */
	for (int op = LOCK_SH;; op = LOCK_EX) {
		lock = lock_dir_op(ifc->pin_dir, op);
		if (lock < 0) {
			err = lock;
			goto out;
		}
		err = find_attached(ifc->ifindex, &id, &ifc->mode, &ifc->multiprog, NULL);
		if (err) {
			xwi_err("%s: cannot query the attached XDP program: %s", ifname,
				xw_strerror(err));
			goto out;
		}
		pinned_id = 0;
		if (!pin_path(p, sizeof(p), ifc->pin_dir, XWI_PROG_PIN) &&
		    (fd = bpf_obj_get(p)) >= 0) {
			pinned_id = fd_prog_id(fd);
			close(fd);
		}
		if (id && id == pinned_id) {
			ifc->prog_id = id;
			err = open_pins(ifc);
			goto out;
		}
		if (op == LOCK_EX)
			break;
		unlock_dir(lock);
		lock = -1;
	}
	if (id) {
		xwi_err("%s: an xdpwake program (id %u) is attached but its maps are not "
			"pinned in %s; detach it first (xdpwake detach %s)",
			ifname, id, ifc->pin_dir, ifname);
		err = -EEXIST;
		goto out;
	}
	if (XWI_OPT(opts, no_attach, false)) {
		err = -ENOENT;
		goto out;
	}
	/* Not attached: pins left there belong to a dead instance. */
	unpin_all(ifc->pin_dir);
	err = load_and_attach(ifc, opts);
	if (err && ifc->prog && !find_attached(ifc->ifindex, &id, NULL, NULL, NULL) && id)
		xdp_program__detach(ifc->prog, ifc->ifindex,
				    ifc->mode == XW_MODE_GENERIC ? XDP_MODE_SKB : XDP_MODE_NATIVE, 0);
	if (err)
		unpin_all(ifc->pin_dir);
out:
	unlock_dir(lock);
	if (err) {
		iface_free(ifc);
		return err;
	}
	*ifacep = ifc;
	return 0;
}

XW_API void xw_iface__close(struct xw_iface *ifc)
{
	iface_free(ifc);
}

/* Remove an interface's pin directory, and the root if it became empty. */
static void rmdir_with_root(const char *dir)
{
	char root[PATH_MAX], *slash;

	rmdir(dir);
	snprintf(root, sizeof(root), "%s", dir);
	slash = strrchr(root, '/');
	if (slash && slash != root) {
		*slash = '\0';
		rmdir(root);
	}
}

static int detach_locked(int ifindex, const char *ifname, const char *dir)
{
	struct xdp_program *p = NULL;
	int mode = XW_MODE_NATIVE, multi = 0, err;
	__u32 id;

	/* Attached alone: detach with plain libbpf (libxdp 1.3's by-id
	 * lookups leak a program fd each). */
	err = find_attached(ifindex, &id, &mode, &multi, &p);
	if (err)
		return err;
	if (id && !multi) {
		LIBBPF_OPTS(bpf_xdp_attach_opts, ao);
		int fd = bpf_prog_get_fd_by_id(id);

		ao.old_prog_fd = fd;
		err = fd < 0 ? -errno
			     : bpf_xdp_detach(ifindex, mode == XW_MODE_GENERIC ? XDP_FLAGS_SKB_MODE
									: XDP_FLAGS_DRV_MODE, &ao);
		if (fd >= 0)
			close(fd);
		goto detached;
	}
	if (!id || !p) {
		unpin_all(dir);
		return -ENOENT;
	}
	err = xdp_program__detach(p, ifindex,
				  mode == XW_MODE_GENERIC ? XDP_MODE_SKB : XDP_MODE_NATIVE, 0);
	xdp_program__close(p);
detached:
	if (err) {
		xwi_err("%s: cannot detach: %s", ifname, strerror(-err));
		return err;
	}
	unpin_all(dir);
	xwi_info("%s: detached", ifname);
	return 0;
}

XW_API int xw_iface__detach(struct xw_iface *ifc)
{
	int err, lock;

	if (!ifc)
		return -EINVAL;
	lock = lock_dir(ifc->pin_dir);
	err = detach_locked(ifc->ifindex, ifc->name, ifc->pin_dir);
	unlock_dir(lock);
	rmdir_with_root(ifc->pin_dir);
	iface_free(ifc);
	return err;
}

int xwi_iface_detach_unused(struct xw_iface *ifc, bool (*in_use)(struct xw_iface *))
{
	int err = 0, lock;
	bool busy;

	lock = lock_dir(ifc->pin_dir);
	busy = in_use(ifc);
	if (!busy)
		err = detach_locked(ifc->ifindex, ifc->name, ifc->pin_dir);
	unlock_dir(lock);
	if (busy) {
		xw_iface__close(ifc);
		return 0;
	}
	rmdir_with_root(ifc->pin_dir);
	iface_free(ifc);
	return err ? err : 1;
}

XW_API int xw_detach(const char *ifname, const char *pin_root)
{
	char dir[PATH_MAX];
	int ifindex, err, lock;

	xwi_hook_lib_logs();
	if (!ifname || !*ifname || strlen(ifname) >= IF_NAMESIZE || strchr(ifname, '/'))
		return -EINVAL;
	ifindex = if_nametoindex(ifname);
	if (!ifindex)
		return -ENODEV;
	err = iface_dir(dir, sizeof(dir), pin_root, ifname);
	if (err)
		return err;
	lock = lock_dir(dir);
	err = detach_locked(ifindex, ifname, dir);
	unlock_dir(lock);
	rmdir_with_root(dir);
	return err;
}

XW_API const char *xw_iface__name(const struct xw_iface *ifc)
{
	return ifc ? ifc->name : NULL;
}

XW_API int xw_iface__ifindex(const struct xw_iface *ifc)
{
	return ifc ? ifc->ifindex : -EINVAL;
}

XW_API const char *xw_iface__pin_dir(const struct xw_iface *ifc)
{
	return ifc ? ifc->pin_dir : NULL;
}

XW_API int xw_iface__mode(const struct xw_iface *ifc)
{
	return ifc ? ifc->mode : -EINVAL;
}

XW_API int xw_iface__multiprog(const struct xw_iface *ifc)
{
	return ifc ? ifc->multiprog : -EINVAL;
}

XW_API __u32 xw_iface__prog_id(const struct xw_iface *ifc)
{
	return ifc ? ifc->prog_id : 0;
}

XW_API __u32 xw_iface__max_endpoints(const struct xw_iface *ifc)
{
	return ifc ? ifc->max_eps : 0;
}

XW_API int xw_iface__map_fd(const struct xw_iface *ifc, const char *name)
{
	if (!ifc || !name)
		return -EINVAL;
	for (int i = 0; i < XWI_MAP_NR; i++)
		if (!strcmp(name, xwi_map_name(i)))
			return ifc->map_fd[i];
	return -ENOENT;
}

static int knob_key(const struct xw_iface *ifc, int idx, __u32 ep, __u32 *key)
{
	XW_OPTS(xw_knob_info, ki);

	xw_knob_info(idx, &ki);
	if (ki.per_endpoint && ep >= ifc->max_eps)
		return -ERANGE;
	*key = ki.per_endpoint ? ep : 0;
	return 0;
}

XW_API int xw_iface__set_knob(struct xw_iface *ifc, const char *name, __u16 ep, __u32 value)
{
	XW_OPTS(xw_knob_info, ki);
	int idx = xw_knob_find(name), err;
	__u32 key;

	if (!ifc)
		return -EINVAL;
	if (idx < 0)
		return idx;
	err = knob_key(ifc, idx, ep, &key);
	if (err)
		return err;
	xw_knob_info(idx, &ki);
	if (value < ki.min || value > ki.max)
		return -ERANGE;
	if (bpf_map_update_elem(ifc->map_fd[idx], &key, &value, BPF_EXIST))
		return -errno;
	return 0;
}

XW_API int xw_iface__get_knob(struct xw_iface *ifc, const char *name, __u16 ep, __u32 *value)
{
	int idx = xw_knob_find(name), err;
	__u32 key;

	if (!ifc || !value)
		return -EINVAL;
	if (idx < 0)
		return idx;
	err = knob_key(ifc, idx, ep, &key);
	if (err)
		return err;
	if (bpf_map_lookup_elem(ifc->map_fd[idx], &key, value))
		return -errno;
	return 0;
}

XW_API int xw_iface__stats(struct xw_iface *ifc, __u16 ep, struct xw_stats *out)
{
	int ncpu = libbpf_num_possible_cpus(), err = 0;
	struct xw_stats sum = { .sz = sizeof(sum) };
	__u64 *o = (__u64 *)((char *)&sum + XWI_STATS_OFF);
	struct xw_map_stats *vals;
	__u32 first, last;

	if (!ifc || !out || (ep != XW_STATS_ALL && ep > XW_STATS_IFACE))
		return -EINVAL;
	if (ncpu < 0)
		return ncpu;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	/* The interface's entry is the map's last, after the program's ids. */
	if (ep != XW_STATS_ALL && ep != XW_STATS_IFACE && ep >= ifc->max_eps) {
		free(vals);
		return -ERANGE;
	}
	first = ep == XW_STATS_ALL ? 0 : ep == XW_STATS_IFACE ? ifc->max_eps : ep;
	last = ep == XW_STATS_ALL || ep == XW_STATS_IFACE ? ifc->max_eps : ep;
	for (__u32 k = first; k <= last; k++) {
		if (bpf_map_lookup_elem(ifc->map_fd[XWI_MAP_stats], &k, vals)) {
			err = -errno;
			break;
		}
		for (int c = 0; c < ncpu; c++) {
			const __u64 *v = (const __u64 *)&vals[c];

			for (int i = 0; i < XW_STATS_NR; i++)
				o[i] += v[i];
		}
	}
	free(vals);
	return err ? err : XWI_OUT_COPY(out, &sum, xw_stats);
}

XW_API int xw_iface__endpoint(struct xw_iface *ifc, __u16 ep, struct xw_ep_entry *out)
{
	__u32 key = ep;

	if (!ifc || !out)
		return -EINVAL;
	if (ep >= ifc->max_eps)
		return -ERANGE;
	if (bpf_map_lookup_elem(ifc->map_fd[XWI_MAP_endpoints], &key, out))
		return -errno;
	return 0;
}

int xwi_iface_endpoints(struct xw_iface *ifc, struct xw_ep_entry *out)
{
	__u32 keys[XW_MAX_ENDPOINTS], n = ifc->max_eps, count = n, batch;
	LIBBPF_OPTS(bpf_map_batch_opts, bo);
	int fd = ifc->map_fd[XWI_MAP_endpoints];

	/* An array's batch starts at the first key: no in_batch token. */
	if (!bpf_map_lookup_batch(fd, NULL, &batch, keys, out, &count, &bo) && count == n)
		return 0;
	if (errno == ENOENT && count == n)
		return 0; /* the end reached with the last batch */
	for (__u32 k = 0; k < n; k++)
		if (bpf_map_lookup_elem(fd, &k, &out[k]))
			return -errno;
	return 0;
}

int xwi_iface_peek_endpoint(const char *ifname, const char *pin_root, __u16 id,
			    struct xw_ep_entry *out)
{
	char dir[PATH_MAX], p[PATH_MAX];
	__u32 key = id;
	int err, fd;

	err = iface_dir(dir, sizeof(dir), pin_root, ifname);
	if (!err)
		err = pin_path(p, sizeof(p), dir, xwi_map_name(XWI_MAP_endpoints));
	if (err)
		return err;
	fd = bpf_obj_get(p);
	if (fd < 0)
		return -errno;
	err = bpf_map_lookup_elem(fd, &key, out) ? -errno : 0;
	close(fd);
	return err;
}

struct xw_shared *xwi_iface_shared(struct xw_iface *ifc, __u32 ep)
{
	long page = sysconf(_SC_PAGESIZE);
	void *m;

	if (ep >= ifc->max_eps) {
		errno = ERANGE;
		return NULL;
	}
	if (!ifc->shared) {
		ifc->shared_len = (sizeof(struct xw_shared) * ifc->max_eps + page - 1) &
				  ~(size_t)(page - 1);
		m = mmap(NULL, ifc->shared_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 ifc->map_fd[XWI_MAP_shared], 0);
		if (m == MAP_FAILED)
			return NULL;
		ifc->shared = m;
	}
	return &ifc->shared[ep];
}
