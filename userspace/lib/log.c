// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Logging, error strings, options checking. */
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "internal.h"

static xw_log_fn log_fn;
static void *log_ctx;
static enum xw_log_level log_max = XW_LOG_ERROR;

XW_API const char *xw_version(void)
{
#define XW_STR2(x) #x
#define XW_STR(x) XW_STR2(x)
	return XW_STR(XDPWAKE_VERSION_MAJOR) "." XW_STR(XDPWAKE_VERSION_MINOR) "." XW_STR(
		XDPWAKE_VERSION_PATCH);
}

static void vlog(enum xw_log_level level, const char *fmt, va_list ap)
{
	char buf[512];
	size_t n;

	if (!log_fn || level > log_max)
		return;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	log_fn(level, buf, log_ctx);
}

void xwi_log(enum xw_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(level, fmt, ap);
	va_end(ap);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	vlog(level == LIBBPF_WARN ? XW_LOG_WARN : XW_LOG_DEBUG, fmt, ap);
	return 0;
}

static int libxdp_print(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	vlog(level == LIBXDP_WARN ? XW_LOG_WARN : XW_LOG_DEBUG, fmt, ap);
	return 0;
}

void xwi_hook_lib_logs(void)
{
	/* libbpf and libxdp print to stderr by default; a library must not. */
	libbpf_set_print(libbpf_print);
	libxdp_set_print(libxdp_print);
}

XW_API void xw_set_log(xw_log_fn fn, void *ctx, enum xw_log_level max_level)
{
	log_fn = fn;
	log_ctx = ctx;
	log_max = max_level;
	xwi_hook_lib_logs();
}

int xwi_out_copy(void *dst, const void *src, size_t known_sz, const char *what)
{
	size_t user_sz;

	memcpy(&user_sz, dst, sizeof(user_sz));
	if (user_sz <= sizeof(size_t)) {
		xwi_err("%s: sz (%zu) is too small; set it to sizeof(struct %s)", what, user_sz,
			what);
		return -EINVAL;
	}
	memcpy((char *)dst + sizeof(size_t), (const char *)src + sizeof(size_t),
	       (user_sz < known_sz ? user_sz : known_sz) - sizeof(size_t));
	if (user_sz > known_sz)
		memset((char *)dst + known_sz, 0, user_sz - known_sz);
	return 0;
}

int xwi_opts_valid(const void *opts, size_t user_sz, size_t known_sz, const char *what)
{
	const unsigned char *p = opts;

	if (!opts)
		return 1;
	if (user_sz < sizeof(size_t)) {
		xwi_err("%s: sz (%zu) is too small; set it to sizeof(struct %s)", what, user_sz,
			what);
		return 0;
	}
	for (size_t i = known_sz; i < user_sz; i++) {
		if (p[i]) {
			xwi_err("%s: unknown non-zero field at offset %zu (library too old?)",
				what, i);
			return 0;
		}
	}
	return 1;
}

XW_API const char *xw_strerror(int err)
{
	if (err == INT_MIN)
		return "unknown error";
	if (err < 0)
		err = -err;
	switch (err) {
	case 0:
		return "success";
	case EPERM:
	case EACCES:
		return "operation not permitted: xdpwake needs CAP_NET_ADMIN, CAP_BPF and "
		       "CAP_SYS_ADMIN (run as root) and a large enough RLIMIT_MEMLOCK";
	case ENODEV:
		return "no such network interface";
	case ENOENT:
		return "not found (no such knob, map, endpoint, or program not attached)";
	case EBUSY:
		return "busy: the queue or endpoint is already in use by another socket";
	case ENOSPC:
		return "no space: no free RX queue on the interface (each endpoint needs one of "
		       "its own), or a buffer too small";
	case EEXIST:
		return "already exists: another XDP program holds the interface";
	case EAFNOSUPPORT:
		return "AF_XDP sockets are not supported by this kernel (CONFIG_XDP_SOCKETS)";
	case EOPNOTSUPP:
		return "not supported by this driver or kernel (try generic XDP mode)";
	case EINVAL:
		return "invalid argument";
	case ERANGE:
		return "value out of range";
	case EAGAIN:
		return "resource temporarily unavailable (ring or queue full; retry)";
	case ETIMEDOUT:
		return "timed out";
	case ECONNRESET:
		return "connection reset: the peer restarted";
	case EMSGSIZE:
		return "message too long (truncated), or an MTU larger than AF_XDP carries";
	case ECANCELED:
		return "request cancelled";
	case ENOMEM:
		return "out of memory (or locked memory limit reached)";
	case ENAMETOOLONG:
		return "name too long";
	case ENOTDIR:
	case EXDEV:
		return "the pin directory is not on a BPF filesystem (bpffs)";
	case E2BIG:
		return "argument too big";
	case EPROTO:
		return "protocol error: malformed frame";
	default:
		return strerror(err);
	}
}
