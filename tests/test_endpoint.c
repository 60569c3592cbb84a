// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Endpoints: addresses, the errors of xw_endpoint__open, several processes
 * per host, several endpoints per socket, and open/close cycles.
 *
 *  1. xw_addr_parse / xw_addr_format / xw_addr_equal (no root needed).
 *  2. Distinct, explained errors of xw_endpoint__open: no interface, bad
 *     endpoint id, bad options, the endpoint id busy in this process and in
 *     another one, the queue bound by another process, a queue that does
 *     not exist, missing privileges (a helper that dropped to uid 65534).
 *  3. Two hosts (network namespaces) joined by an 8-queue veth pair, two
 *     processes per host: P0 with endpoint 1 on queue 0, P1 with endpoint 2
 *     on queue 1; the pairs A.P0-B.P0 and A.P1-B.P1 exchange messages at
 *     the same time.  A frame sent from a TX queue that is not the
 *     receiver's queue is dropped by the receiver's XDP program
 *     (drop_queue): on veth, as with RSS steering, the sender's queue must
 *     match the receiver's.
 *  4. Endpoints 4 and 5 of one process on one queue share one AF_XDP socket;
 *     closing the last one detaches the program they attached; reopening
 *     attaches it again.  The reopened endpoint 4 is a new incarnation
 *     (a new nonce in its address): it speaks first, and the peer endpoint
 *     that stayed open, still holding the old address, then reaches it
 *     (the new incarnation's CONNECT carried the peer's nonce: a restart,
 *     docs/PROTOCOL.md "Incarnation nonces").
 *  5. 1,000 open/send/recv/close cycles with the peer echoing (its
 *     endpoint reopened each cycle too, rotating over queues 0-6 of an
 *     8-queue veth on both hosts, while keepers on queue 7 hold the
 *     programs) leak no file descriptors, no BPF maps and no locked memory
 *     (CAP_IPC_LOCK dropped, so every UMEM is charged to RLIMIT_MEMLOCK: a
 *     pinned UMEM left behind exhausts it), and reopening right after a
 *     close does not fail with -EBUSY; then
 *     cycles whose open attaches and whose close detaches the program leak
 *     no descriptors, maps or programs either.
 *
 * Host A is this process (after unshare), host B a child in its own
 * namespace; they step through the same script and meet at barriers over a
 * socketpair.  Every process forks its helpers while it has no library
 * object open, so each helper starts with a clean library state.
 */
#include <dirent.h>
#include <grp.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "chan.h"
#include "harness.h"
#include "hosts.h"
#include "xdpwake.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif

#define IF_QA "xweqa" /* one-queue veth pair, both ends on host A */
#define IF_QB "xweqb"
#define IF_A "xwea" /* 8-queue veth pair between hosts A and B */
#define IF_B "xweb"
#define MISSING_IF "xwe-missing0"
#define TMO 10000	   /* ms: a hang guard only */
/* every process: a hang guard for the whole test, below tests/run.sh's
 * 600 s (its own message then says what happened); nothing else is timed:
 * on a loaded machine the cycles take longer, they are not fewer */
#define TIME_LIMIT_S 540
/* Waits for something the kernel finishes asynchronously (an RCU grace
 * period, a work item: BPF objects freed, a UMEM unpinned, a frame
 * counted): they end as soon as it happened; the bound only catches a
 * leak, and a loaded machine may take seconds. */
#define ASYNC_NS 30000000000ULL
#define CYCLES 1000	   /* part 5: open/send/recv/close cycles */
#define CYCLE_QUEUES 7	   /* ... rotating over queues 0-6 (the keepers use 7) */
#define ATTACH_CYCLES 20   /* part 5: cycles that attach and detach the program */
#define NOBODY 65534

static char pin_root[PATH_MAX];
static const char *me = "A"; /* this process, in messages */
static unsigned long long t_start;

/* ---- small helpers -------------------------------------------------------- */

static double elapsed(void)
{
	return (double)(xwu_now_ns() - t_start) / 1e9;
}

static void on_alarm(int sig)
{
	static const char m[] = "FATAL: time limit reached (hang?)\n";

	(void)sig;
	if (write(2, m, sizeof(m) - 1) < 0) {
		/* nothing to do */
	}
	_exit(1);
}

static void time_limit(void)
{
	signal(SIGALRM, on_alarm);
	alarm(TIME_LIMIT_S);
}

/* Log capture: the library's error messages (XWT_VERBOSE=1 prints all). */
static char logbuf[8192];
static size_t loglen;
static int logerrs;

static void log_cb(enum xw_log_level level, const char *msg, void *ctx)
{
	size_t n = strlen(msg);

	(void)ctx;
	if (getenv("XWT_VERBOSE"))
		fprintf(stderr, "[%s log %d] %s\n", me, (int)level, msg);
	if (level != XW_LOG_ERROR)
		return; /* libbpf/libxdp warnings: only with XWT_VERBOSE */
	logerrs++;
	if (loglen + n + 2 > sizeof(logbuf))
		return;
	memcpy(logbuf + loglen, msg, n);
	loglen += n;
	logbuf[loglen++] = '\n';
	logbuf[loglen] = '\0';
}

static void log_clear(void)
{
	loglen = 0;
	logbuf[0] = '\0';
	logerrs = 0;
}

/* The first logged line, for printing. */
static const char *log_first(char *buf, size_t len)
{
	const char *nl = strchr(logbuf, '\n');
	size_t n = nl ? (size_t)(nl - logbuf) : strlen(logbuf);

	if (n >= len)
		n = len - 1;
	memcpy(buf, logbuf, n);
	buf[n] = '\0';
	return buf;
}

static void bar(int fd, const char *what)
{
	xwt_bar(fd, NULL, what);
}

static void send_obj(int fd, const void *p, size_t n)
{
	REQUIRE(write(fd, p, n) == (ssize_t)n, "%s: channel write", me);
}

static void recv_obj(int fd, void *p, size_t n)
{
	REQUIRE(read(fd, p, n) == (ssize_t)n, "%s: channel read (the other side is gone)", me);
}

static void xchg_addr(int fd, const struct xw_addr *mine, struct xw_addr *theirs)
{
	xwt_xchg(fd, NULL, mine, theirs, sizeof(*mine));
}

/* Lines of `ip -d link show IF` naming an XDP program; -1: no such link. */
static int xdp_prog_lines(const char *ifname)
{
	char cmd[128];
	FILE *f;
	int n = -1;

	if (xwt_sh("ip link show %s >/dev/null 2>&1", ifname))
		return -1;
	snprintf(cmd, sizeof(cmd), "ip -d link show %s | grep -c prog/xdp", ifname);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &n) != 1)
		n = -1;
	pclose(f);
	return n;
}

/* Open file descriptors of this process, and how many are sockets. */
static int count_fds(int *sockets)
{
	char path[64], target[128];
	struct dirent *d;
	DIR *dir = opendir("/proc/self/fd");
	int n = 0, s = 0;
	ssize_t len;

	REQUIRE(dir, "opendir /proc/self/fd");
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.' || atoi(d->d_name) == dirfd(dir))
			continue;
		n++;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", atoi(d->d_name));
		len = readlink(path, target, sizeof(target) - 1);
		if (len > 0) {
			target[len] = '\0';
			if (!strncmp(target, "socket:", 7))
				s++;
		}
	}
	closedir(dir);
	if (sockets)
		*sockets = s;
	return n;
}

/* Descriptors of this process (a bitmap of the first 4096). */
struct fdset {
	unsigned char open[4096 / 8];
};

static void fdset_take(struct fdset *s)
{
	struct dirent *d;
	DIR *dir = opendir("/proc/self/fd");
	int fd;

	memset(s, 0, sizeof(*s));
	REQUIRE(dir, "opendir /proc/self/fd");
	while ((d = readdir(dir))) {
		fd = atoi(d->d_name);
		if (d->d_name[0] != '.' && fd != dirfd(dir) && fd >= 0 && fd < 4096)
			s->open[fd / 8] |= (unsigned char)(1u << (fd % 8));
	}
	closedir(dir);
}

/* Describe descriptors open now that were not in @before (at most 8). */
static void fdset_report(const char *what, const struct fdset *before)
{
	char path[64], target[128], line[128];
	struct fdset now;
	int shown = 0;
	ssize_t len;
	FILE *f;

	fdset_take(&now);
	for (int fd = 0; fd < 4096 && shown < 8; fd++) {
		if (!(now.open[fd / 8] & (1u << (fd % 8))) ||
		    (before->open[fd / 8] & (1u << (fd % 8))))
			continue;
		shown++;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		len = readlink(path, target, sizeof(target) - 1);
		target[len > 0 ? len : 0] = '\0';
		fprintf(stderr, "  %s: new fd %d -> %s", what, fd, target);
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f)) {
			if (!strncmp(line, "prog_id:", 8) || !strncmp(line, "map_id:", 7) ||
			    !strncmp(line, "prog_type:", 10) || !strncmp(line, "map_type:", 9) ||
			    !strncmp(line, "link_type:", 10)) {
				line[strcspn(line, "\n")] = '\0';
				fprintf(stderr, " [%s]", line);
			}
		}
		if (f)
			fclose(f);
		fputc('\n', stderr);
	}
}

/* BPF maps (or programs) in the system; *max_id: the highest id. */
static int count_bpf_ids(int progs, __u32 *max_id)
{
	__u32 id = 0, next;
	int n = 0;

	if (max_id)
		*max_id = 0;
	for (int i = 0; i < 1000000; i++) {
		if ((progs ? bpf_prog_get_next_id(id, &next) : bpf_map_get_next_id(id, &next)))
			break;
		id = next;
		n++;
		if (max_id)
			*max_id = id;
	}
	return n;
}

