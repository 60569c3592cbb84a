// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * fi_unit.c - the xdpwake provider through the libfabric API, one process,
 * two RDM endpoints on the two ends of a veth pair (interfaces given on the
 * command line; tests/test_fi_provider.sh sets them up): AV table and map,
 * tagged and untagged messages, inject, senddata with remote CQ data,
 * directed receives, peek (FI_ENOMSG), peek+claim, claim, discard,
 * cancel (FI_ECANCELED), truncation (FI_ETRUNC, olen), selective
 * completion, counters, sends to self, fi_cq_sread, and FI_WAIT_FD with
 * fi_trywait and poll on the fd.  Every wait is bounded (10 s).
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

static int fails, checks;

#define CHECK(c, ...)                                                                      \
	do {                                                                               \
		checks++;                                                                  \
		if (!(c)) {                                                                \
			fails++;                                                           \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);                        \
			printf(__VA_ARGS__);                                               \
			printf("\n");                                                      \
		}                                                                          \
	} while (0)
#define REQUIRE(c, ...)                                                                    \
	do {                                                                               \
		bool ok_ = (c); /* once: c may have side effects */                        \
		CHECK(ok_, __VA_ARGS__);                                                   \
		if (!ok_)                                                                  \
			exit(1);                                                           \
	} while (0)

struct side {
	struct fi_info *info;
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_cntr *tx_cntr, *rx_cntr;
	struct fid_ep *ep;
	fi_addr_t peer, self;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void open_side(struct side *s, const char *ifname, enum fi_av_type avt,
		      enum fi_wait_obj wait)
{
	struct fi_info *hints = fi_allocinfo();
	struct fi_cq_attr cqa = { .format = FI_CQ_FORMAT_TAGGED, .wait_obj = wait };
	struct fi_av_attr ava = { .type = avt };
	struct fi_cntr_attr ca = { .events = FI_CNTR_EVENTS_COMP };
	int err;

	hints->caps = FI_TAGGED | FI_MSG | FI_DIRECTED_RECV | FI_SOURCE | FI_REMOTE_CQ_DATA;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->name = strdup(ifname);
	hints->fabric_attr->prov_name = strdup("xdpwake");
	hints->domain_attr->cq_data_size = 4;
	err = fi_getinfo(FI_VERSION(1, 5), NULL, NULL, 0, hints, &s->info);
	REQUIRE(!err && s->info, "fi_getinfo %s: %s", ifname, fi_strerror(-err));
	CHECK(!s->info->next, "one fi_info per interface");
	CHECK(!strcmp(s->info->domain_attr->name, ifname), "domain name = interface");
	CHECK(s->info->domain_attr->cq_data_size == 4, "cq_data_size");
	fi_freeinfo(hints);
	REQUIRE(!fi_fabric(s->info->fabric_attr, &s->fab, NULL), "fi_fabric");
	REQUIRE(!fi_domain(s->fab, s->info, &s->dom, NULL), "fi_domain");
	REQUIRE(!fi_av_open(s->dom, &ava, &s->av, NULL), "fi_av_open");
	REQUIRE(!fi_cq_open(s->dom, &cqa, &s->cq, NULL), "fi_cq_open");
	REQUIRE(!fi_cntr_open(s->dom, &ca, &s->tx_cntr, NULL), "tx cntr");
	REQUIRE(!fi_cntr_open(s->dom, &ca, &s->rx_cntr, NULL), "rx cntr");
	err = fi_endpoint(s->dom, s->info, &s->ep, NULL);
	REQUIRE(!err, "fi_endpoint %s: %s", ifname, fi_strerror(-err));
	REQUIRE(!fi_ep_bind(s->ep, &s->av->fid, 0), "bind av");
	REQUIRE(!fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION),
		"bind cq");
	REQUIRE(!fi_ep_bind(s->ep, &s->tx_cntr->fid, FI_SEND), "bind tx cntr");
	REQUIRE(!fi_ep_bind(s->ep, &s->rx_cntr->fid, FI_RECV), "bind rx cntr");
	{
		uint64_t f = FI_TRANSMIT | FI_COMPLETION;

		REQUIRE(!fi_control(&s->ep->fid, FI_SETOPSFLAG, &f), "tx op flags");
		f = FI_RECV | FI_COMPLETION;
		REQUIRE(!fi_control(&s->ep->fid, FI_SETOPSFLAG, &f), "rx op flags");
	}
	REQUIRE(!fi_enable(s->ep), "fi_enable");
}

