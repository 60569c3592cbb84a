// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The default pin root where no bpffs is mounted, as under `ip netns exec`
 * (a fresh sysfs on /sys, nothing on /sys/fs/bpf): the library mounts one.
 * Processes of one mount namespace that open interfaces at the same moment
 * (ranks started together, fi_unit's parent and child) must end up on one
 * bpffs: two stacked mounts hid the earlier one's pins and directories from
 * every process (an open failed with -ENOENT, or found a program attached
 * without pins).
 *
 * A private mount and network namespace with /sys remounted as `ip netns
 * exec` does, four veth pairs.  Eight children, released together, each
 * open the interfaces with the default pin root: one of its own, then one
 * shared by all (round 2, attached by whichever comes first).  Every open
 * succeeds, /sys/fs/bpf holds exactly one bpffs, and every interface's pins
 * are in it.  Several rounds, each with a fresh /sys.
 */
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/wait.h>

#include "harness.h"
#include "xdpwake.h"

#define NCHILD 8
#define ROUNDS 4

/* bpffs mounts on /sys/fs/bpf in this mount namespace. */
static int bpffs_mounts(void)
{
	char line[1024];
	FILE *f = fopen("/proc/self/mountinfo", "r");
	int n = 0;

	REQUIRE(f, "mountinfo: %s", strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (strstr(line, " /sys/fs/bpf ") && strstr(line, " - bpf "))
			n++;
	fclose(f);
	return n;
}

/* A child: wait for the start byte, open @own then @shared, report. */
static void child(int start_fd, int res_fd, const char *own, const char *shared)
{
	struct xw_iface *a = NULL, *b = NULL;
	char c;
	int r[2];

	if (read(start_fd, &c, 1) != 1)
		_exit(2);
	r[0] = xw_iface__open(own, NULL, &a);
	r[1] = xw_iface__open(shared, NULL, &b);
	if (write(res_fd, r, sizeof(r)) != sizeof(r))
		_exit(2);
	xw_iface__close(a);
	xw_iface__close(b);
	_exit(0);
}

static void round_once(int round)
{
	int start[2], res[2], fails = 0, r[2];
	char ifs[NCHILD][IF_NAMESIZE], pin[PATH_MAX];
	pid_t pids[NCHILD];

	/* a fresh sysfs, nothing mounted on /sys/fs/bpf (ip netns exec) */
	REQUIRE(!umount2("/sys", MNT_DETACH), "umount /sys: %s", strerror(errno));
	REQUIRE(!mount("sysfs", "/sys", "sysfs", 0, NULL), "mount sysfs: %s", strerror(errno));
	REQUIRE(bpffs_mounts() == 0, "a bpffs on /sys/fs/bpf before the round");
	REQUIRE(!pipe(start) && !pipe(res), "pipe");
	for (int i = 0; i < NCHILD; i++) {
		snprintf(ifs[i], sizeof(ifs[i]), "xwm%d", i);
		fflush(NULL);
		pids[i] = fork();
		REQUIRE(pids[i] >= 0, "fork");
		if (!pids[i]) {
			close(start[1]);
			close(res[0]);
			child(start[0], res[1], ifs[i], "xwm0");
		}
	}
	close(start[0]);
	close(res[1]);
	/* all at once: each child's read returns as soon as its byte is there */
	{
		char go[NCHILD];

		memset(go, 'g', sizeof(go));
		REQUIRE(write(start[1], go, sizeof(go)) == sizeof(go), "start");
	}
	for (int i = 0; i < NCHILD; i++) {
		if (read(res[0], r, sizeof(r)) != sizeof(r)) {
			CHECK(0, "round %d: a child reported nothing", round);
			fails++;
			break;
		}
		for (int k = 0; k < 2; k++)
			if (r[k]) {
				CHECK(r[k] == 0, "round %d: open %s: %s", round,
				      k ? "of the shared interface" : "of its own interface",
				      xw_strerror(r[k]));
				fails++;
			}
	}
	for (int i = 0; i < NCHILD; i++) {
		int st;

		REQUIRE(waitpid(pids[i], &st, 0) == pids[i], "waitpid");
		CHECK(WIFEXITED(st) && !WEXITSTATUS(st), "round %d: child %d status %#x", round,
		      i, st);
	}
	close(start[1]);
	close(res[0]);
	CHECK(bpffs_mounts() == 1, "round %d: %d bpffs mounts on /sys/fs/bpf", round,
	      bpffs_mounts());
	/* every interface's pins where every later process looks */
	for (int i = 0; i < NCHILD; i++) {
		snprintf(pin, sizeof(pin), "%s/%s/prog", XW_DEFAULT_PIN_ROOT, ifs[i]);
		CHECK(!access(pin, F_OK), "round %d: %s: %s", round, pin, strerror(errno));
	}
	/* the next round starts from nothing attached */
	for (int i = 0; i < NCHILD; i++) {
		struct xw_iface *ifc;
		int err = xw_iface__open(ifs[i], NULL, &ifc);

		CHECK(!err, "round %d: reopen %s: %s", round, ifs[i], xw_strerror(err));
		if (!err)
			CHECK(!xw_iface__detach(ifc), "detach %s", ifs[i]); /* and closes */
	}
	printf("round %d: %d children, %d failed opens, %d bpffs mount(s)\n", round, NCHILD,
	       fails, bpffs_mounts());
}

int main(void)
{
	xwt_require_root();
	xwt_private_netns();
	if (unshare(CLONE_NEWNS))
		xwt_skip("unshare(CLONE_NEWNS): %s", strerror(errno));
	REQUIRE(!mount("", "/", NULL, MS_SLAVE | MS_REC, NULL), "make / a slave: %s",
		strerror(errno));
	for (int i = 0; i < NCHILD; i += 2)
		REQUIRE(!xwt_sh("ip link add xwm%d type veth peer name xwm%d && "
				"ip link set xwm%d up && ip link set xwm%d up",
				i, i + 1, i, i + 1),
			"veth xwm%d", i);
	for (int round = 0; round < ROUNDS; round++)
		round_once(round);
	return xwt_done();
}