/* Is a BPF map / program of id @id held by a file descriptor of another
 * process (a concurrent BPF user, not this test)? */
static int held_by_other_process(const char *kind, __u32 id)
{
	char path[64], line[128], want[64];
	struct dirent *p, *f;
	DIR *proc = opendir("/proc"), *fds;
	FILE *fi;
	int found = 0;

	if (!proc)
		return 0;
	snprintf(want, sizeof(want), "%s:\t%u\n", kind, id);
	while (!found && (p = readdir(proc))) {
		if (p->d_name[0] < '1' || p->d_name[0] > '9' || atoi(p->d_name) == (int)getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fdinfo", atoi(p->d_name));
		fds = opendir(path);
		if (!fds)
			continue;
		while (!found && (f = readdir(fds))) {
			if (f->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", atoi(p->d_name),
				 atoi(f->d_name));
			fi = fopen(path, "r");
			if (!fi)
				continue;
			while (fgets(line, sizeof(line), fi))
				if (!strcmp(line, want)) {
					found = 1;
					break;
				}
			fclose(fi);
		}
		closedir(fds);
	}
	closedir(proc);
	return found;
}

/* Does BPF map / program @id still exist a while later?  A concurrent
 * user's object that was being freed when we listed it (its descriptors
 * closed, the id not yet released) is gone by then; a leak of ours is not. */
static int persists(int progs, __u32 id)
{
	int fd;

	usleep(200000);
	fd = progs ? bpf_prog_get_fd_by_id(id) : bpf_map_get_fd_by_id(id);
	if (fd < 0)
		return errno != ENOENT;
	close(fd);
	return 1;
}

/*
 * After a loop: BPF maps (progs) in the system may not exceed @before.
 * Freed maps disappear after an RCU grace period: wait up to ASYNC_NS.  The
 * count is system-wide; when it is higher, the surplus is attributed: new
 * objects (id > @before_max) held by another process's descriptors, or gone
 * a moment later (being freed when listed), belong to a concurrent BPF user
 * and are reported, not failed.
 */
static void check_bpf_objects(int progs, const char *what, int before, __u32 before_max)
{
	const char *kind = progs ? "prog_id" : "map_id";
	unsigned long long end = xwu_now_ns() + ASYNC_NS;
	int after, ours = 0, others = 0;
	__u32 id, next;

	for (;;) {
		after = count_bpf_ids(progs, NULL);
		if (after <= before || xwu_now_ns() >= end)
			break;
		usleep(50000);
	}
	printf("  %s: BPF %s in the system before %d, after %d\n", what, progs ? "progs" : "maps",
	       before, after);
	if (after <= before)
		return;
	for (id = before_max; ours < 8 && !(progs ? bpf_prog_get_next_id(id, &next)
						  : bpf_map_get_next_id(id, &next));
	     id = next) {
		if (held_by_other_process(kind, next) || !persists(progs, next)) {
			others++;
		} else {
			ours++;
			fprintf(stderr, "  %s: new BPF %s id %u is held by no other process\n", what,
				progs ? "prog" : "map", next);
		}
	}
	if (!ours) {
		printf("  note: the %d extra %s belong to other processes (concurrent BPF users)\n",
		       others, progs ? "progs" : "maps");
		return;
	}
	CHECK(0, "%s: %d BPF %s before, %d after (new ones not held by other processes: %d%s)",
	      what, before, progs ? "progs" : "maps", after, ours, ours >= 8 ? " or more" : "");
}

/* ---- 1. addresses ----------------------------------------------------------- */

static void parse_ok(const char *text, const char *canon, struct xw_addr *out)
{
	struct xw_addr a, b;
	char buf[XW_ADDR_STRLEN];
	int n, err;

	memset(&a, 0xA5, sizeof(a));
	err = xw_addr_parse(text, &a);
	CHECK(err == 0, "xw_addr_parse(\"%s\") = %d", text, err);
	if (err)
		return;
	n = xw_addr_format(&a, buf, sizeof(buf));
	CHECK(n == (int)strlen(canon) && !strcmp(buf, canon),
	      "xw_addr_format(parse(\"%s\")) = %d \"%s\", want \"%s\"", text, n, n > 0 ? buf : "",
	      canon);
	memset(&b, 0x5A, sizeof(b));
	err = xw_addr_parse(buf, &b);
	CHECK(err == 0 && !memcmp(&a, &b, sizeof(a)) && xw_addr_equal(&a, &b),
	      "round trip of \"%s\" via \"%s\" changed the address", text, buf);
	*out = a;
}

static void parse_bad(const char *text, int want)
{
	struct xw_addr a, keep;
	int err;

	memset(&a, 0xA5, sizeof(a));
	keep = a;
	err = xw_addr_parse(text, &a);
	CHECK(err == want, "xw_addr_parse(\"%s\") = %d, want %d", text ? text : "(null)", err, want);
	CHECK(!memcmp(&a, &keep, sizeof(a)), "xw_addr_parse(\"%s\") wrote the address on error",
	      text ? text : "(null)");
}

/* Every buffer length below the needed one: -ENOSPC, nothing written at or
 * past buf[len]; exactly enough: the length. */
static void format_lengths(const struct xw_addr *a, const char *canon)
{
	unsigned char buf[XW_ADDR_STRLEN + 16];
	size_t need = strlen(canon) + 1;
	int err;

	for (size_t len = 0; len <= need; len++) {
		memset(buf, 0x5A, sizeof(buf));
		err = xw_addr_format(a, (char *)buf, len);
		if (len < need)
			CHECK(err == -ENOSPC, "xw_addr_format(\"%s\", len %zu) = %d, want -ENOSPC",
			      canon, len, err);
		else
			CHECK(err == (int)strlen(canon) && !strcmp((char *)buf, canon),
			      "xw_addr_format(\"%s\", len %zu) = %d", canon, len, err);
		for (size_t i = len; i < sizeof(buf); i++)
			if (buf[i] != 0x5A) {
				CHECK(0, "xw_addr_format(\"%s\", len %zu) wrote buf[%zu]", canon, len,
				      i);
				break;
			}
	}
}

static void test_addresses(void)
{
	static const char *const einval[] = {
		/* missing "/ep" */
		"02:00:00:00:00:0a", "10.0.0.2:49152", "02:00:00:00:00:0a/", "10.0.0.2:49152/",
		/* bad MACs: short, non-hex, wrong separators, too long */
		"02:00:00:00:0a/3", "02:00:00:00:00:0/3", "2:00:00:00:00:0a/3",
		"02:00:00:00:00:0g/3", "0x:00:00:00:00:0a/3", "02-00-00-00-00-0a/3",
		"02:00:00:00:00-0a/3", "02:00:00.00:00:0a/3", "02:00:00:00:00:0a:00/3",
		"02:00:00:00:00:0a0/3",
		/* bad IPv4 */
		"10.0.0.256:49152/7", "10.0.0:49152/7", "10.0.0.2.1:49152/7", "a.b.c.d:49152/7",
		"10.0.0.-2:49152/7", ":49152/7",
		/* bad ports */
		"10.0.0.2:0/7", "10.0.0.2:65536/7", "10.0.0.2:99999999999/7", "10.0.0.2:/7",
		"10.0.0.2:-1/7", "10.0.0.2:+80/7", "10.0.0.2: 80/7", "10.0.0.2:0x50/7",
		/* bad endpoint ids (not numbers) */
		"02:00:00:00:00:0a/-1", "02:00:00:00:00:0a/+1", "02:00:00:00:00:0a/ 1",
		"02:00:00:00:00:0a/0x1",
		/* trailing garbage */
		"02:00:00:00:00:0a/3x", "02:00:00:00:00:0a/3 ", "10.0.0.2:49152/7 ",
		"10.0.0.2:49152/7/7", "10.0.0.2:49152x/7", "02:00:00:00:00:0a /3",
		/* empty, and longer than any address */
		"", "/3", "/", "0123456789012345678901234567890123456789012345678901/3",
	};
	static const char *const erange[] = {
		"02:00:00:00:00:0a/1024", "10.0.0.2:49152/1024", "02:00:00:00:00:0a/1025",
		"10.0.0.2:49152/65535", "02:00:00:00:00:0a/4294967296",
	};
	struct xw_addr e1, e2, e3, u1, u2, x;
	char buf[XW_ADDR_STRLEN];
	__u8 mac_a[6] = { 0x02, 0, 0, 0, 0, 0x0a };
	__u8 mac_b[6] = { 0x02, 0xab, 0xcd, 0xef, 0x01, 0x9f };
	int n;

	/* Ethernet: MAC/endpoint, hex in either case, printed lower case. */
	parse_ok("02:00:00:00:00:0a/3", "02:00:00:00:00:0a/3", &e1);
	CHECK(e1.encap == XW_ENCAP_ETH && !memcmp(e1.mac, mac_a, 6) && e1.ep == 3 && !e1.ip &&
	      !e1.port, "02:00:00:00:00:0a/3 parsed wrong");
	parse_ok("02:00:00:00:00:0A/3", "02:00:00:00:00:0a/3", &e2);
	CHECK(!memcmp(&e1, &e2, sizeof(e1)), "upper and lower case hex differ");
	parse_ok("02:AB:CD:EF:01:9F/1023", "02:ab:cd:ef:01:9f/1023", &e3);
	CHECK(!memcmp(e3.mac, mac_b, 6) && e3.ep == 1023, "02:AB:CD:EF:01:9F/1023 parsed wrong");
	parse_ok("02:ab:cD:Ef:01:9f/1023", "02:ab:cd:ef:01:9f/1023", &x);
	CHECK(!memcmp(&x, &e3, sizeof(x)), "mixed case hex parsed differently");
	parse_ok("ff:ff:ff:ff:ff:ff/0", "ff:ff:ff:ff:ff:ff/0", &x);
	parse_ok("02:00:00:00:00:0a/007", "02:00:00:00:00:0a/7", &x);
	CHECK(x.ep == 7, "leading zeros of the endpoint id");

	/* UDP: IPv4:port/endpoint, the MAC left zero. */
	parse_ok("10.0.0.2:49152/7", "10.0.0.2:49152/7", &u1);
	CHECK(u1.encap == XW_ENCAP_UDP && u1.ip == inet_addr("10.0.0.2") &&
	      u1.port == htons(49152) && u1.ep == 7 && !memcmp(u1.mac, "\0\0\0\0\0\0", 6),
	      "10.0.0.2:49152/7 parsed wrong: encap %u ip %#x port %u ep %u", u1.encap, u1.ip,
	      ntohs(u1.port), u1.ep);
	parse_ok("255.255.255.255:65535/1023", "255.255.255.255:65535/1023", &u2);
	parse_ok("0.0.0.0:1/0", "0.0.0.0:1/0", &x);

	/* The incarnation nonce: an optional third part, 16 hex digits,
	 * printed lower case when not 0; equality ignores it. */
	parse_ok("02:00:00:00:00:0a/3/9F1C0E2B44D7A310", "02:00:00:00:00:0a/3/9f1c0e2b44d7a310", &x);
	CHECK(x.nonce == 0x9F1C0E2B44D7A310ULL && x.ep == 3 && xw_addr_equal(&x, &e1),
	      "nonce parsed wrong: %#llx", (unsigned long long)x.nonce);
	format_lengths(&x, "02:00:00:00:00:0a/3/9f1c0e2b44d7a310");
	parse_ok("255.255.255.255:65535/1023/ffffffffffffffff",
		 "255.255.255.255:65535/1023/ffffffffffffffff", &x);
	CHECK(x.nonce == ~0ULL && xw_addr_equal(&x, &u2), "UDP nonce parsed wrong");
	format_lengths(&x, "255.255.255.255:65535/1023/ffffffffffffffff");
	parse_ok("02:00:00:00:00:0a/3/0000000000000000", "02:00:00:00:00:0a/3", &x);
	CHECK(!x.nonce, "a zero nonce");
	parse_bad("02:00:00:00:00:0a/3/9f1c0e2b44d7a31", -EINVAL);
	parse_bad("02:00:00:00:00:0a/3/9f1c0e2b44d7a3100", -EINVAL);
	parse_bad("02:00:00:00:00:0a/3/9f1c0e2b44d7a31g", -EINVAL);
	parse_bad("02:00:00:00:00:0a//9f1c0e2b44d7a310", -EINVAL);
	parse_bad("02:00:00:00:00:0a/1024/9f1c0e2b44d7a310", -ERANGE);

	for (size_t i = 0; i < sizeof(einval) / sizeof(einval[0]); i++)
		parse_bad(einval[i], -EINVAL);
	parse_bad(NULL, -EINVAL);
	CHECK(xw_addr_parse("02:00:00:00:00:0a/3", NULL) == -EINVAL, "NULL address");
	for (size_t i = 0; i < sizeof(erange) / sizeof(erange[0]); i++)
		parse_bad(erange[i], -ERANGE);

	/* Formatting: buffer lengths, guard bytes, invalid addresses. */
	format_lengths(&e3, "02:ab:cd:ef:01:9f/1023");
	format_lengths(&u2, "255.255.255.255:65535/1023");
	format_lengths(&u1, "10.0.0.2:49152/7");
	memset(buf, 0x5A, sizeof(buf));
	CHECK(xw_addr_format(NULL, buf, sizeof(buf)) == -EINVAL, "format NULL address");
	CHECK(xw_addr_format(&e1, NULL, 10) == -EINVAL, "format into NULL");
	x = e1;
	x.ep = XW_MAX_ENDPOINTS;
	CHECK(xw_addr_format(&x, buf, sizeof(buf)) == -EINVAL, "format endpoint 1024");
	x = e1;
	x.encap = 0;
	CHECK(xw_addr_format(&x, buf, sizeof(buf)) == -EINVAL, "format encap 0");
	x.encap = XW_ENCAP_ALL;
	CHECK(xw_addr_format(&x, buf, sizeof(buf)) == -EINVAL, "format encap 3");
	n = xw_addr_format(&u2, buf, XW_ADDR_STRLEN);
	CHECK(n > 0 && n < XW_ADDR_STRLEN, "XW_ADDR_STRLEN holds the longest address");

	/* Equality: Ethernet compares MAC and endpoint (ip/port ignored). */
	x = e1;
	CHECK(xw_addr_equal(&e1, &x) == 1, "ETH: equal to itself");
	x.ip = inet_addr("1.2.3.4");
	x.port = htons(9);
	CHECK(xw_addr_equal(&e1, &x) == 1, "ETH: ip/port must not matter");
	x = e1;
	x.ep = 4;
	CHECK(xw_addr_equal(&e1, &x) == 0, "ETH: other endpoint is different");
	x = e1;
	x.mac[5] ^= 1;
	CHECK(xw_addr_equal(&e1, &x) == 0, "ETH: other MAC is different");
	x = e1;
	x.mac[0] ^= 0x80;
	CHECK(xw_addr_equal(&e1, &x) == 0, "ETH: other MAC (first byte) is different");
	/* UDP compares ip, port and endpoint, not the MAC. */
	x = u1;
	memcpy(x.mac, mac_b, 6);
	CHECK(xw_addr_equal(&u1, &x) == 1, "UDP: the MAC must not matter");
	x = u1;
	x.ip = inet_addr("10.0.0.3");
	CHECK(xw_addr_equal(&u1, &x) == 0, "UDP: other IP is different");
	x = u1;
	x.port = htons(49153);
	CHECK(xw_addr_equal(&u1, &x) == 0, "UDP: other port is different");
	x = u1;
	x.ep = 8;
	CHECK(xw_addr_equal(&u1, &x) == 0, "UDP: other endpoint is different");
	/* Different encapsulations never name the same endpoint. */
	x = e1;
	x.encap = XW_ENCAP_UDP;
	CHECK(xw_addr_equal(&e1, &x) == 0, "ETH vs UDP with the same fields");
	CHECK(xw_addr_equal(&e1, NULL) == 0 && xw_addr_equal(NULL, &e1) == 0 &&
	      xw_addr_equal(NULL, NULL) == 0, "NULL addresses are never equal");
	printf("1. addresses: round trips, %zu malformed (-EINVAL), %zu out of range (-ERANGE), "
	       "short buffers (-ENOSPC, guard bytes intact), equality ok\n",
	       sizeof(einval) / sizeof(einval[0]) + 1, sizeof(erange) / sizeof(erange[0]));
}

/* ---- endpoints ------------------------------------------------------------ */

static __u32 umem_frames; /* 0: the default; part 5 uses small UMEMs */

static struct xw_endpoint *open_ep(const char *ifname, __u16 id, __u32 queue)
{
	struct xw_endpoint *ep = NULL;
	char l[256];
	int err;

	XW_OPTS(xw_endpoint_opts, o, .pin_root = pin_root, .queue = queue,
		.umem_frames = umem_frames);
	log_clear();
	err = xw_endpoint__open(ifname, id, &o, &ep);
	REQUIRE(err == 0, "%s: open %s endpoint %u queue %u: %s (log: %s)", me, ifname, id, queue,
		xw_strerror(err), log_first(l, sizeof(l)));
	return ep;
}

/*
 * Open, retrying (up to ASYNC_NS) while the queue is still bound: the kernel
 * releases an AF_XDP socket's queue asynchronously (xp_release_deferred()
 * from a work item), so an open right after the close of the last endpoint
 * on that queue can fail with -EBUSY.  *busy counts such opens; *max_ms is
 * the longest wait.
 */
static int memlock_waits; /* opens that found RLIMIT_MEMLOCK in use for a moment */

static struct xw_endpoint *open_ep_busy(const char *ifname, __u16 id, __u32 queue, int *busy,
					double *max_ms)
{
	unsigned long long start = xwu_now_ns(), end = start + ASYNC_NS;
	struct xw_endpoint *ep = NULL;
	char l[256];
	int err, waited = 0;

	XW_OPTS(xw_endpoint_opts, o, .pin_root = pin_root, .queue = queue,
		.umem_frames = umem_frames);
	for (;;) {
		log_clear();
		err = xw_endpoint__open(ifname, id, &o, &ep);
		if (xwu_now_ns() >= end)
			break;
		if (err == -ENOBUFS) {
			/* Over RLIMIT_MEMLOCK (part 5): the kernel unpins a
			 * closed socket's UMEM from a work item, so the
			 * charge of the one just closed may still be there
			 * for a moment.  A leak never goes away. */
			memlock_waits++;
			usleep(500);
			continue;
		}
		if (err != -EBUSY || !strstr(logbuf, "already bound"))
			break;
		waited = 1;
		usleep(200);
	}
	REQUIRE(err == 0, "%s: open %s endpoint %u queue %u: %s (log: %s)", me, ifname, id, queue,
		xw_strerror(err), log_first(l, sizeof(l)));
	if (waited) {
		double ms = (double)(xwu_now_ns() - start) / 1e6;

		(*busy)++;
		if (ms > *max_ms)
			*max_ms = ms;
	}
	return ep;
}

static void ep_addr(struct xw_endpoint *ep, struct xw_addr *a)
{
	REQUIRE(xw_endpoint__addr(ep, a) == 0, "%s: xw_endpoint__addr", me);
}

/* Send @text with @match (blocking) */
static void send_text(struct xw_endpoint *ep, const struct xw_addr *dst, const char *text,
		      __u64 match)
{
	int err = xw_endpoint__send(ep, dst, text, strlen(text) + 1, match, TMO);

	CHECK(err == 0, "%s: send \"%s\": %s", me, text, xw_strerror(err));
}

/* Receive and expect @text with @match from endpoint @src_ep. */
static void recv_text(struct xw_endpoint *ep, const char *text, __u64 match, int src_ep)
{
	char buf[128] = "";
	struct xw_status nosz = { .len = 7 };
	XW_OPTS(xw_status, st);
	int err;

	/* A status without sz is refused before anything is taken. */
	err = xw_endpoint__recv(ep, buf, sizeof(buf), match, ~0ULL, &nosz, TMO);
	CHECK(err == -EINVAL && nosz.len == 7 && !buf[0], "%s: recv into a status without sz: %s",
	      me, xw_strerror(err));
	err = xw_endpoint__recv(ep, buf, sizeof(buf), match, ~0ULL, &st, TMO);
	CHECK(err == 0 && st.len == strlen(text) + 1 && !strcmp(buf, text) &&
	      (src_ep < 0 || st.src.ep == src_ep),
	      "%s: recv match %#llx: %s, got \"%.*s\" (%zu bytes) from endpoint %u, want \"%s\" "
	      "from %d", me, (unsigned long long)match, xw_strerror(err), (int)sizeof(buf), buf,
	      st.len, st.src.ep, text, src_ep);
}

/* ---- 2. errors of xw_endpoint__open ---------------------------------------- */

/* A helper process forked with no library object open: it opens (and at
 * once closes) endpoints on command, optionally after dropping to uid
 * 65534 without capabilities, and reports the error and the log. */
enum { H_OPEN = 1, H_DROP = 2, H_EXIT = 3 };

struct hcmd {
	int op;
	__u16 id;
	__u32 queue;
	char ifname[IF_NAMESIZE];
};

struct hrep {
	int err;
	int logerrs;
	int caps_zero;
	unsigned int uid;
	char log[2048];
};

static int caps_effective_zero(void)
{
	char line[256];
	unsigned long long eff = ~0ULL;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return eff == 0;
}

static void helper_loop(int fd)
{
	struct xw_endpoint *ep;
	struct hcmd c;
	struct hrep r;

	for (;;) {
		if (read(fd, &c, sizeof(c)) != sizeof(c))
			break;
		memset(&r, 0, sizeof(r));
		if (c.op == H_EXIT)
			break;
		log_clear();
		if (c.op == H_DROP) {
			r.err = 0;
			if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
			    setresuid(NOBODY, NOBODY, NOBODY))
				r.err = -errno;
			prctl(PR_SET_PDEATHSIG, SIGKILL); /* cleared by the uid change */
			r.caps_zero = caps_effective_zero();
			r.uid = (unsigned int)geteuid();
		} else {
			XW_OPTS(xw_endpoint_opts, o, .pin_root = pin_root, .queue = c.queue);
			ep = NULL;
			r.err = xw_endpoint__open(c.ifname, c.id, &o, &ep);
			if (!r.err)
				xw_endpoint__close(ep);
			r.uid = (unsigned int)geteuid();
		}
		r.logerrs = logerrs;
		snprintf(r.log, sizeof(r.log), "%s", logbuf);
		if (write(fd, &r, sizeof(r)) != sizeof(r))
			break;
	}
	fflush(NULL);
	_exit(0);
}