static void exchange(struct side *a, struct side *b)
{
	char na[64], nb[64];
	size_t la = 0, lb = sizeof(nb);

	CHECK(fi_getname(&a->ep->fid, na, &la) == -FI_ETOOSMALL && la == 16, "getname size");
	la = sizeof(na);
	REQUIRE(!fi_getname(&a->ep->fid, na, &la), "getname");
	REQUIRE(!fi_getname(&b->ep->fid, nb, &lb), "getname");
	REQUIRE(fi_av_insert(a->av, nb, 1, &a->peer, 0, NULL) == 1, "av insert");
	REQUIRE(fi_av_insert(a->av, na, 1, &a->self, 0, NULL) == 1, "av insert self");
	REQUIRE(fi_av_insert(b->av, na, 1, &b->peer, 0, NULL) == 1, "av insert");
	REQUIRE(fi_av_insert(b->av, nb, 1, &b->self, 0, NULL) == 1, "av insert self");
}

/* Read one completion (or error) from @s within 10 s, progressing @other. */
static int get_comp(struct side *s, struct side *other, struct fi_cq_tagged_entry *e,
		    fi_addr_t *src, struct fi_cq_err_entry *err)
{
	double end = now() + 10;

	while (now() < end) {
		ssize_t r = fi_cq_readfrom(s->cq, e, 1, src);

		if (r == 1)
			return 0;
		if (r == -FI_EAVAIL) {
			memset(err, 0, sizeof(*err));
			REQUIRE(fi_cq_readerr(s->cq, err, 0) == 1, "readerr");
			return err->err;
		}
		if (r != -FI_EAGAIN)
			return (int)r;
		if (other)
			fi_cq_read(other->cq, NULL, 0);
	}
	return -ETIMEDOUT;
}

