// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Leftovers of killed processes (userspace/lib/claim.c): an endpoint's
 * local inbox and claim lock file in /dev/shm stay when its process is
 * SIGKILLed; they are removed by `xdpwake status --clean` on demand and by
 * the next process that opens an endpoint on the interface, never those of
 * a live endpoint (of this process or another).
 *
 * One anonymous network namespace, a veth pair with 4 queues.  This
 * process (A) holds endpoint 1 (queue 0) throughout; L, a live child,
 * endpoint 2.  (a) K1 opens endpoint 4 and is killed; a half-created
 * inbox and an orphan inbox without lock file are planted beside it;
 * `xdpwake status --clean IFACE` removes exactly those, says so, and
 * leaves 1's and 2's files.  (b) K2 opens endpoint 6 and is killed; D, the
 * next process to open an endpoint (7) on the interface: 6's files are gone
 * after its open, 1's and 2's are there.  (c) 1 and 2 still talk.
 */
#include <limits.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "harness.h"
#include "xdpwake.h"

#define IF_A "xwka"
#define IF_B "xwkb"
#define TMO 20000 /* ms: a hang guard only */

static char pin_root[PATH_MAX];
static unsigned long long netns;
static int ifindex;
static pid_t main_pid;

static struct xw_endpoint *open_ep(__u16 id)
{
	XW_OPTS(xw_endpoint_opts, o, .pin_root = pin_root, .queue = XW_QUEUE_ANY);
	struct xw_endpoint *ep;
	int err = xw_endpoint__open(IF_A, id, &o, &ep);

	if (err == -EAFNOSUPPORT)
		xwt_skip("AF_XDP not supported by this kernel");
	REQUIRE(err == 0, "open endpoint %u: %s", id, xw_strerror(err));
	return ep;
}

/* /dev/shm/xdpwake-<netns>-<ifindex>-<id><suffix> */
static const char *shm(__u16 id, const char *suffix)
{
	static char p[4][PATH_MAX];
	static int k;

	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "/dev/shm/xdpwake-%llu-%d-%u%s", netns, ifindex, id, suffix);
	return p[k];
}

static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* A child that opens endpoint @id, says so on a pipe, then waits until
 * the parent closes the other pipe (*@fd) or kills it. */
static pid_t child(__u16 id, int *fd)
{
	int ready[2], hold[2];
	char c = 'r';
	pid_t pid;

	REQUIRE(pipe(ready) == 0 && pipe(hold) == 0, "pipes");
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (!pid) {
		struct xw_endpoint *ep;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		xwt_failures = 0;	/* its own */
		xwt_pin_dir[0] = '\0'; /* the pins are A's to remove */
		close(ready[0]);
		close(hold[1]);
		ep = open_ep(id);
		REQUIRE(write(ready[1], &c, 1) == 1, "child %u: ready", id);
		while (read(hold[0], &c, 1) > 0)
			;
		xw_endpoint__close(ep);
		exit(xwt_failures ? 1 : 0);
	}
	close(ready[1]);
	close(hold[0]);
	{
		struct pollfd p = { .fd = ready[0], .events = POLLIN };

		REQUIRE(poll(&p, 1, TMO) == 1 && read(ready[0], &c, 1) == 1,
			"child with endpoint %u did not start", id);
	}
	close(ready[0]);
	*fd = hold[1];
	return pid;
}

static void kill_child(pid_t pid, int fd)
{
	int status;

	REQUIRE(kill(pid, SIGKILL) == 0, "kill %d", (int)pid);
	REQUIRE(waitpid(pid, &status, 0) == pid, "reap %d", (int)pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "child %d: status %#x",
	      (int)pid, status);
	close(fd);
}

static void live_files_there(const char *when)
{
	for (__u16 id = 1; id <= 2; id++) {
		CHECK(exists(shm(id, "")), "%s: the inbox of live endpoint %u was removed", when,
		      id);
		CHECK(exists(shm(id, ".lock")), "%s: the lock of live endpoint %u was removed",
		      when, id);
	}
}

/* The CLI beside this test's binary (OUTPUT/tests/.. = OUTPUT). */
static void cli_path(char *buf, size_t len)
{
	char exe[PATH_MAX - 16];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	REQUIRE(n > 0, "readlink /proc/self/exe");
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	REQUIRE(slash, "test path");
	*slash = '\0';
	snprintf(buf, len, "%s/../xdpwake", exe);
}

