// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The Wireshark dissector (dissector/xdpwake.lua) on real traffic: hosts A
 * and B exchange a SMALL, a MEDIUM and a large (RNDV/PULL/PULL_REPLY/
 * NOTIFY) message through the middle namespace of the fault harness, where
 * tshark captures them (AF_XDP copy-mode transmit bypasses packet taps on
 * the sender, and XDP redirect takes frames before the taps on the
 * receiver: the middle is where a capture sees them).  The capture is then
 * decoded with the dissector and the fields checked against what was sent,
 * for both encapsulations.
 */
#include <signal.h>
#include <sys/stat.h>

#include "fault.h"
#include "xdpwake.h"

#define EP_A 1
#define EP_B 2
#define MATCH 0x7700FF11ULL
static const size_t lens[3] = { 100, 5000, 100000 };

static int encap_now;

static int host(struct xwf_topo *t, void *arg)
{
	static unsigned char buf[100000];
	struct xw_endpoint *ep;
	struct xw_addr me, peer;
	XW_OPTS(xw_status, st);
	int err;

	(void)arg;
	snprintf(xwt_pin_dir, sizeof(xwt_pin_dir), "/sys/fs/bpf/xwtest-%d", (int)getpid());
	atexit(xwt_pin_cleanup);
	XW_OPTS(xw_endpoint_opts, o, .pin_root = xwt_pin_dir, .encap = (__u32)encap_now);
	err = xw_endpoint__open(t->ifname[t->self], t->self == XWF_HOST_A ? EP_A : EP_B, &o, &ep);
	REQUIRE(err == 0, "open: %s", xw_strerror(err));
	xw_endpoint__addr(ep, &me);
	xwt_xchg(t->chan, NULL, &me, &peer, sizeof(me));
	for (int i = 0; i < 3; i++) {
		if (t->self == XWF_HOST_A) {
			memset(buf, 'a' + i, lens[i]);
			err = xw_endpoint__send(ep, &peer, buf, lens[i], MATCH, 10000);
		} else {
			err = xw_endpoint__recv(ep, buf, sizeof(buf), MATCH, ~0ULL, &st, 10000);
			CHECK(!err && st.len == lens[i], "message %d: %zu bytes", i, st.len);
		}
		REQUIRE(err == 0, "message %d: %s", i, xw_strerror(err));
		xwt_bar(t->chan, ep, "msg");
	}
	xw_endpoint__close(ep);
	return xwt_failures ? 1 : 0;
}

struct frame {
	int type, lat, more, dst, src;
	unsigned long msg_id, msg_len, frag_idx, frag_count;
	unsigned long long match;
	unsigned long eid; /* CONNECT, CONNECT_REPLY: xdpwake.eid */
	int nfields;
};

static int decode(const char *pcap, struct frame *fr, int max)
{
	const char *src = getenv("XW_SRC");
	char cmd[PATH_MAX * 3], line[512];
	FILE *p;
	int n = 0;

	snprintf(cmd, sizeof(cmd),
		 "tshark -X lua_script:%s/dissector/xdpwake.lua -r %s -Y xdpwake -T fields "
		 "-E separator=, -e xdpwake.type -e xdpwake.flags.lat -e xdpwake.flags.more "
		 "-e xdpwake.dst_ep -e xdpwake.src_ep -e xdpwake.msg_id -e xdpwake.msg_len "
		 "-e xdpwake.frag_idx -e xdpwake.frag_count -e xdpwake.match -e xdpwake.eid "
		 "2>/dev/null",
		 src ? src : ".", pcap);
	p = popen(cmd, "r");
	REQUIRE(p, "tshark");
	while (n < max && fgets(line, sizeof(line), p)) {
		struct frame *f = &fr[n];
		char lat[8], more[8];

		f->eid = 0;
		f->nfields = sscanf(line, "%d,%7[^,],%7[^,],%d,%d,%lu,%lu,%lu,%lu,%llx,%lx", &f->type,
				    lat, more, &f->dst, &f->src, &f->msg_id, &f->msg_len,
				    &f->frag_idx, &f->frag_count, &f->match, &f->eid);
		if (f->nfields < 10) {
			CHECK(0, "undecodable tshark line: %s", line);
			continue;
		}
		f->lat = !strcmp(lat, "True") || !strcmp(lat, "1");
		f->more = !strcmp(more, "True") || !strcmp(more, "1");
		n++;
	}
	pclose(p);
	return n;
}