/* Nothing more on @s's CQ after both sides progressed a while. */
static bool cq_quiet(struct side *s, struct side *o)
{
	struct fi_cq_tagged_entry e;

	for (int i = 0; i < 2000; i++) {
		fi_cq_read(o->cq, NULL, 0);
		if (fi_cq_read(s->cq, &e, 1) != -FI_EAGAIN)
			return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	struct side a = { 0 }, b = { 0 };
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry ee;
	char sbuf[200000], rbuf[200000];
	int ctx[16];
	fi_addr_t src;
	int r;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc != 3) {
		fprintf(stderr, "usage: fi_unit IFACE_A IFACE_B\n");
		return 2;
	}
	open_side(&a, argv[1], FI_AV_TABLE, FI_WAIT_FD);
	open_side(&b, argv[2], FI_AV_MAP, FI_WAIT_UNSPEC);
	exchange(&a, &b);
	for (size_t i = 0; i < sizeof(sbuf); i++)
		sbuf[i] = (char)(i * 7 + 3);

	/* tagged, posted receive, with remote CQ data; sizes across classes */
	{
		static const size_t sz[] = { 0, 1, 1400, 5000, 40000, 200000 };

		for (int k = 0; k < 6; k++) {
			memset(rbuf, 0, sizeof(rbuf));
			REQUIRE(!fi_trecv(b.ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, 0x100 + k, 0,
					  &ctx[0]), "trecv");
			REQUIRE(!fi_tsenddata(a.ep, sbuf, sz[k], NULL, 0xABC000 + k, a.peer,
					      0x100 + k, &ctx[1]), "tsenddata");
			r = get_comp(&b, &a, &e, &src, &ee);
			CHECK(!r && e.op_context == &ctx[0] && e.len == sz[k] && e.tag == 0x100u + k &&
			      (e.flags & FI_REMOTE_CQ_DATA) && e.data == 0xABC000u + k &&
			      (e.flags & FI_TAGGED) && (e.flags & FI_RECV) && src == b.peer &&
			      !memcmp(rbuf, sbuf, sz[k]),
			      "tagged %zu bytes: r %d len %zu data %#llx src %llu", sz[k], r, e.len,
			      (unsigned long long)e.data, (unsigned long long)src);
			r = get_comp(&a, &b, &e, NULL, &ee);
			CHECK(!r && e.op_context == &ctx[1] && (e.flags & FI_SEND), "send completion");
		}
		CHECK(fi_tsenddata(a.ep, sbuf, 1, NULL, 0x1000000, a.peer, 1, &ctx[1]) ==
			      -FI_EINVAL, "cq data over 24 bits refused");
	}

	/* untagged and tagged do not match each other; unexpected, inject */
	REQUIRE(!fi_inject(a.ep, "untagged", 9, a.peer), "inject");
	REQUIRE(!fi_tinject(a.ep, "tagged", 7, a.peer, 5), "tinject");
	REQUIRE(!fi_trecv(b.ep, rbuf, 100, NULL, FI_ADDR_UNSPEC, 5, 0, &ctx[2]), "trecv");
	r = get_comp(&b, &a, &e, NULL, &ee);
	CHECK(!r && e.op_context == &ctx[2] && e.len == 7 && !strcmp(rbuf, "tagged"),
	      "tagged receive got the tagged message");
	REQUIRE(!fi_recv(b.ep, rbuf, 100, NULL, FI_ADDR_UNSPEC, &ctx[3]), "recv");
	r = get_comp(&b, &a, &e, NULL, &ee);
	CHECK(!r && e.op_context == &ctx[3] && e.len == 9 && (e.flags & FI_MSG) &&
	      !strcmp(rbuf, "untagged"), "untagged");
	CHECK(cq_quiet(&a, &b), "inject produced a completion");

	/* directed receive: from self only, so the peer's message waits */
	REQUIRE(!fi_trecv(b.ep, rbuf, 100, NULL, b.self, 9, 0, &ctx[4]), "directed trecv");
	REQUIRE(!fi_tsend(a.ep, "peer", 5, NULL, a.peer, 9, &ctx[5]), "tsend");
	get_comp(&a, &b, &e, NULL, &ee);
	CHECK(cq_quiet(&b, &a), "directed receive took another sender's message");
	REQUIRE(!fi_tsend(b.ep, "self", 5, NULL, b.self, 9, &ctx[6]), "send to self");
	r = get_comp(&b, &a, &e, &src, &ee);
	if (!r && e.op_context == &ctx[6]) /* send completion first */
		r = get_comp(&b, &a, &e, &src, &ee);
	CHECK(!r && e.op_context == &ctx[4] && !strcmp(rbuf, "self") && src == b.self,
	      "directed receive from self");

	/* peek: the peer's tag-9 message is waiting; claim it, receive it */
	{
		struct iovec iov = { .iov_base = rbuf, .iov_len = 100 };
		struct fi_msg_tagged m = { .msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC,
					   .tag = 9, .ignore = 0, .context = &ctx[7] };

		/* drain what is left (the self send's completion) */
		while (fi_cq_read(b.cq, &e, 1) == 1)
			;
		REQUIRE(!fi_trecvmsg(b.ep, &m, FI_PEEK | FI_CLAIM), "peek claim");
		r = get_comp(&b, &a, &e, NULL, &ee);
		CHECK(!r && e.op_context == &ctx[7] && e.len == 5 && e.tag == 9, "peek envelope");
		m.tag = 9;
		REQUIRE(!fi_trecvmsg(b.ep, &m, FI_PEEK), "peek again");
		r = get_comp(&b, &a, &e, NULL, &ee);
		CHECK(r == FI_ENOMSG && ee.op_context == &ctx[7], "claimed message not peeked: %d", r);
		memset(rbuf, 0, 100);
		REQUIRE(!fi_trecvmsg(b.ep, &m, FI_CLAIM), "claim");
		r = get_comp(&b, &a, &e, NULL, &ee);
		CHECK(!r && e.op_context == &ctx[7] && !strcmp(rbuf, "peer"), "claimed receive");
		/* peek + discard */
		REQUIRE(!fi_tsend(a.ep, "drop", 5, NULL, a.peer, 10, &ctx[5]), "tsend");
		get_comp(&a, &b, &e, NULL, &ee);
		m.tag = 10;
		for (int i = 0; i < 100; i++) {
			REQUIRE(!fi_trecvmsg(b.ep, &m, FI_PEEK), "peek");
			r = get_comp(&b, &a, &e, NULL, &ee);
			if (!r)
				break;
		}
		CHECK(!r && e.len == 5, "peek before discard");
		REQUIRE(!fi_trecvmsg(b.ep, &m, FI_PEEK | FI_DISCARD), "peek discard");
		r = get_comp(&b, &a, &e, NULL, &ee);
		CHECK(!r, "peek|discard completion");
		REQUIRE(!fi_trecvmsg(b.ep, &m, FI_PEEK), "peek after discard");
		r = get_comp(&b, &a, &e, NULL, &ee);
		CHECK(r == FI_ENOMSG, "discarded message still there (%d)", r);
	}

	/* cancel */
	REQUIRE(!fi_trecv(b.ep, rbuf, 100, NULL, FI_ADDR_UNSPEC, 777, 0, &ctx[8]), "trecv");
	REQUIRE(!fi_cancel(&b.ep->fid, &ctx[8]), "cancel");
	r = get_comp(&b, &a, &e, NULL, &ee);
	CHECK(r == FI_ECANCELED && ee.op_context == &ctx[8], "cancel: %d", r);
	CHECK(fi_cancel(&b.ep->fid, &ctx[8]) == -FI_ENOENT, "cancel twice");

	/* truncation */
	REQUIRE(!fi_trecv(b.ep, rbuf, 10, NULL, FI_ADDR_UNSPEC, 11, 0, &ctx[9]), "trecv");
	REQUIRE(!fi_tsend(a.ep, sbuf, 3000, NULL, a.peer, 11, &ctx[5]), "tsend");
	r = get_comp(&b, &a, &e, NULL, &ee);
	CHECK(r == FI_ETRUNC && ee.op_context == &ctx[9] && ee.len == 10 && ee.olen == 2990 &&
	      !memcmp(rbuf, sbuf, 10), "truncation: %d len %zu olen %zu", r, ee.len, ee.olen);
	get_comp(&a, &b, &e, NULL, &ee);

	/* selective completion: sendmsg without FI_COMPLETION, counters count */
	{
		uint64_t tx0 = fi_cntr_read(a.tx_cntr), rx0 = fi_cntr_read(b.rx_cntr);
		struct iovec iov = { .iov_base = sbuf, .iov_len = 10 };
		struct fi_msg_tagged m = { .msg_iov = &iov, .iov_count = 1, .addr = a.peer,
					   .tag = 12, .context = &ctx[10] };

		REQUIRE(!fi_trecv(b.ep, rbuf, 100, NULL, FI_ADDR_UNSPEC, 12, 0, &ctx[11]), "trecv");
		REQUIRE(!fi_tsendmsg(a.ep, &m, 0), "tsendmsg");
		r = get_comp(&b, &a, &e, NULL, &ee);
		CHECK(!r && e.op_context == &ctx[11], "receive of the silent send");
		CHECK(cq_quiet(&a, &b), "send without FI_COMPLETION completed");
		CHECK(fi_cntr_read(a.tx_cntr) == tx0 + 1 && fi_cntr_read(b.rx_cntr) == rx0 + 1,
		      "counters %llu %llu", (unsigned long long)(fi_cntr_read(a.tx_cntr) - tx0),
		      (unsigned long long)(fi_cntr_read(b.rx_cntr) - rx0));
		REQUIRE(!fi_tsend(a.ep, sbuf, 1, NULL, a.peer, 13, &ctx[5]), "tsend");
		REQUIRE(!fi_trecv(b.ep, rbuf, 100, NULL, FI_ADDR_UNSPEC, 13, 0, &ctx[12]), "trecv");
		CHECK(!fi_cntr_wait(b.rx_cntr, rx0 + 2, 10000), "fi_cntr_wait");
		get_comp(&b, &a, &e, NULL, &ee);
		get_comp(&a, &b, &e, NULL, &ee);
	}

	/* fi_cq_sread: the receive completes while we block */
	REQUIRE(!fi_trecv(a.ep, rbuf, 100, NULL, FI_ADDR_UNSPEC, 14, 0, &ctx[13]), "trecv");
	REQUIRE(!fi_tsend(b.ep, "sread", 6, NULL, b.peer, 14, &ctx[5]), "tsend");
	{
		double end = now() + 10;

		r = 0;
		while (now() < end) {
			ssize_t n = fi_cq_sread(a.cq, &e, 1, NULL, 100);

			fi_cq_read(b.cq, NULL, 0);
			if (n == 1 && e.op_context == &ctx[13]) {
				r = 1;
				break;
			}
		}
		CHECK(r == 1 && !strcmp(rbuf, "sread"), "fi_cq_sread");
	}
	get_comp(&b, &a, &e, NULL, &ee);

	/* FI_WAIT_FD: trywait, then the fd becomes readable on arrival */
	{
		int fd = -1;
		double end = now() + 10;
		bool got = false;

		REQUIRE(!fi_control(&a.cq->fid, FI_GETWAIT, &fd) && fd >= 0, "FI_GETWAIT");
		REQUIRE(!fi_trecv(a.ep, rbuf, 100, NULL, FI_ADDR_UNSPEC, 15, 0, &ctx[14]), "trecv");
		REQUIRE(!fi_tsend(b.ep, "fd", 3, NULL, b.peer, 15, &ctx[5]), "tsend");
		while (!got && now() < end) {
			struct fid *f = &a.cq->fid;
			struct pollfd p = { .fd = fd, .events = POLLIN };

			fi_cq_read(b.cq, NULL, 0);
			if (fi_trywait(a.fab, &f, 1) == 0)
				poll(&p, 1, 100);
			if (fi_cq_read(a.cq, &e, 1) == 1 && e.op_context == &ctx[14])
				got = true;
		}
		CHECK(got && !strcmp(rbuf, "fd"), "FI_WAIT_FD receive");
	}

	fi_close(&a.ep->fid);
	fi_close(&b.ep->fid);
	for (struct side *s = &a; s; s = s == &a ? &b : NULL) {
		CHECK(!fi_close(&s->cq->fid), "close cq");
		CHECK(!fi_close(&s->tx_cntr->fid) && !fi_close(&s->rx_cntr->fid), "close cntr");
		CHECK(!fi_close(&s->av->fid), "close av");
		CHECK(!fi_close(&s->dom->fid), "close domain");
		CHECK(!fi_close(&s->fab->fid), "close fabric");
		fi_freeinfo(s->info);
	}
	printf("%s: %d checks, %d failed\n", fails ? "FAIL" : "ok", checks, fails);
	return fails ? 1 : 0;
}
