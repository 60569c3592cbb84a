// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The XDP program under BPF_PROG_TEST_RUN (xwt_xdp.h): load it with an
 * AF_XDP socket on a private veth, maps and knobs, wake records, frames.
 */
#include "xwt_xdp.h"

int xwt_silent(enum libbpf_print_level l, const char *f, va_list ap)
{
	return l == LIBBPF_WARN ? vfprintf(stderr, f, ap) : 0;
}

int xwt_knob_fd(struct xwt_xdp *x, const char *name)
{
	char n[64];

	xwi_skel_map_name(xw_knob_find(name), n, sizeof(n));
	return bpf_map__fd(bpf_object__find_map_by_name(x->skel->obj, n));
}

void xwt_set_knob(struct xwt_xdp *x, const char *name, __u32 ep, __u32 v)
{
	REQUIRE(bpf_map_update_elem(xwt_knob_fd(x, name), &ep, &v, 0) == 0, "set %s", name);
}

int xwt_write_defaults(struct bpf_object *obj)
{
	XW_OPTS(xw_knob_info, ki);
	char name[64];

	for (int i = 0; i < xw_knob_count(); i++) {
		int fd, err;

		xw_knob_info(i, &ki);
		xwi_skel_map_name(i, name, sizeof(name));
		fd = bpf_map__fd(bpf_object__find_map_by_name(obj, name));
		err = xwi_map_fill(fd, ki.per_endpoint ? XW_MAX_ENDPOINTS : 1u, ki.def);
		if (err)
			return err;
	}
	return 0;
}

void xwt_defaults(struct xwt_xdp *x)
{
	int err = xwt_write_defaults(x->skel->obj);

	REQUIRE(err == 0, "knob defaults: %s", strerror(-err));
}

void xwt_set_endpoint(struct xwt_xdp *x, __u32 ep, __u32 flags, __u32 queue)
{
	struct xw_ep_entry e = { .flags = flags, .queue_id = queue };

	REQUIRE(bpf_map_update_elem(bpf_map__fd(x->skel->maps.endpoints), &ep, &e, 0) == 0,
		"endpoint %u", ep);
}

void xwt_set_queue(struct xwt_xdp *x, __u32 q, __u32 pid)
{
	REQUIRE(bpf_map_update_elem(bpf_map__fd(x->skel->maps.udp_queues), &q, &pid, 0) == 0,
		"udp_queues %u", q);
}

void xwt_set_shared(struct xwt_xdp *x, __u32 ep, const struct xw_shared *s)
{
	REQUIRE(bpf_map_update_elem(bpf_map__fd(x->skel->maps.shared), &ep, s, 0) == 0,
		"shared %u", ep);
}

struct xw_shared xwt_get_shared(struct xwt_xdp *x, __u32 ep)
{
	struct xw_shared s;

	REQUIRE(bpf_map_lookup_elem(bpf_map__fd(x->skel->maps.shared), &ep, &s) == 0, "shared");
	return s;
}

void xwt_set_wake_state(struct xwt_xdp *x, __u32 ep, const struct xw_wake_state *w)
{
	REQUIRE(bpf_map_update_elem(bpf_map__fd(x->skel->maps.wake_state), &ep, w, 0) == 0,
		"wake_state %u", ep);
}

struct xw_wake_state xwt_get_wake_state(struct xwt_xdp *x, __u32 ep)
{
	struct xw_wake_state w;

	REQUIRE(bpf_map_lookup_elem(bpf_map__fd(x->skel->maps.wake_state), &ep, &w) == 0, "ws");
	return w;
}

struct xw_wd_state xwt_get_wd_state(struct xwt_xdp *x, __u32 ep)
{
	struct xw_wd_state w;

	REQUIRE(bpf_map_lookup_elem(bpf_map__fd(x->skel->maps.wd_state), &ep, &w) == 0, "wd");
	return w;
}

void xwt_set_clock(struct xwt_xdp *x, __u64 ns)
{
	x->skel->data_test_clock->xw_test_clock_ns = ns;
	__sync_synchronize();
}

static int xwt_rec_cb(void *ctx, void *data, size_t len)
{
	struct xwt_xdp *x = ctx;

	if (len == sizeof(struct xw_wake_rec) &&
	    x->nrecs < (int)(sizeof(x->recs) / sizeof(x->recs[0])))
		memcpy(&x->recs[x->nrecs++], data, len);
	return 0;
}