static pid_t helper_start(int *fd)
{
	int sv[2];
	pid_t pid;

	REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		xwt_pin_dir[0] = '\0'; /* the pins are the parent's */
		xwt_failures = xwt_checks = 0;
		close(sv[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		time_limit();
		xwt_chan_who = me = "helper";
		helper_loop(sv[1]);
	}
	close(sv[1]);
	*fd = sv[0];
	return pid;
}

static void helper_call(int fd, int op, const char *ifname, __u16 id, __u32 queue,
			struct hrep *r)
{
	struct hcmd c = { .op = op, .id = id, .queue = queue };

	snprintf(c.ifname, sizeof(c.ifname), "%s", ifname ? ifname : "");
	send_obj(fd, &c, sizeof(c));
	if (op != H_EXIT)
		recv_obj(fd, r, sizeof(*r));
}

/* One expected failure: the errno, its explanation, a logged message. */
static void expect_err(const char *what, int err, int want, const char *why, int nlogerrs,
		       const char *log, const char *log_has)
{
	const char *nl = strchr(log, '\n');
	int n = nl ? (int)(nl - log) : (int)strlen(log);

	printf("  %-44s -> %d: %s\n  %-44s    log: %.*s\n", what, err, xw_strerror(err), "", n,
	       n ? log : "(nothing logged)");
	CHECK(err == want, "%s: got %d (%s), want %d (%s)", what, err, xw_strerror(err), want,
	      xw_strerror(want));
	CHECK(strstr(xw_strerror(err), why), "%s: xw_strerror(%d) = \"%s\" does not say \"%s\"",
	      what, err, xw_strerror(err), why);
	CHECK(nlogerrs > 0 && (!log_has || strstr(log, log_has)),
	      "%s: no error logged%s%s (log: \"%s\")", what, log_has ? " mentioning " : "",
	      log_has ? log_has : "", log);
}

/* xw_endpoint__open in this process, expecting @want. */
static void expect_open_err(const char *what, const char *ifname, __u16 id,
			    const struct xw_endpoint_opts *o, int want, const char *why,
			    const char *log_has)
{
	struct xw_endpoint *ep = NULL;
	int err;

	log_clear();
	err = xw_endpoint__open(ifname, id, o, &ep);
	if (!err)
		xw_endpoint__close(ep);
	expect_err(what, err, want, why, logerrs, logbuf, log_has);
	CHECK(err || ep, "%s: success without an endpoint", what);
}

static void expect_eperm(const char *what, const struct hrep *r)
{
	int n = (int)strcspn(r->log, "\n");

	printf("  %-44s -> %d: %s\n  %-44s    log: %.*s\n", what, r->err, xw_strerror(r->err), "",
	       n ? n : 16, n ? r->log : "(nothing logged)");
	CHECK(r->err == -EPERM || r->err == -EACCES, "%s: got %d (%s), want -EPERM or -EACCES",
	      what, r->err, xw_strerror(r->err));
	CHECK(strstr(xw_strerror(r->err), "operation not permitted"),
	      "%s: xw_strerror(%d) = \"%s\" is not the \"operation not permitted\" explanation",
	      what, r->err, xw_strerror(r->err));
	CHECK(r->logerrs > 0, "%s: nothing logged to explain %d (%s)", what, r->err,
	      xw_strerror(r->err));
}

static void test_errors(void)
{
	struct xw_endpoint *e1, *s1;
	struct xw_addr a1;
	struct hrep r;
	char what[128];
	int hroot, huser, st, xsk;
	pid_t proot, puser;

	/* The -EAFNOSUPPORT explanation exists; its case needs another kernel. */
	xsk = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (xsk >= 0)
		close(xsk);
	printf("2. errors of xw_endpoint__open (note: a kernel without AF_XDP, -EAFNOSUPPORT "
	       "\"%s\", cannot be tested here: this kernel has AF_XDP)\n",
	       xw_strerror(-EAFNOSUPPORT));

	REQUIRE(xwt_sh("ip link add " IF_QA " type veth peer name " IF_QB " && ip link set " IF_QA
		       " up && ip link set " IF_QB " up") == 0, "one-queue veth pair");
	/* Helpers with a clean library state (nothing is open yet). */
	proot = helper_start(&hroot);
	puser = helper_start(&huser);

	/* Missing privileges, the program not attached yet. */
	helper_call(huser, H_DROP, NULL, 0, 0, &r);
	REQUIRE(r.err == 0 && r.uid == NOBODY, "helper: drop to uid %d: %s", NOBODY,
		xw_strerror(r.err));
	CHECK(r.caps_zero, "helper: uid %u still has effective capabilities", r.uid);
	helper_call(huser, H_OPEN, IF_QA, 3, 0, &r);
	expect_eperm("uid 65534, no capabilities, nothing attached", &r);
	CHECK(xdp_prog_lines(IF_QA) == 0, "an unprivileged open left a program on " IF_QA);

	/* Arguments and options. */
	{
		XW_OPTS(xw_endpoint_opts, o, .pin_root = pin_root);
		expect_open_err("missing interface " MISSING_IF, MISSING_IF, 1, &o, -ENODEV,
				"no such network interface", MISSING_IF);
		expect_open_err("endpoint id 1024", IF_QA, XW_MAX_ENDPOINTS, &o, -ERANGE,
				"value out of range", "1024");
	}
	{
		/* The program attached with 16 ids by this open: id 16 is
		 * beyond them, and the error names the setting. */
		XW_OPTS(xw_endpoint_opts, o, .pin_root = pin_root, .max_endpoints = 16);
		expect_open_err("endpoint id 16, max_endpoints 16", IF_QA, 16, &o, -ERANGE,
				"value out of range", "max_endpoints 16");
		CHECK(xdp_prog_lines(IF_QA) == 0,
		      "the failed open (id beyond max_endpoints) left its program attached");
		setenv("XDPWAKE_MAX_ENDPOINTS", "2000", 1);
		o.max_endpoints = 0;
		expect_open_err("XDPWAKE_MAX_ENDPOINTS=2000", IF_QA, 1, &o, -EINVAL,
				"invalid argument", "XDPWAKE_MAX_ENDPOINTS=2000");
		setenv("XDPWAKE_MAX_ENDPOINTS", "8", 1);
		expect_open_err("endpoint id 8, XDPWAKE_MAX_ENDPOINTS=8", IF_QA, 8, &o, -ERANGE,
				"value out of range", "max_endpoints 8");
		unsetenv("XDPWAKE_MAX_ENDPOINTS");
	}
	{
		XW_OPTS(xw_endpoint_opts, o, .pin_root = pin_root, .umem_frames = 100);
		expect_open_err("umem_frames 100 (not a power of two)", IF_QA, 1, &o, -EINVAL,
				"invalid argument", "umem_frames");
	}
	{
		XW_OPTS(xw_endpoint_opts, o, .pin_root = pin_root, .pull_spin_set = true,
			.pull_spin = XW_PULL_SPIN_MAX + 1);
		expect_open_err("pull_spin above XW_PULL_SPIN_MAX", IF_QA, 1, &o, -EINVAL,
				"invalid argument", "pull_spin");
	}
	{
		XW_OPTS(xw_endpoint_opts, o, .pin_root = pin_root, .pull_block = 33);
		expect_open_err("pull_block 33", IF_QA, 1, &o, -EINVAL, "invalid argument",
				"pull_block");
		CHECK(xdp_prog_lines(IF_QA) == 0,
		      "the failed open (pull_block) left its program attached");
	}
	{
		XW_OPTS(xw_endpoint_opts, o, .pin_root = pin_root);
		o.sz = 4;
		expect_open_err("opts.sz 4 (too small)", IF_QA, 1, &o, -EINVAL, "invalid argument",
				"too small");
	}

	/* Endpoint 1 open here: busy for this process and for another one. */
	e1 = open_ep(IF_QA, 1, 0);
	CHECK(xdp_prog_lines(IF_QA) > 0, "no program on " IF_QA " with an endpoint open");
	/* The pull spin's setter and the pulling hint: arguments checked;
	 * nothing is pulled by an endpoint that received nothing. */
	CHECK(xw_endpoint__set_pull_spin(e1, 0) == 0 &&
		      xw_endpoint__set_pull_spin(e1, XW_PULL_SPIN_MAX) == 0 &&
		      xw_endpoint__set_pull_spin(e1, XW_PULL_SPIN_MAX + 1) == -EINVAL &&
		      xw_endpoint__set_pull_spin(NULL, 1) == -EINVAL &&
		      xw_endpoint__set_pull_spin(e1, XW_PULL_SPIN_DEFAULT) == 0,
	      "xw_endpoint__set_pull_spin's argument checks");
	CHECK(xw_endpoint__pulling(e1) == 0 && xw_endpoint__pulling(NULL) == -EINVAL,
	      "xw_endpoint__pulling: %d on an idle endpoint", xw_endpoint__pulling(e1));
	{
		/* Attached without a setting: the host's default, which an
		 * id at it exceeds. */
		XW_OPTS(xw_iface_opts, io, .pin_root = pin_root, .no_attach = true);
		struct xw_iface *ifc = NULL;
		__u32 n = xw_max_endpoints_default(IF_QA);

		REQUIRE(xw_iface__open(IF_QA, &io, &ifc) == 0, "open the attached program");
		printf("  default endpoint count on " IF_QA ": %u (%d possible CPUs)\n", n,
		       libbpf_num_possible_cpus());
		CHECK(xw_iface__max_endpoints(ifc) == n && n >= 64 && n <= XW_MAX_ENDPOINTS &&
			      !(n & (n - 1)) && n >= 2 * (__u32)libbpf_num_possible_cpus(),
		      "attached with %u endpoint ids, the default is %u", xw_iface__max_endpoints(ifc),
		      n);
		{
			/* the `conns` hash: 64 entries per id (at least
			 * 4,096), allocated per entry */
			struct bpf_map_info mi = {};
			__u32 len = sizeof(mi), want = n * 64 < 4096 ? 4096 : n * 64;
			int fd = xw_iface__map_fd(ifc, "conns");

			REQUIRE(fd >= 0 && !bpf_obj_get_info_by_fd(fd, &mi, &len), "conns map info");
			CHECK(mi.max_entries == (want > 65536 ? 65536 : want) &&
				      (mi.map_flags & BPF_F_NO_PREALLOC),
			      "conns: %u entries, flags %#x, for %u endpoint ids", mi.max_entries,
			      mi.map_flags, n);
		}
		xw_iface__close(ifc);
		XW_OPTS(xw_endpoint_opts, o, .pin_root = pin_root, .max_endpoints = 1024);
		snprintf(what, sizeof(what), "max_endpoints %u", n);
		expect_open_err("endpoint id at the default count (attached)", IF_QA, (__u16)n, &o,
				-ERANGE, "value out of range", what);
	}
	{
		XW_OPTS(xw_endpoint_opts, o, .pin_root = pin_root);
		expect_open_err("endpoint 1 again in this process", IF_QA, 1, &o, -EBUSY, "busy",
				"endpoint 1");
	}
	helper_call(hroot, H_OPEN, IF_QA, 1, 0, &r);
	snprintf(what, sizeof(what), "process %d", (int)getpid());
	expect_err("endpoint 1 in another process (live owner)", r.err, -EBUSY, "busy", r.logerrs,
		   r.log, what);
	helper_call(hroot, H_OPEN, IF_QA, 2, 0, &r);
	expect_err("endpoint 2 in another process, same queue", r.err, -EBUSY, "busy", r.logerrs,
		   r.log, "already bound");
	{
		XW_OPTS(xw_endpoint_opts, o, .pin_root = pin_root, .queue = 5);
		expect_open_err("queue 5 on a one-queue veth", IF_QA, 2, &o, -EINVAL,
				"invalid argument", "queue 5");
	}
	{
		/* XW_QUEUE_ANY: the queue this process has already; in another
		 * process the only queue is held by a live endpoint: skipped at
		 * once (no wait for a release), nothing else free. */
		XW_OPTS(xw_endpoint_opts, o, .pin_root = pin_root, .queue = XW_QUEUE_ANY);
		struct xw_endpoint *e2 = NULL;
		int err;
		unsigned long long t0;

		err = xw_endpoint__open(IF_QA, 2, &o, &e2);
		CHECK(err == 0 && xw_endpoint__queue(e2) == 0,
		      "XW_QUEUE_ANY in the process holding queue 0: %s, queue %d", xw_strerror(err),
		      err ? -1 : xw_endpoint__queue(e2));
		if (!err)
			xw_endpoint__close(e2);
		t0 = xwu_now_ns();
		helper_call(hroot, H_OPEN, IF_QA, 2, XW_QUEUE_ANY, &r);
		expect_err("XW_QUEUE_ANY, the only queue held by a live process", r.err, -ENOSPC,
			   "no free RX queue", r.logerrs, r.log, "no free queue");
		CHECK(strstr(r.log, IF_QA) && strstr(r.log, "1 RX queues") &&
			      strstr(r.log, "ethtool -L") && strstr(r.log, "numrxqueues"),
		      "the no-free-queue error names the interface, its queues and the fix: %s",
		      r.log);
		CHECK(xwu_now_ns() - t0 < 2000000000ULL,
		      "XW_QUEUE_ANY waited %.1f s for a queue a live process holds",
		      (xwu_now_ns() - t0) / 1e9);
	}
	/* Missing privileges, the program attached (its pins exist). */
	helper_call(huser, H_OPEN, IF_QA, 3, 0, &r);
	expect_eperm("uid 65534, no capabilities, program attached", &r);

	/* After all that, endpoint 1 still receives. */
	s1 = open_ep(IF_QB, 1, 0);
	ep_addr(e1, &a1);
	send_text(s1, &a1, "endpoint 1 still works", 0x21);
	recv_text(e1, "endpoint 1 still works", 0x21, 1);
	xw_endpoint__close(s1);
	xw_endpoint__close(e1);
	CHECK(xdp_prog_lines(IF_QA) == 0 && xdp_prog_lines(IF_QB) == 0,
	      "programs left attached on the one-queue pair (%d, %d)", xdp_prog_lines(IF_QA),
	      xdp_prog_lines(IF_QB));

	helper_call(hroot, H_EXIT, NULL, 0, 0, NULL);
	helper_call(huser, H_EXIT, NULL, 0, 0, NULL);
	CHECK(waitpid(proot, &st, 0) == proot && WIFEXITED(st) && !WEXITSTATUS(st), "helper");
	CHECK(waitpid(puser, &st, 0) == puser && WIFEXITED(st) && !WEXITSTATUS(st), "helper");
	close(hroot);
	close(huser);
	xwt_sh("ip link del " IF_QA);
}

/* ---- 3. several processes per host on distinct queues --------------------- */

/* One message of @len over @ep, the receive posted first; both sides call
 * it with the same arguments except @sender. */
static void transfer(struct xw_endpoint *ep, int chan, const struct xw_addr *peer, int sender,
		     size_t len, unsigned int seed)
{
	static unsigned char *buf;
	static size_t cap;
	struct xw_request *req;
	XW_OPTS(xw_status, st);
	long d;
	int err;

	buf = xwt_grow(buf, &cap, len + 64);
	if (sender) {
		xwt_fill(buf, len, seed);
		bar(chan, "posted");
		err = xw_endpoint__isend(ep, peer, buf, len, 0x5000 + seed, &req);
		REQUIRE(err == 0, "%s: isend %zu: %s", me, len, xw_strerror(err));
		err = xw_request__wait(req, &st, TMO);
		CHECK(err == 0 && st.error == 0, "%s: send %zu bytes: %s / %d", me, len,
		      xw_strerror(err), st.error);
		return;
	}
	memset(buf, 0xEE, len + 64);
	err = xw_endpoint__irecv(ep, buf, len, 0x5000 + seed, ~0ULL, &req);
	REQUIRE(err == 0, "%s: irecv: %s", me, xw_strerror(err));
	bar(chan, "posted");
	err = xw_request__wait(req, &st, TMO);
	CHECK(err == 0, "%s: recv %zu bytes: %s", me, len, xw_strerror(err));
	if (err)
		return;
	CHECK(st.error == 0 && st.len == len && st.msg_len == len && st.match == 0x5000 + seed &&
	      xw_addr_equal(&st.src, peer),
	      "%s: recv %zu: status error %d len %zu msg_len %zu match %#llx from endpoint %u", me,
	      len, st.error, st.len, st.msg_len, (unsigned long long)st.match, st.src.ep);
	d = xwt_first_diff(buf, len, seed);
	CHECK(d < 0, "%s: recv %zu: byte %ld differs", me, len, d);
	for (int i = 0; i < 64; i++)
		if (buf[len + i] != 0xEE) {
			CHECK(0, "%s: recv %zu: wrote past the buffer", me, len);
			break;
		}
}

#define MIS_MATCH 0xBADull

struct mp_role {
	const char *name;
	const char *ifname;
	int is_b, proc; /* host B?  P0 or P1 */
	int pair;	/* channel to the same process of the other host */
	int local;	/* channel to the other process of this host */
};

/* Let in-flight frames settle (completions, last receives). */
static void settle(struct xw_endpoint *ep)
{
	for (int i = 0; i < 50; i++) {
		xw_endpoint__progress(ep);
		usleep(100);
	}
}

static void mp_run(const struct mp_role *r)
{
	static const size_t sizes[] = { 1, 10 * 1024, 200 * 1024 };
	__u16 id = r->proc ? 2 : 1;
	struct xw_endpoint *ep = open_ep(r->ifname, id, (__u32)r->proc);
	struct xw_endpoint_stats es = { .sz = sizeof(es) };
	XW_OPTS(xw_stats, xs);
	XW_OPTS(xw_stats, xs2);
	struct xw_addr mine, peer;
	unsigned int seed = 100 * (unsigned int)(r->proc + 1);
	int n = 0;

	ep_addr(ep, &mine);
	xchg_addr(r->pair, &mine, &peer);
	CHECK(peer.ep == id, "%s: peer endpoint %u, want %u", r->name, peer.ep, id);
	/* Both pairs at the same time: three rounds of every size, both ways. */
	for (int round = 0; round < 3; round++)
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			for (int dir = 0; dir < 2; dir++, n++)
				transfer(ep, r->pair, &peer, dir == r->is_b, sizes[i], seed++);
	bar(r->pair, "mp traffic");
	settle(ep);

	REQUIRE(xw_endpoint__stats(ep, &es) == 0, "stats");
	CHECK(es.tx_frames > 0 && es.rx_frames > 0 && es.rx_bad == 0 && es.rx_dropped == 0,
	      "%s: endpoint stats tx %llu rx %llu bad %llu dropped %llu", r->name,
	      (unsigned long long)es.tx_frames, (unsigned long long)es.rx_frames,
	      (unsigned long long)es.rx_bad, (unsigned long long)es.rx_dropped);
	CHECK(es.umem_frames_fill + es.umem_frames_free_tx + es.umem_frames_tx_inflight ==
	      es.umem_frames_total, "%s: UMEM frames unaccounted", r->name);
	/* The first turn of the receive ring was taken when the socket was
	 * created (port.c, port_warm): every receive frame on queue 0; on
	 * another queue all or none (Linux runs live test frames as queue
	 * 0's), the fill ring full either way. */
	CHECK(r->proc ? es.umem_rx_warmed == 0 || es.umem_rx_warmed == es.umem_frames_total / 2
		      : es.umem_rx_warmed == es.umem_frames_total / 2,
	      "%s (queue %d): %llu of %llu receive frames warmed at creation", r->name, r->proc,
	      (unsigned long long)es.umem_rx_warmed, (unsigned long long)es.umem_frames_total / 2);
	REQUIRE(xw_iface__stats(xw_endpoint__iface(ep), id, &xs) == 0, "xw_iface__stats");
	CHECK(xs.drop_queue == 0 && xs.frames_redirected >= es.rx_frames && xs.frames_redirected,
	      "%s: XDP stats of endpoint %u: drop_queue %llu, redirected %llu (library rx %llu)",
	      r->name, id, (unsigned long long)xs.drop_queue,
	      (unsigned long long)xs.frames_redirected, (unsigned long long)es.rx_frames);
	printf("  %s (pid %d, %s endpoint %u, queue %d): %d messages, tx %llu rx %llu frames; XDP: "
	       "redirected %llu, drop_queue %llu\n", r->name, (int)getpid(), r->ifname, id,
	       r->proc, n, (unsigned long long)es.tx_frames, (unsigned long long)es.rx_frames,
	       (unsigned long long)xs.frames_redirected, (unsigned long long)xs.drop_queue);
	fflush(stdout);

	/*
	 * Queue mismatch: A.P1 (TX queue 1) sends to B's endpoint 1, whose
	 * socket is on queue 0.  veth hands the frame to B's RX queue 1; the
	 * XDP program drops it and counts drop_queue for endpoint 1.
	 */
	if (r->is_b && !r->proc) {
		struct xw_request *req;
		XW_OPTS(xw_status, st);
		char buf[64];
		unsigned long long end;
		int err;

		bar(r->pair, "mis ready");
		bar(r->pair, "mis sent");
		end = xwu_now_ns() + ASYNC_NS;
		do {
			usleep(1000);
			REQUIRE(xw_iface__stats(xw_endpoint__iface(ep), id, &xs2) == 0, "stats");
		} while (xs2.drop_queue == xs.drop_queue && xwu_now_ns() < end);
		CHECK(xs2.drop_queue >= xs.drop_queue + 1,
		      "%s: a frame from queue 1 to endpoint 1 (queue 0): drop_queue %llu -> %llu",
		      r->name, (unsigned long long)xs.drop_queue,
		      (unsigned long long)xs2.drop_queue);
		CHECK(xs2.frames_redirected == xs.frames_redirected,
		      "%s: the mismatched frame was redirected (%llu -> %llu)", r->name,
		      (unsigned long long)xs.frames_redirected,
		      (unsigned long long)xs2.frames_redirected);
		REQUIRE(xw_endpoint__irecv(ep, buf, sizeof(buf), MIS_MATCH, ~0ULL, &req) == 0,
			"irecv");
		err = xw_request__wait(req, &st, 200);
		CHECK(err == -ETIMEDOUT, "%s: the mismatched message was received (%d)", r->name,
		      err);
		if (err == -ETIMEDOUT) {
			CHECK(xw_request__cancel(req) == 0, "cancel");
			xw_request__wait(req, &st, TMO);
		}
		printf("  queue mismatch: A.P1 (TX queue 1) -> B endpoint 1 (queue 0): dropped by "
		       "B's XDP program, drop_queue %llu -> %llu, not delivered\n",
		       (unsigned long long)xs.drop_queue, (unsigned long long)xs2.drop_queue);
		fflush(stdout);
	} else if (!r->is_b && !r->proc) {
		char c;

		bar(r->pair, "mis ready");
		send_obj(r->local, &peer, sizeof(peer)); /* B's endpoint 1 */
		recv_obj(r->local, &c, 1);
		bar(r->pair, "mis sent");
	} else if (!r->is_b && r->proc) {
		struct xw_addr dst;

		recv_obj(r->local, &dst, sizeof(dst));
		send_text(ep, &dst, "from the wrong queue", MIS_MATCH);
		settle(ep);
		send_obj(r->local, "s", 1);
	}
	/* A's endpoints close (a CLOSE to each peer) only once B.P0 has
	 * counted its redirected frames. */
	if (!r->proc)
		bar(r->pair, "mis checked");
	bar(r->local, "mp done");
	xw_endpoint__close(ep);
}

/* Fork P1 (this process has no library object open), run P0 here. */
static void test_processes(int is_b, const char *ifname, int pair0, int pair1)
{
	struct mp_role r0 = { .name = is_b ? "B.P0" : "A.P0", .ifname = ifname, .is_b = is_b,
			      .proc = 0, .pair = pair0 };
	int sv[2], st;
	pid_t pid;

	REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		struct mp_role r1 = { .name = is_b ? "B.P1" : "A.P1", .ifname = ifname,
				      .is_b = is_b, .proc = 1, .pair = pair1, .local = sv[1] };

		xwt_pin_dir[0] = '\0'; /* the host's pins belong to P0 */
		xwt_failures = xwt_checks = 0;
		close(sv[0]);
		close(pair0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		time_limit();
		xwt_chan_who = me = r1.name;
		mp_run(&r1);
		fflush(NULL);
		_exit(xwt_failures ? 1 : 0);
	}
	close(sv[1]);
	close(pair1);
	r0.local = sv[0];
	xwt_chan_who = me = r0.name;
	mp_run(&r0);
	REQUIRE(waitpid(pid, &st, 0) == pid, "waitpid");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s failed (status %#x)",
	      is_b ? "B.P1" : "A.P1", st);
	close(sv[0]);
	xwt_chan_who = me = is_b ? "B" : "A";
	/* Both processes closed: the program is gone from the interface. */
	CHECK(xdp_prog_lines(ifname) == 0, "%s: program still attached after both processes "
	      "closed their endpoints", ifname);
}

/*
 * Endpoint ids are claimed atomically: RACERS processes open the same id at
 * the same moment (each on its own queue, XW_QUEUE_ANY); exactly one gets
 * it, every other one -EBUSY.  (The registry of the program is read at the
 * start of an open and written at its end: without the claim, two could
 * pass the check and both register.)  Repeated, as the window is short.
 */
#define RACERS 6
#define RACE_ROUNDS 5
static void test_id_race(void)
{
	struct xw_iface *ifc;
	int wins_total = 0;

	XW_OPTS(xw_iface_opts, io, .pin_root = pin_root);
	/* attached once here: the racers only open its pinned maps */
	REQUIRE(xw_iface__open(IF_A, &io, &ifc) == 0, "attach " IF_A);
	for (int round = 0; round < RACE_ROUNDS; round++) {
		int go[2], res[2], done[2], wins = 0, busy = 0, other = 0, st;
		pid_t pids[RACERS];

		REQUIRE(pipe(go) == 0 && pipe(res) == 0 && pipe(done) == 0, "pipe");
		fflush(NULL);
		for (int i = 0; i < RACERS; i++) {
			pids[i] = fork();
			REQUIRE(pids[i] >= 0, "fork");
			if (pids[i] == 0) {
				struct xw_endpoint *ep = NULL;
				char c;
				int err;

				XW_OPTS(xw_endpoint_opts, o, .pin_root = pin_root,
					.queue = XW_QUEUE_ANY);
				prctl(PR_SET_PDEATHSIG, SIGKILL);
				close(go[1]);
				close(res[0]);
				close(done[1]);
				xwt_pin_dir[0] = '\0'; /* the pins belong to the parent */
				if (read(go[0], &c, 1) != 0) /* closed by the parent: go */
					_exit(3);
				err = xw_endpoint__open(IF_A, 7, &o, &ep);
				if (write(res[1], &err, sizeof(err)) != sizeof(err))
					_exit(3);
				/* hold it until every racer has answered */
				if (read(done[0], &c, 1) != 0)
					_exit(3);
				xw_endpoint__close(ep);
				_exit(0);
			}
		}
		close(go[0]);
		close(res[1]);
		close(done[0]);
		close(go[1]); /* all racers start now */
		for (int i = 0; i < RACERS; i++) {
			int err;

			REQUIRE(read(res[0], &err, sizeof(err)) == sizeof(err), "racer result");
			if (!err)
				wins++;
			else if (err == -EBUSY)
				busy++;
			else
				other++;
		}
		close(done[1]);
		for (int i = 0; i < RACERS; i++)
			REQUIRE(waitpid(pids[i], &st, 0) == pids[i] && WIFEXITED(st) &&
					WEXITSTATUS(st) == 0,
				"racer exit %#x", st);
		close(res[0]);
		CHECK(wins == 1 && busy == RACERS - 1 && !other,
		      "round %d: %d processes opening endpoint 7 at once: %d got it, %d -EBUSY, %d "
		      "other errors (want exactly 1)", round, RACERS, wins, busy, other);
		wins_total += wins;
	}
	REQUIRE(xw_iface__detach(ifc) == 0, "detach " IF_A);
	printf("   endpoint id claimed atomically: %d rounds of %d processes opening id 7 at "
	       "once, %d winner(s) in all\n", RACE_ROUNDS, RACERS, wins_total);
}

/* ---- 4. endpoints sharing one socket -------------------------------------- */

static void test_shared_socket(int is_b, int chan)
{
	struct xw_addr a4, a5, pb;
	int s0, s1, s2;

	if (is_b) {
		struct xw_endpoint *eb = open_ep(IF_B, 1, 0);
		struct xw_addr mine;

		ep_addr(eb, &mine);
		send_obj(chan, &mine, sizeof(mine));
		recv_obj(chan, &a4, sizeof(a4));
		recv_obj(chan, &a5, sizeof(a5));
		send_text(eb, &a4, "to endpoint 4", 4);
		send_text(eb, &a5, "to endpoint 5", 5);
		bar(chan, "e4 closed");
		send_text(eb, &a5, "to endpoint 5 again", 55);
		bar(chan, "e5 closed");
		bar(chan, "e4 reopened");
		recv_text(eb, "from the reopened endpoint 4", 44, 4);
		bar(chan, "stale peer");
		send_text(eb, &a4, "to the reopened endpoint 4", 45);
		bar(chan, "shared done");
		xw_endpoint__close(eb);
		return;
	}

	struct xw_endpoint *e4, *e5;
	int lines;

	recv_obj(chan, &pb, sizeof(pb));
	CHECK(xdp_prog_lines(IF_A) == 0, "program attached before part 4");
	count_fds(&s0);
	e4 = open_ep(IF_A, 4, 0);
	count_fds(&s1);
	e5 = open_ep(IF_A, 5, 0);
	count_fds(&s2);
	CHECK(s1 == s0 + 1 && s2 == s1, "sockets: %d, endpoint 4 open %d, 4 and 5 open %d (want "
	      "one AF_XDP socket for both)", s0, s1, s2);
	CHECK(xw_endpoint__fd(e4) >= 0 && xw_endpoint__fd(e5) >= 0 &&
	      xw_endpoint__fd(e4) != xw_endpoint__fd(e5), "each endpoint has its own wake fd");
	ep_addr(e4, &a4);
	ep_addr(e5, &a5);
	send_obj(chan, &a4, sizeof(a4));
	send_obj(chan, &a5, sizeof(a5));
	/* Received in the other order than sent: 5's frame passes through 4. */
	recv_text(e5, "to endpoint 5", 5, 1);
	recv_text(e4, "to endpoint 4", 4, 1);
	xw_endpoint__close(e4);
	bar(chan, "e4 closed");
	recv_text(e5, "to endpoint 5 again", 55, 1);
	CHECK(xdp_prog_lines(IF_A) > 0, "program detached while endpoint 5 is open");
	xw_endpoint__close(e5);
	lines = xdp_prog_lines(IF_A);
	CHECK(lines == 0, "`ip -d link show " IF_A " | grep -c prog/xdp` = %d after both "
	      "endpoints closed, want 0 (the veth still exists)", lines);
	bar(chan, "e5 closed");
	e4 = open_ep(IF_A, 4, 0);
	CHECK(xdp_prog_lines(IF_A) > 0, "reopening endpoint 4 did not attach the program");
	bar(chan, "e4 reopened");
	send_text(e4, &pb, "from the reopened endpoint 4", 44);
	bar(chan, "stale peer");
	/* B's endpoint stayed open and sends to the old incarnation's address:
	 * it learned the new nonce from the CONNECT of the message above. */
	recv_text(e4, "to the reopened endpoint 4", 45, 1);
	bar(chan, "shared done");
	xw_endpoint__close(e4);
	printf("4. endpoints 4 and 5 on queue 0 of one process: one socket (%d -> %d -> %d "
	       "sockets), both receive; 5 alone still receives; closing both detaches (prog/xdp "
	       "lines %d); reopening attaches again, and the reopened endpoint (a new nonce) "
	       "reaches and is reached by the peer that stayed open\n", s0, s1, s2, lines);
}

/* ---- 5. open/send/recv/close cycles --------------------------------------- */

/*
 * A: per cycle, open endpoint 6 on queue 0, send "cycle i" to B, receive
 * the echo, close.  B opens its endpoint 1 on queue 0 afresh for every
 * cycle as well: the protocol numbers messages per peer from 0, so an
 * endpoint that stayed open would take the new incarnation's messages for
 * duplicates of the old one's.
 */
static int cycles_a(int chan, int max_cycles, double *secs, int *busy, double *busy_ms)
{
	unsigned long long start = xwu_now_ns();
	struct xw_endpoint *ea;
	struct xw_addr pb;
	char msg[64];
	int i, failures = xwt_failures;

	for (i = 0; i < max_cycles; i++) {
		char cmd[2] = { 'c', (char)(i % CYCLE_QUEUES) };

		send_obj(chan, cmd, 2);
		ea = open_ep_busy(IF_A, 6, (__u32)(i % CYCLE_QUEUES), busy, busy_ms);
		recv_obj(chan, &pb, sizeof(pb)); /* B's endpoint is open */
		snprintf(msg, sizeof(msg), "cycle %d", i);
		send_text(ea, &pb, msg, (__u64)i);
		recv_text(ea, msg, (__u64)i, 1);
		xw_endpoint__close(ea);
		recv_obj(chan, msg, 1); /* B closed */
		if (xwt_failures != failures)
			break;
	}
	send_obj(chan, "e", 2);
	*secs = (double)(xwu_now_ns() - start) / 1e9;
	return i;
}

static void cycles_b(int chan, int *busy, double *busy_ms)
{
	struct xw_endpoint *eb;
	XW_OPTS(xw_status, st);
	struct xw_addr mine;
	char cmd[2], buf[64];
	int err;

	for (;;) {
		recv_obj(chan, cmd, 2);
		if (cmd[0] != 'c')
			break;
		eb = open_ep_busy(IF_B, 1, (__u32)cmd[1], busy, busy_ms);
		ep_addr(eb, &mine);
		send_obj(chan, &mine, sizeof(mine));
		st = (struct xw_status){ .sz = sizeof(st) };
		err = xw_endpoint__recv(eb, buf, sizeof(buf), 0, 0, &st, TMO);
		CHECK(err == 0 && st.src.ep == 6, "B: cycle receive: %s from endpoint %u",
		      xw_strerror(err), st.src.ep);
		if (!err)
			CHECK(xw_endpoint__send(eb, &st.src, buf, st.len, st.match, TMO) == 0,
			      "B: echo");
		settle(eb);
		xw_endpoint__close(eb);
		send_obj(chan, "x", 1);
	}
}

/* Reopening right after a close must not fail with -EBUSY (see
 * open_ep_busy()). */
static void check_busy(const char *what, int busy, int n, double max_ms)
{
	if (busy)
		printf("  %s: %s: %d of %d opens found the queue still bound by the socket closed "
		       "just before (-EBUSY, \"already bound by another AF_XDP socket\"); free "
		       "after up to %.1f ms\n", me, what, busy, n, max_ms);
	CHECK(busy == 0, "%s: %s: xw_endpoint__open right after xw_endpoint__close on the same "
	      "queue failed with -EBUSY %d times of %d (the kernel frees the queue "
	      "asynchronously; the library does not wait for it)", me, what, busy, n);
}

/*
 * Locked memory: root's UMEM pinning is not charged (CAP_IPC_LOCK), so
 * part 5 drops CAP_IPC_LOCK: every UMEM is then charged to the user's
 * locked memory, and an open fails with -ENOBUFS once the UMEMs still
 * pinned exceed RLIMIT_MEMLOCK (the hard limit; raising it needs
 * CAP_SYS_RESOURCE, often missing in containers).  Part 5 uses 1 MiB
 * UMEMs (256 frames): the keepers and one cycle endpoint on both hosts
 * (the same user) pin 4 MiB, so with 8 MiB a UMEM left pinned by each
 * cycle exhausts the limit within a few cycles.
 */
#define CYCLE_UMEM_FRAMES 256
static unsigned long memlock_mib;

static void charge_locked_memory(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];
	struct rlimit rl;

	umem_frames = CYCLE_UMEM_FRAMES;
	REQUIRE(getrlimit(RLIMIT_MEMLOCK, &rl) == 0, "RLIMIT_MEMLOCK: %s", strerror(errno));
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < (6ul << 20)) {
		printf("  %s: locked memory not checked: RLIMIT_MEMLOCK hard limit %lu KiB < 6 MiB\n",
		       me, (unsigned long)rl.rlim_max >> 10);
		return;
	}
	rl.rlim_cur = rl.rlim_max = rl.rlim_max < (8ul << 20) ? rl.rlim_max : 8ul << 20;
	REQUIRE(setrlimit(RLIMIT_MEMLOCK, &rl) == 0, "RLIMIT_MEMLOCK: %s", strerror(errno));
	memlock_mib = rl.rlim_max >> 20;
	REQUIRE(syscall(SYS_capget, &hdr, data) == 0, "capget: %s", strerror(errno));
	data[CAP_IPC_LOCK / 32].effective &= ~(1u << (CAP_IPC_LOCK % 32));
	data[CAP_IPC_LOCK / 32].permitted &= ~(1u << (CAP_IPC_LOCK % 32));
	REQUIRE(syscall(SYS_capset, &hdr, data) == 0, "capset: %s", strerror(errno));
}

