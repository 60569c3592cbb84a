/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* Internal declarations of libxdpwake (not installed). */
#ifndef XW_INTERNAL_H
#define XW_INTERNAL_H

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include "xdpwake.h"
#include "xdpwake_maps.h" /* the map layouts (not installed) */

struct xw_xdp_bpf;

/* Check an options struct: NULL is fine; sz must at least hold `sz`, and
 * any tail beyond the struct this library knows must be zero (an
 * application built against a newer header using a newer field).  Padding
 * inside the known struct is not checked: compound literals leave it
 * unspecified. */
int xwi_opts_valid(const void *opts, size_t user_sz, size_t known_sz, const char *what);
#define XWI_OPTS_VALID(o, type) \
	xwi_opts_valid((o), (o) ? (o)->sz : 0, sizeof(struct type), #type)
#define XWI_OPT(o, field, def) \
	(((o) && offsetof(__typeof__(*(o)), field) < (o)->sz) ? (o)->field : (def))

/* Copy the library's @src into the caller's @dst, both structs whose first
 * member is `size_t sz`: as much as dst->sz (kept) says, the rest of a
 * larger dst (an application built against a newer header) zeroed; -EINVAL
 * when dst->sz holds no field. */
int xwi_out_copy(void *dst, const void *src, size_t known_sz, const char *what);
#define XWI_OUT_COPY(dst, src, type) xwi_out_copy((dst), (src), sizeof(struct type), #type)

/* Where struct xw_stats's counters start: after sz, as the map's value
 * (struct xw_map_stats) lays them out. */
#define XWI_STATS_OFF (sizeof(struct xw_stats) - sizeof(struct xw_map_stats))
_Static_assert(XWI_STATS_OFF >= sizeof(size_t) && XWI_STATS_OFF % sizeof(__u64) == 0,
	       "struct xw_stats: sz, then the counters of struct xw_map_stats");

__attribute__((format(printf, 2, 3)))
void xwi_log(enum xw_log_level level, const char *fmt, ...);
#define xwi_err(...) xwi_log(XW_LOG_ERROR, __VA_ARGS__)
#define xwi_warn(...) xwi_log(XW_LOG_WARN, __VA_ARGS__)
#define xwi_info(...) xwi_log(XW_LOG_INFO, __VA_ARGS__)
#define xwi_dbg(...) xwi_log(XW_LOG_DEBUG, __VA_ARGS__)
/* Route libbpf/libxdp printing through our callback (idempotent). */
void xwi_hook_lib_logs(void);

/* Names of the maps pinned per interface besides the knobs. */
#define XWI_MAPS(X)          \
	X(endpoints)         \
	X(shared)            \
	X(wake_state)        \
	X(wd_state)          \
	X(conns)             \
	X(xsks)              \
	X(wake_rings)        \
	X(wd_rings)          \
	X(stats)             \
	X(udp_queues)

enum {
#define XWI__KNOB_ENUM(name, scope, def, min, max) XWI_KNOB_##name,
	XW_KNOBS(XWI__KNOB_ENUM)
#undef XWI__KNOB_ENUM
	XWI_KNOB_NR,
#define XWI__MAP_ENUM(name) XWI_MAP_##name,
	XWI_MAP_FIRST_OTHER = XWI_KNOB_NR - 1,
	XWI_MAPS(XWI__MAP_ENUM)
#undef XWI__MAP_ENUM
	XWI_MAP_NR,
};

/* Pin file name of map index @i (knobs first, then XWI_MAPS). */
const char *xwi_map_name(int i);
/* Name of map index @i in the BPF object ("k_policy", ".data.encap", ...). */
const char *xwi_skel_map_name(int i, char *buf, size_t len);
/* Set keys 0 .. @n-1 of the __u32 array map @fd to @v: one batch update
 * (a knob's XW_MAX_ENDPOINTS entries in one system call), element by
 * element where the kernel has no batch for it.  0 or -errno. */
int xwi_map_fill(int fd, __u32 n, __u32 v);

struct xw_iface {
	char name[16];
	int ifindex;
	char pin_dir[PATH_MAX];
	int mode;	 /* XW_MODE_NATIVE / XW_MODE_GENERIC */
	int multiprog;	 /* attached through the libxdp dispatcher */
	__u32 prog_id;
	int map_fd[XWI_MAP_NR];
	struct xw_xdp_bpf *skel;	 /* set when this handle attached */
	struct xdp_program *prog;	 /* ditto */
	struct xw_shared *shared;	 /* mmapped `shared` map (lazily) */
	int local_fd;			 /* the xw_local program (-1: none) */
	size_t shared_len;
	__u32 max_eps;			 /* ids 0 .. max_eps - 1 (the maps' size) */
};

/* The `endpoints` map's max_eps entries into @out (that many),
 * in one batch where the kernel has it.  0 or -errno. */
int xwi_iface_endpoints(struct xw_iface *iface, struct xw_ep_entry *out);
/* Entry @id of the `endpoints` map pinned for @ifname under @pin_root
 * (NULL: the default), without opening the interface: what an open of an
 * id another process holds says about it.  0 or -errno. */
int xwi_iface_peek_endpoint(const char *ifname, const char *pin_root, __u16 id,
			    struct xw_ep_entry *out);
/* mmap the shared map of @iface (once); NULL + errno on failure. */
struct xw_shared *xwi_iface_shared(struct xw_iface *iface, __u32 ep);
/* Under the interface's lock (the one xw_iface__open holds while it finds
 * or attaches the program): detach the program and free @iface unless
 * @in_use says otherwise, then only close it.  1 detached, 0 closed,
 * -errno detach failed (freed all the same). */
int xwi_iface_detach_unused(struct xw_iface *iface, bool (*in_use)(struct xw_iface *));

#endif