void xwt_add_rings(struct xwt_xdp *x, __u32 ep)
{
	int fd;

	for (int w = 0; w < 2; w++) {
		fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, w ? "xwt_wd" : "xwt_wake", 0, 0,
				    XW_RING_BYTES, NULL);
		REQUIRE(fd >= 0, "ringbuf: %s", strerror(errno));
		REQUIRE(bpf_map_update_elem(bpf_map__fd(w ? x->skel->maps.wd_rings
							   : x->skel->maps.wake_rings),
					    &ep, &fd, 0) == 0,
			"ring in map: %s", strerror(errno));
		if (!x->rb)
			x->rb = ring_buffer__new(fd, xwt_rec_cb, x, NULL);
		else
			REQUIRE(ring_buffer__add(x->rb, fd, xwt_rec_cb, x) == 0, "rb add");
		REQUIRE(x->rb, "ring_buffer__new");
		if (w)
			x->wd_ring_fd[ep] = fd;
		else
			x->ring_fd[ep] = fd;
	}
}

int xwt_drain(struct xwt_xdp *x)
{
	x->nrecs = 0;
	if (x->rb)
		ring_buffer__consume(x->rb);
	return x->nrecs;
}

int xwt_wait_rec(struct xwt_xdp *x, int timeout_ms)
{
	unsigned long long end = xwu_now_ns() + timeout_ms * 1000000ULL;

	unsigned long long now;

	x->nrecs = 0;
	while (!x->nrecs && (now = xwu_now_ns()) < end)
		ring_buffer__poll(x->rb, (int)((end - now) / 1000000ULL) + 1);
	return x->nrecs;
}