static void check_capture(const char *pcap, const char *name)
{
	static struct frame fr[4096];
	int n = decode(pcap, fr, 4096), count[XW_PKT_TYPE_MAX] = { 0 }, med_lat = 0, rtx = 0;

	REQUIRE(n > 0, "%s: tshark decoded no xdpwake frame", name);
	for (int i = 0; i < n; i++) {
		struct frame *f = &fr[i];
		int from_a = f->src == EP_A;

		CHECK(f->type >= XW_PKT_SMALL && f->type < XW_PKT_TYPE_MAX, "%s: type %d", name,
		      f->type);
		if (f->type <= 0 || f->type >= XW_PKT_TYPE_MAX)
			continue;
		count[f->type]++;
		if (f->type == XW_PKT_CONNECT || f->type == XW_PKT_CONNECT_REPLY)
			CHECK(f->nfields == 11 && f->eid && f->eid == f->match >> 32,
			      "%s: %s without its endpoint incarnation (%lx, match %#llx)", name,
			      f->type == XW_PKT_CONNECT ? "CONNECT" : "CONNECT_REPLY", f->eid,
			      f->match);
		CHECK((from_a && f->dst == EP_B) || (f->src == EP_B && f->dst == EP_A),
		      "%s: endpoints %d -> %d", name, f->src, f->dst);
		/* A data frame seen before is a retransmission (a host kept
		 * off the CPU acknowledges late): by design it carries
		 * neither LAT nor MORE (conn.c, rtx_frame()); the marks are
		 * checked on the first copies. */
		if (f->type >= XW_PKT_SMALL && f->type <= XW_PKT_NOTIFY) {
			bool again = false;

			for (int j = 0; j < i && !again; j++)
				again = fr[j].type == f->type && fr[j].src == f->src &&
					fr[j].msg_id == f->msg_id && fr[j].frag_idx == f->frag_idx &&
					fr[j].match == f->match;
			if (again) {
				rtx++;
				CHECK(!f->lat && !f->more, "%s: a retransmitted %s with LAT %d MORE %d",
				      name, xw_pkt_type_name((unsigned)f->type), f->lat, f->more);
				continue;
			}
		}
		switch (f->type) {
		case XW_PKT_SMALL:
			CHECK(from_a && f->lat && f->msg_len == lens[0] && f->match == MATCH,
			      "%s: SMALL lat %d len %lu match %#llx", name, f->lat, f->msg_len, f->match);
			break;
		case XW_PKT_MEDIUM:
			CHECK(from_a && f->msg_len == lens[1] && f->match == MATCH &&
			      f->frag_idx < f->frag_count, "%s: MEDIUM fields", name);
			CHECK(f->lat == (f->frag_idx == f->frag_count - 1),
			      "%s: MEDIUM fragment %lu/%lu LAT %d", name, f->frag_idx, f->frag_count,
			      f->lat);
			CHECK(f->more == (f->frag_idx != f->frag_count - 1),
			      "%s: MEDIUM fragment %lu/%lu MORE %d", name, f->frag_idx, f->frag_count,
			      f->more);
			med_lat += f->lat;
			break;
		case XW_PKT_RNDV:
			CHECK(from_a && f->lat && f->msg_len == lens[2] && f->match == MATCH,
			      "%s: RNDV", name);
			break;
		case XW_PKT_PULL:
		case XW_PKT_NOTIFY:
			CHECK(!from_a && f->lat, "%s: %s from B with LAT", name,
			      xw_pkt_type_name((unsigned)f->type));
			break;
		case XW_PKT_PULL_REPLY:
			CHECK(from_a && f->msg_len == lens[2], "%s: PULL_REPLY", name);
			break;
		default:
			break;
		}
	}
	for (int t = XW_PKT_SMALL; t <= XW_PKT_NOTIFY; t++)
		CHECK(count[t] > 0, "%s: no %s frame decoded", name, xw_pkt_type_name((unsigned)t));
	CHECK(med_lat == 1, "%s: %d MEDIUM fragments with LAT, want 1", name, med_lat);
	CHECK(count[XW_PKT_CONNECT] > 0 && count[XW_PKT_CONNECT_REPLY] > 0,
	      "%s: the handshake was not decoded", name);
	printf("%s: %d frames decoded: SMALL %d MEDIUM %d RNDV %d PULL %d PULL_REPLY %d NOTIFY %d "
	       "ACK %d CONNECT %d CONNECT_REPLY %d (endpoint incarnations decoded); %d "
	       "retransmitted\n", name, n, count[1], count[2], count[3], count[4], count[5],
	       count[6], count[XW_PKT_ACK], count[XW_PKT_CONNECT], count[XW_PKT_CONNECT_REPLY], rtx);
}

