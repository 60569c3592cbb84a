// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Two hosts joined by a veth pair (hosts.h): A this process, B a forked
 * child in its own network namespace.
 */
#include <sys/prctl.h>
#include <sys/socket.h>

#include "chan.h"
#include "hosts.h"

/* "ip addr add IP/24 dev IF && " for an end with an address, else "". */
static void addr_cmd(char *out, size_t len, const char *ip, const char *ifname)
{
	if (ip)
		snprintf(out, len, "ip addr add %s/24 dev %s && ", ip, ifname);
	else
		out[0] = '\0';
}

void xwt_hosts_fork(struct xwt_hosts *h)
{
	int sv[XWT_HOSTS_CHAN_MAX][2], sync_pipe[2], n = h->nchan ? h->nchan : 1, ok, veth_err;
	const char *opts = h->veth_opts ? h->veth_opts : "";
	const char *what = h->veth_what ? h->veth_what : "a veth pair";
	char addr[128];
	pid_t pid;
	char c;

	veth_err = xwt_sh("ip link add %s %s%stype veth peer name %s %s%s", h->if_a, opts,
			  *opts ? " " : "", h->if_b, opts, *opts ? " " : "");
	if (h->veth_required)
		REQUIRE(veth_err == 0, "%s", what);
	else if (veth_err)
		xwt_skip("cannot create %s", what);
	ok = n <= XWT_HOSTS_CHAN_MAX && pipe(sync_pipe) == 0;
	for (int i = 0; i < n && ok; i++)
		ok = socketpair(AF_UNIX, SOCK_STREAM, 0, sv[i]) == 0;
	REQUIRE(ok, "socketpair");
	snprintf(h->pin_root, sizeof(h->pin_root), "%s", xwt_pin_root());
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		h->is_b = true;
		/* Its own pins (the inherited exit handler removes this dir). */
		snprintf(xwt_pin_dir, sizeof(xwt_pin_dir), "/sys/fs/bpf/xwtest-%d", (int)getpid());
		snprintf(h->pin_root, sizeof(h->pin_root), "%s", xwt_pin_dir);
		for (int i = 0; i < n; i++) {
			close(sv[i][0]);
			h->chan[i] = sv[i][1];
		}
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (h->b_init)
			h->b_init();
		REQUIRE(unshare(CLONE_NEWNET) == 0, "unshare");
		REQUIRE(write(sync_pipe[1], "u", 1) == 1, "sync");
		REQUIRE(read(h->chan[0], &c, 1) == 1, "wait for the link");
		addr_cmd(addr, sizeof(addr), h->ip_b, h->if_b);
		REQUIRE(xwt_sh("ip link set lo up && %sip link set %s up", addr, h->if_b) == 0,
			"B link");
		return;
	}
	h->is_b = false;
	h->pid_b = pid;
	for (int i = 0; i < n; i++) {
		close(sv[i][1]);
		h->chan[i] = sv[i][0];
	}
	REQUIRE(read(sync_pipe[0], &c, 1) == 1, "child unshared");
	addr_cmd(addr, sizeof(addr), h->ip_a, h->if_a);
	REQUIRE(xwt_sh("ip link set %s netns %d && %sip link set %s up", h->if_b, (int)pid, addr,
		       h->if_a) == 0,
		"move the peer end");
	REQUIRE(write(h->chan[0], "g", 1) == 1, "go");
}

void xwt_hosts_join(struct xwt_hosts *h)
{
	int st;

	REQUIRE(waitpid(h->pid_b, &st, 0) == h->pid_b, "waitpid");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "host B failed (status %#x)", st);
}

int xwt_hosts_run(struct xwt_hosts *h, void (*fn)(const char *ifname))
{
	xwt_hosts_fork(h);
	xwt_bar(h->chan[0], NULL, "up");
	fn(h->is_b ? h->if_b : h->if_a);
	if (h->is_b)
		exit(xwt_failures ? 1 : 0);
	xwt_hosts_join(h);
	return xwt_done();
}