void xwt_setup(struct xwt_xdp *x, __u32 ep)
{
	struct xsk_socket_config cfg = {
		.rx_size = XSK_RING_CONS__DEFAULT_NUM_DESCS,
		.tx_size = XSK_RING_PROD__DEFAULT_NUM_DESCS,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = XDP_COPY,
	};
	size_t umem_len = 4096 * 64;
	int fd;

	memset(x, 0, sizeof(*x));
	for (int i = 0; i < XW_MAX_ENDPOINTS; i++)
		x->ring_fd[i] = x->wd_ring_fd[i] = -1;
	xwt_private_netns();
	libbpf_set_print(xwt_silent);
	if (xwt_sh("ip link add " XWT_IF_A " numrxqueues 2 numtxqueues 2 type veth peer name " XWT_IF_B
		   " && ip link set " XWT_IF_A " up && ip link set " XWT_IF_B " up"))
		xwt_skip("cannot create a veth pair");
	x->ifindex = if_nametoindex(XWT_IF_A);
	x->skel = xw_xdp_bpf__open_and_load();
	if (!x->skel)
		xwt_skip("the kernel rejected the XDP program (bpf_timer/ringbuf missing?): %s",
			 strerror(errno));
	x->prog_fd = bpf_program__fd(x->skel->progs.xw_xdp);
	xwt_defaults(x);

	x->umem_area = mmap(NULL, umem_len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	REQUIRE(x->umem_area != MAP_FAILED, "umem mmap");
	if (xsk_umem__create(&x->umem, x->umem_area, umem_len, &x->fq, &x->cq, NULL))
		xwt_skip("AF_XDP unavailable (xsk_umem__create failed)");
	if (xsk_socket__create(&x->xsk, XWT_IF_A, 0, x->umem, &x->rx, NULL, &cfg))
		xwt_skip("AF_XDP socket bind failed");
	fd = xsk_socket__fd(x->xsk);
	REQUIRE(bpf_map_update_elem(bpf_map__fd(x->skel->maps.xsks), &ep, &fd, 0) == 0,
		"xskmap: %s", strerror(errno));
	xwt_set_endpoint(x, ep, XW_EPF_ACTIVE, 0);
	xwt_set_queue(x, 0, (__u32)getpid());
	xwt_add_rings(x, ep);
}

void xwt_teardown(struct xwt_xdp *x)
{
	ring_buffer__free(x->rb);
	xsk_socket__delete(x->xsk);
	xsk_umem__delete(x->umem);
	xw_xdp_bpf__destroy(x->skel);
}

int xwt_read_stats(int stats_fd, __u32 key, struct xw_map_stats *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	struct xw_map_stats *vals;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	vals = calloc((size_t)ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	if (bpf_map_lookup_elem(stats_fd, &key, vals)) {
		int err = -errno;

		free(vals);
		return err;
	}
	for (int c = 0; c < ncpu; c++) {
#define XWT_ADD(name, desc) sum->name += vals[c].name;
		XW_STATS(XWT_ADD)
#undef XWT_ADD
	}
	free(vals);
	return 0;
}

struct xw_stats xwt_stats(struct xwt_xdp *x)
{
	struct xw_stats out = { .sz = sizeof(out) };
	struct xw_map_stats sum = {};

	for (__u32 k = 0; k < XW_STATS_ENTRIES; k++)
		REQUIRE(xwt_read_stats(bpf_map__fd(x->skel->maps.stats), k, &sum) == 0, "stats");
#define XWT_COPY(name, desc) out.name = sum.name;
	XW_STATS(XWT_COPY)
#undef XWT_COPY
	return out;
}

int xwt_build(const struct xwt_frame *f, __u8 *buf)
{
	__u8 *p = buf, *ip_at = NULL, *udp_at = NULL;
	struct ethhdr eth = {};
	struct iphdr ip = {};
	struct udphdr udp = {};
	struct xw_hdr h = {};
	int present = f->present < 0 ? f->payload_len : f->present, len;
	__u16 proto = f->encap == XWT_ENC_UDP ? ETH_P_IP
			: (f->ethertype ? f->ethertype : XW_DEFAULT_ETHERTYPE);

	memset(buf, 0, XWT_MAX_FRAME);
	memcpy(eth.h_dest, "\x02\x00\x00\x00\x00\x0b", 6);
	memcpy(eth.h_source, "\x02\x00\x00\x00\x00\x0a", 6);
	eth.h_proto = htons(f->vlans ? 0x88A8 : proto);
	memcpy(p, &eth, sizeof(eth));
	p += sizeof(eth);
	for (int i = 0; i < f->vlans; i++) {
		__u16 tag[2] = { htons(100 + i), htons(i + 1 < f->vlans ? 0x8100 : proto) };

		memcpy(p, tag, sizeof(tag));
		p += sizeof(tag);
	}
	if (f->encap == XWT_ENC_UDP) {
		ip.version = 4;
		ip.ihl = 5 + f->ip_opt_words;
		ip.ttl = 64;
		ip.protocol = IPPROTO_UDP;
		ip.frag_off = htons(f->ip_frag);
		ip.saddr = htonl(0x0a000001);
		ip.daddr = htonl(0x0a000002);
		ip_at = p;
		memset(p + sizeof(ip), 1, f->ip_opt_words * 4); /* NOP options */
		p += ip.ihl * 4;
		udp.source = htons(40000);
		udp.dest = htons(f->udp_port ? f->udp_port : XW_DEFAULT_UDP_PORT);
		udp_at = p;
		p += sizeof(udp);
	}
	h.version = f->version ? f->version : XW_VERSION;
	h.type = f->type;
	h.flags = f->flags;
	h.dst_ep = htons(f->dst_ep);
	h.src_ep = htons(f->src_ep);
	h.session = htonl(f->session);
	h.msg_len = htonl(f->msg_len_set || f->type != XW_PKT_SMALL ? f->msg_len : f->payload_len);
	h.frag_off = htonl(f->frag_off);
	h.frag_idx = htonl(f->frag_idx);
	h.frag_count = htonl(f->frag_count);
	h.payload_len = htons(f->payload_len);
	h.match = htobe64(0x1122334455667788ULL);
	memcpy(p, &h, sizeof(h));
	p += sizeof(h);
	for (int i = 0; i < present; i++)
		*p++ = (__u8)i;
	if (udp_at) {
		udp.len = htons((__u16)(p - udp_at + f->udp_len_delta));
		ip.tot_len = htons((__u16)(p - ip_at + f->ip_len_delta));
		memcpy(ip_at, &ip, sizeof(ip));
		memcpy(udp_at, &udp, sizeof(udp));
	}
	p += f->pad;
	len = (int)(p - buf);
	if (f->truncate > 0 && f->truncate < len)
		len = f->truncate;
	return len < ETH_ZLEN && !f->truncate ? ETH_ZLEN : len;
}

int xwt_test_run(const struct xwt_run_args *a, struct xwt_run_res *r)
{
	struct xdp_md ctx = { .data_end = a->len, .ingress_ifindex = (__u32)a->ifindex,
			      .rx_queue_index = a->queue };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = a->buf, .data_size_in = a->len,
		    .data_out = a->out, .data_size_out = a->out ? XWT_MAX_FRAME : 0,
		    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = a->repeat);

	if (bpf_prog_test_run_opts(a->prog_fd, &o))
		return -errno;
	r->retval = o.retval;
	r->duration = o.duration;
	r->out_len = o.data_size_out;
	return 0;
}

int xwt_run(struct xwt_xdp *x, const void *buf, int len, __u32 queue,
	    int *out_len, void *out)
{
	struct xwt_run_args a = { .prog_fd = x->prog_fd, .ifindex = x->ifindex, .queue = queue,
				  .buf = buf, .len = (__u32)len, .repeat = 1, .out = out };
	struct xwt_run_res r;
	int err = xwt_test_run(&a, &r);

	REQUIRE(err == 0, "bpf_prog_test_run_opts: %s", strerror(-err));
	if (out_len)
		*out_len = (int)r.out_len;
	return (int)r.retval;
}

const char *xwt_verdict(int v)
{
	switch (v) {
	case XDP_ABORTED: return "ABORTED";
	case XDP_DROP: return "DROP";
	case XDP_PASS: return "PASS";
	case XDP_TX: return "TX";
	case XDP_REDIRECT: return "REDIRECT";
	default: return "?";
	}
}