/* Whether the capture file already holds a frame of every type that
 * check_capture() needs (dumpcap writes as it goes). */
static bool capture_complete(const char *pcap)
{
	const char *src = getenv("XW_SRC");
	char cmd[PATH_MAX * 3], line[64];
	int seen[32] = { 0 }, type;
	bool all = true;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "tshark -X lua_script:%s/dissector/xdpwake.lua -r %s -Y xdpwake -T fields "
		 "-e xdpwake.type 2>/dev/null", src ? src : ".", pcap);
	p = popen(cmd, "r");
	if (!p)
		return false;
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "%d", &type) == 1 && type >= 0 && type < 32)
			seen[type] = 1;
	pclose(p);
	for (int t = XW_PKT_SMALL; t <= XW_PKT_NOTIFY; t++)
		all &= seen[t];
	return all && seen[XW_PKT_CONNECT] && seen[XW_PKT_CONNECT_REPLY];
}

static void capture(struct xwf_topo *t, int encap, const char *name)
{
	char pcap[64];
	struct stat sb;
	pid_t tp;
	int rc, st;

	snprintf(pcap, sizeof(pcap), "/tmp/xwtest-%d-%s.pcapng", (int)getpid(), name);
	unlink(pcap);
	tp = fork();
	REQUIRE(tp >= 0, "fork");
	if (tp == 0) {
		int fd = open("/dev/null", O_WRONLY);

		dup2(fd, 1);
		dup2(fd, 2);
		execlp("tshark", "tshark", "-i", "xwfma", "-w", pcap, "-q", (char *)NULL);
		_exit(127);
	}
	/* The capture is running once tshark has written the file header
	 * (its start-up takes seconds on a loaded machine: up to 30 s). */
	for (int i = 0; i < 3000 && (stat(pcap, &sb) || sb.st_size == 0); i++) {
		if (waitpid(tp, &st, WNOHANG) == tp)
			REQUIRE(0, "tshark exited (status %#x) before capturing", st);
		usleep(10000);
	}
	REQUIRE(stat(pcap, &sb) == 0 && sb.st_size > 0, "tshark did not start capturing in 30 s");
	/* the file header is written once the interface is open: capturing */
	encap_now = encap;
	rc = xwf_run(t, host, host, NULL, 30000);
	CHECK(rc == 0, "%s: the hosts failed (%d)", name, rc);
	/* Stop once the file holds what the check needs, not after a fixed
	 * 300 ms that a loaded capture process may not keep up with (30 s
	 * only catches a capture that never gets there; the check then says
	 * what is missing). */
	for (int i = 0; i < 150 && !capture_complete(pcap); i++)
		usleep(200000);
	kill(tp, SIGINT);
	REQUIRE(waitpid(tp, &st, 0) == tp, "tshark");
	check_capture(pcap, name);
	unlink(pcap);
}

int main(void)
{
	struct xwf_topo t;

	xwt_require_root();
	if (xwt_sh("command -v tshark >/dev/null 2>&1"))
		xwt_skip("tshark is not installed (make deps installs it)");
	xwf_setup(&t, NULL);
	if (xwt_sh("mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf"))
		xwt_skip("no bpffs");
	capture(&t, XW_ENCAP_ETH, "ethernet");
	capture(&t, XW_ENCAP_UDP, "udp");
	xwf_teardown(&t);
	return xwt_done();
}