static void test_cycles(int is_b, int chan)
{
	struct xw_endpoint *keep;
	struct fdset fdset0;
	int fds0, fds1, maps0, progs0, n, busy = 0;
	__u32 maps_max, progs_max;
	double secs, busy_ms = 0;

	/* Keepers on queue 1 keep the programs attached: only the sockets,
	 * rings and endpoint entries come and go. */
	charge_locked_memory();
	if (memlock_mib) {
		/* The limit bites: a UMEM twice its size is refused. */
		XW_OPTS(xw_endpoint_opts, big, .pin_root = pin_root, .queue = 6,
			.umem_frames = (__u32)(2 * (memlock_mib << 20) / 4096));
		struct xw_endpoint *e = NULL;
		int err = xw_endpoint__open(is_b ? IF_B : IF_A, 8, &big, &e);

		CHECK(err == -ENOBUFS, "%s: a %lu MiB UMEM over RLIMIT_MEMLOCK %lu MiB: %s, want "
		      "-ENOBUFS", me, 2 * memlock_mib, memlock_mib, xw_strerror(err));
		if (!err)
			xw_endpoint__close(e);
	}
	keep = open_ep(is_b ? IF_B : IF_A, 7, 7);
	fds0 = count_fds(NULL);
	bar(chan, "keepers open");
	if (is_b) {
		cycles_b(chan, &busy, &busy_ms);
		fds1 = count_fds(NULL);
		CHECK(fds1 == fds0, "B: %d file descriptors before the cycles, %d after", fds0, fds1);
		check_busy("cycles", busy, CYCLES, busy_ms);
		bar(chan, "cycles done");
		/* A's cycles now attach and detach A's program each time. */
		bar(chan, "keeper A closed");
		busy = 0;
		busy_ms = 0;
		cycles_b(chan, &busy, &busy_ms);
		fds1 = count_fds(NULL);
		CHECK(fds1 == fds0, "B: %d file descriptors before the attach cycles, %d after",
		      fds0, fds1);
		check_busy("attach cycles", busy, ATTACH_CYCLES, busy_ms);
		xw_endpoint__close(keep);
		CHECK(xdp_prog_lines(IF_B) == 0, "B: program left on " IF_B);
		bar(chan, "attach cycles done");
		return;
	}

	maps0 = count_bpf_ids(0, &maps_max);
	n = cycles_a(chan, CYCLES, &secs, &busy, &busy_ms);
	fds1 = count_fds(NULL);
	printf("5. %d open/send/recv/close cycles (both hosts reopen; programs stay attached) in "
	       "%.2f s\n  file descriptors before %d, after %d\n", n, secs, fds0, fds1);
	if (memlock_mib)
		printf("  locked memory: every UMEM charged to RLIMIT_MEMLOCK %lu MiB (1 MiB each); "
		       "opens that waited for a closed UMEM's release: %d\n", memlock_mib,
		       memlock_waits);
	CHECK(n == CYCLES, "only %d of %d cycles", n, CYCLES);
	CHECK(fds1 == fds0, "%d file descriptors before the cycles, %d after", fds0, fds1);
	check_busy("cycles", busy, n, busy_ms);
	check_bpf_objects(0, "cycles", maps0, maps_max);
	{
		int wr = xw_iface__map_fd(xw_endpoint__iface(keep), "wake_rings");
		__u32 key = 6, inner;

		CHECK(wr >= 0 && bpf_map_lookup_elem(wr, &key, &inner) && errno == ENOENT,
		      "endpoint 6's wake ring is still registered after its close");
	}
	bar(chan, "cycles done");

	/* Without the keeper every open attaches the program, every close
	 * detaches it. */
	xw_endpoint__close(keep);
	CHECK(xdp_prog_lines(IF_A) == 0, "program left on " IF_A " after the last close");
	bar(chan, "keeper A closed");
	fds0 = count_fds(NULL);
	fdset_take(&fdset0);
	maps0 = count_bpf_ids(0, &maps_max);
	progs0 = count_bpf_ids(1, &progs_max);
	busy = 0;
	busy_ms = 0;
	n = cycles_a(chan, ATTACH_CYCLES, &secs, &busy, &busy_ms);
	fds1 = count_fds(NULL);
	printf("  %d cycles that attach and detach the program on " IF_A " in %.2f s (%.0f ms "
	       "each)\n  file descriptors before %d, after %d\n", n, secs,
	       n ? secs * 1000 / n : 0.0, fds0, fds1);
	CHECK(n == ATTACH_CYCLES, "only %d of %d attach/detach cycles", n, ATTACH_CYCLES);
	CHECK(fds1 == fds0, "%d file descriptors before the attach cycles, %d after", fds0, fds1);
	if (fds1 != fds0)
		fdset_report("attach cycles", &fdset0);
	check_busy("attach cycles", busy, n, busy_ms);
	CHECK(xdp_prog_lines(IF_A) == 0, "program left on " IF_A " after the attach cycles");
	check_bpf_objects(0, "attach cycles", maps0, maps_max);
	check_bpf_objects(1, "attach cycles", progs0, progs_max);
	bar(chan, "attach cycles done");
}