static void part_cli(void)
{
	char cli[PATH_MAX], cmd[3 * PATH_MAX], out[8192] = "", tmp[PATH_MAX], orphan[PATH_MAX];
	char qlock0[PATH_MAX], qlock3[PATH_MAX];
	size_t got = 0;
	FILE *f;
	pid_t k;
	int fd, rc;

	snprintf(tmp, sizeof(tmp), "%s", shm(9, ".4242424.tmp"));
	snprintf(orphan, sizeof(orphan), "%s", shm(11, ""));
	k = child(4, &fd);
	CHECK(exists(shm(4, "")) && exists(shm(4, ".lock")), "endpoint 4 has no inbox or lock");
	kill_child(k, fd);
	CHECK(exists(shm(4, "")) && exists(shm(4, ".lock")),
	      "a SIGKILLed endpoint's inbox and lock stay (else this test tests nothing)");
	/* Planted: an inbox half created by a process killed in its open,
	 * an inbox without a lock file, the lock of a queue no port holds
	 * (the ports' queue claims: port.c). */
	snprintf(qlock0, sizeof(qlock0), "/dev/shm/xdpwake-%llu-%d-q0.lock", netns, ifindex);
	snprintf(qlock3, sizeof(qlock3), "/dev/shm/xdpwake-%llu-%d-q3.lock", netns, ifindex);
	CHECK(exists(qlock0), "no lock of queue 0, which this process's port holds");
	REQUIRE(xwt_sh("touch %s %s %s", tmp, orphan, qlock3) == 0, "plant files");

	cli_path(cli, sizeof(cli));
	snprintf(cmd, sizeof(cmd), "%s status --clean --pin-root %s " IF_A " 2>&1", cli, pin_root);
	f = popen(cmd, "r");
	REQUIRE(f, "popen %s", cmd);
	while (got < sizeof(out) - 1 && (rc = (int)fread(out + got, 1, sizeof(out) - 1 - got, f)) > 0)
		got += (size_t)rc;
	out[got] = '\0';
	rc = pclose(f);
	printf("xdpwake status --clean " IF_A ":\n%s", out);
	CHECK(rc == 0, "xdpwake status --clean: exit status %#x", rc);
	CHECK(!exists(shm(4, "")) && !exists(shm(4, ".lock")),
	      "status --clean left the killed endpoint 4's files");
	CHECK(!exists(tmp) && !exists(orphan), "status --clean left the planted files");
	CHECK(strstr(out, shm(4, "")) && strstr(out, shm(4, ".lock")) && strstr(out, tmp) &&
		      strstr(out, orphan),
	      "status --clean does not list every file it removed");
	CHECK(strstr(out, "5 files of dead endpoints removed"),
	      "status --clean: no count of 5 (4's inbox and lock, the tmp file, 11's inbox, "
	      "queue 3's lock)");
	CHECK(!exists(qlock3) && strstr(out, qlock3),
	      "status --clean did not remove and list the unheld lock of queue 3");
	CHECK(exists(qlock0), "status --clean removed the lock of queue 0, which a live port holds");
	live_files_there("status --clean");

	/* Again: nothing left to remove. */
	CHECK(xw_leftovers_clean(IF_A, NULL, NULL) == 0, "a second clean-up removed something");
	CHECK(xw_leftovers_clean("xwk-missing", NULL, NULL) == -ENODEV, "missing interface");
}

static void part_next_open(void)
{
	pid_t k, d;
	int fd, fdd;

	k = child(6, &fd);
	kill_child(k, fd);
	CHECK(exists(shm(6, "")) && exists(shm(6, ".lock")), "killed endpoint 6 left nothing");
	/* D: a new process, its first open of the interface. */
	d = child(7, &fdd);
	CHECK(!exists(shm(6, "")) && !exists(shm(6, ".lock")),
	      "the next process's open left the killed endpoint 6's files");
	CHECK(exists(shm(7, "")) && exists(shm(7, ".lock")), "D's endpoint 7 has no files");
	live_files_there("the next open");
	close(fdd); /* D closes its endpoint and exits */
	{
		int status;

		REQUIRE(waitpid(d, &status, 0) == d, "reap D");
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "D failed (status %#x)",
		      status);
	}
	CHECK(!exists(shm(7, "")) && !exists(shm(7, ".lock")), "a closed endpoint left files");
}

static void part_talk(struct xw_endpoint *e1, struct xw_endpoint *e2)
{
	struct xw_addr a2;
	char m[64] = "";
	XW_OPTS(xw_status, st);

	REQUIRE(xw_endpoint__addr(e2, &a2) == 0, "addr");
	CHECK(xw_endpoint__send(e1, &a2, "after the clean-up", 19, 0x41, TMO) == 0, "1 -> 2");
	CHECK(xw_endpoint__recv(e2, m, sizeof(m), 0x41, ~0ULL, &st, TMO) == 0 &&
		      !strcmp(m, "after the clean-up"),
	      "2 received \"%s\"", m);
}

static void cleanup_files(void)
{
	if (getpid() == main_pid && netns)
		xwt_sh("rm -f /dev/shm/xdpwake-%llu-*", netns);
}

int main(void)
{
	struct xw_endpoint *e1, *e2;
	struct stat st;
	pid_t l;
	int fl, status;

	main_pid = getpid();
	xwt_private_netns();
	snprintf(pin_root, sizeof(pin_root), "%s", xwt_pin_root());
	REQUIRE(stat("/proc/self/ns/net", &st) == 0, "netns");
	netns = (unsigned long long)st.st_ino;
	atexit(cleanup_files);
	if (xwt_sh("ip link add " IF_A " numtxqueues 4 numrxqueues 4 type veth peer name " IF_B
		   " numtxqueues 4 numrxqueues 4"))
		xwt_skip("cannot create a multi-queue veth pair");
	REQUIRE(xwt_sh("ip link set " IF_A " up && ip link set " IF_B " up") == 0, "links up");
	ifindex = (int)if_nametoindex(IF_A);
	REQUIRE(ifindex > 0, IF_A);

	e1 = open_ep(1);
	/* L: endpoint 2 of a live process in another process. */
	l = child(2, &fl);
	live_files_there("start");

	part_cli();
	printf("status --clean: done\n");
	part_next_open();
	printf("next open: done\n");

	/* Talking: 1 to 2 needs 2 in this process; L's goes first. */
	close(fl);
	REQUIRE(waitpid(l, &status, 0) == l, "reap L");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "L failed (status %#x)", status);
	e2 = open_ep(2);
	part_talk(e1, e2);
	printf("talk after the clean-up: done\n");
	xw_endpoint__close(e2);
	xw_endpoint__close(e1);
	return xwt_done();
}