/* ---- the two hosts ---------------------------------------------------------- */

static void run_b(int chan, int pair1)
{
	bar(chan, "part 2 done");
	test_processes(1, IF_B, chan, pair1);
	bar(chan, "part 3 done");
	test_shared_socket(1, chan);
	bar(chan, "part 4 done");
	test_cycles(1, chan);
	bar(chan, "final");
}

int main(void)
{
	struct xwt_hosts h = { .if_a = IF_A, .if_b = IF_B, .veth_opts = "numtxqueues 8 numrxqueues 8",
			       .veth_what = "an 8-queue veth pair", .nchan = 2, .b_init = time_limit };
	int xsk;

	t_start = xwu_now_ns();
	setvbuf(stdout, NULL, _IOLBF, 0);
	xwt_chan_who = me;
	time_limit();
	xw_set_log(log_cb, NULL, getenv("XWT_VERBOSE") ? XW_LOG_DEBUG : XW_LOG_WARN);

	test_addresses();

	xwt_private_netns();
	snprintf(pin_root, sizeof(pin_root), "%s", xwt_pin_root());
	xsk = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (xsk < 0 && errno == EAFNOSUPPORT)
		xwt_skip("AF_XDP sockets not supported by this kernel (parts 2-5)");
	if (xsk >= 0)
		close(xsk);
	xwt_hosts_fork(&h);
	if (h.is_b) {
		xwt_chan_who = me = "B";
		snprintf(pin_root, sizeof(pin_root), "%s", h.pin_root);
		bar(h.chan[0], "up");
		run_b(h.chan[0], h.chan[1]);
		exit(xwt_failures ? 1 : 0);
	}
	bar(h.chan[0], "up");

	test_errors();
	printf("   (%.1f s)\n", elapsed());
	bar(h.chan[0], "part 2 done");

	printf("3. two processes per host: P0 endpoint 1 on queue 0, P1 endpoint 2 on queue 1 "
	       "(8-queue veth " IF_A " <-> " IF_B ")\n");
	test_processes(0, IF_A, h.chan[0], h.chan[1]);
	test_id_race();
	printf("   (%.1f s)\n", elapsed());
	bar(h.chan[0], "part 3 done");

	test_shared_socket(0, h.chan[0]);
	printf("   (%.1f s)\n", elapsed());
	bar(h.chan[0], "part 4 done");

	test_cycles(0, h.chan[0]);
	bar(h.chan[0], "final");
	printf("   (%.1f s)\n", elapsed());

	xwt_hosts_join(&h);
	return xwt_done();
}
