// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * xw_mpi_test.c - an MPI program that exercises what Open MPI's mtl ofi
 * asks of the xdpwake provider: point-to-point at every size class up to
 * 16 MiB with the data checked, MPI_ANY_SOURCE/MPI_ANY_TAG, unexpected
 * messages, Probe/Iprobe/Mprobe/Improbe, Cancel, truncation reported as
 * MPI_ERR_TRUNCATE, Ssend, sends to self, Barrier/Bcast/Allreduce/
 * Alltoall.  Any number of ranks >= 2.  Rank 0 prints one "ok:" line per
 * part; any failure prints "FAIL:" and aborts the job.
 *
 * Built by tests/test_mpi.sh with mpicc (not by the Makefile: it needs
 * Open MPI's compiler wrapper).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xw_mpi.h"

static void check(const unsigned char *b, size_t n, uint32_t seed, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != pat(seed, i))
			FAIL("%s: byte %zu of %zu differs", what, i, n);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		FAIL("out of memory");
	return p;
}

/* Ping-pong of every size between rank 0 and every other rank. */
static void test_sizes(void)
{
	static const size_t sizes[] = { 0,     1,      7,      64,      512,     1000,
					1500,  4096,   8191,   16384,   32768,   32769,
					65536, 262144, 1 << 20, 4 << 20, 16 << 20 };
	const size_t nsz = sizeof(sizes) / sizeof(sizes[0]);
	unsigned char *sb = xmalloc(16 << 20), *rb = xmalloc(16 << 20);

	for (int peer = 1; peer < nranks; peer++) {
		for (size_t k = 0; k < nsz; k++) {
			size_t n = sizes[k];
			uint32_t seed = (uint32_t)(k * 131 + peer);
			MPI_Status st;
			int cnt;

			if (rank == 0) {
				fill(sb, n, seed);
				MPI_Send(sb, (int)n, MPI_BYTE, peer, (int)k, MPI_COMM_WORLD);
				memset(rb, 0, n);
				MPI_Recv(rb, (int)n, MPI_BYTE, peer, (int)k + 1000, MPI_COMM_WORLD, &st);
				MPI_Get_count(&st, MPI_BYTE, &cnt);
				if ((size_t)cnt != n || st.MPI_SOURCE != peer)
					FAIL("size %zu: got %d bytes from %d", n, cnt, st.MPI_SOURCE);
				check(rb, n, seed + 7, "pong");
			} else if (rank == peer) {
				memset(rb, 0, n);
				MPI_Recv(rb, (int)n, MPI_BYTE, 0, (int)k, MPI_COMM_WORLD, &st);
				MPI_Get_count(&st, MPI_BYTE, &cnt);
				if ((size_t)cnt != n)
					FAIL("size %zu: got %d bytes", n, cnt);
				check(rb, n, seed, "ping");
				fill(sb, n, seed + 7);
				MPI_Send(sb, (int)n, MPI_BYTE, 0, (int)k + 1000, MPI_COMM_WORLD);
			}
		}
	}
	free(sb);
	free(rb);
	OK("point-to-point, %zu sizes 0 B .. 16 MiB, rank 0 with each of %d peers, data checked",
	   nsz, nranks - 1);
}

/* Every rank but 0 sends 3 messages; rank 0 takes them with wildcards. */
static void test_wildcards(void)
{
	const int per = 3;

	if (rank == 0) {
		int seen[64] = { 0 };

		for (int i = 0; i < per * (nranks - 1); i++) {
			int v[2];
			MPI_Status st;

			MPI_Recv(v, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
			if (v[0] != st.MPI_SOURCE || v[1] != st.MPI_TAG)
				FAIL("wildcard: message (%d, %d) reported as from %d tag %d", v[0], v[1],
				     st.MPI_SOURCE, st.MPI_TAG);
			if (st.MPI_TAG != seen[st.MPI_SOURCE] + 10)
				FAIL("wildcard: from %d tag %d out of order", st.MPI_SOURCE, st.MPI_TAG);
			seen[st.MPI_SOURCE]++;
		}
	} else {
		for (int i = 0; i < per; i++) {
			int v[2] = { rank, 10 + i };

			MPI_Send(v, 2, MPI_INT, 0, 10 + i, MPI_COMM_WORLD);
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	OK("MPI_ANY_SOURCE / MPI_ANY_TAG, order per sender kept");
}

/* Messages that arrive before their receive is posted, small and large,
 * received in the reverse order of sending. */
static void test_unexpected(void)
{
	static const size_t sz[] = { 10, 3000, 40000, 2 << 20 };
	const int n = 4;
	unsigned char *b[4];
	MPI_Request rq[4];

	for (int i = 0; i < n; i++)
		b[i] = xmalloc(sz[i]);
	if (rank == 1) {
		for (int i = 0; i < n; i++) {
			fill(b[i], sz[i], 500 + (uint32_t)i);
			MPI_Isend(b[i], (int)sz[i], MPI_BYTE, 0, 200 + i, MPI_COMM_WORLD, &rq[i]);
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		for (int i = n - 1; i >= 0; i--) {
			MPI_Status st;
			int cnt;

			MPI_Recv(b[i], (int)sz[i], MPI_BYTE, 1, 200 + i, MPI_COMM_WORLD, &st);
			MPI_Get_count(&st, MPI_BYTE, &cnt);
			if ((size_t)cnt != sz[i])
				FAIL("unexpected %d: %d bytes", i, cnt);
			check(b[i], sz[i], 500 + (uint32_t)i, "unexpected");
		}
	}
	if (rank == 1)
		MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
	for (int i = 0; i < n; i++)
		free(b[i]);
	MPI_Barrier(MPI_COMM_WORLD);
	OK("unexpected messages (10 B .. 2 MiB) received after a barrier, in reverse order");
}

static void test_probe(void)
{
	const size_t big = 100000;
	unsigned char *b = xmalloc(big);

	if (rank == 1) {
		fill(b, 777, 1);
		MPI_Send(b, 777, MPI_BYTE, 0, 42, MPI_COMM_WORLD);
		fill(b, 333, 2);
		MPI_Send(b, 333, MPI_BYTE, 0, 43, MPI_COMM_WORLD);
		fill(b, big, 3);
		MPI_Send(b, (int)big, MPI_BYTE, 0, 44, MPI_COMM_WORLD);
		fill(b, 55, 4);
		MPI_Send(b, 55, MPI_BYTE, 0, 45, MPI_COMM_WORLD);
	} else if (rank == 0) {
		MPI_Status st;
		MPI_Message msg;
		int cnt, flag = 0;

		/* Probe, then receive what it saw */
		MPI_Probe(MPI_ANY_SOURCE, 42, MPI_COMM_WORLD, &st);
		MPI_Get_count(&st, MPI_BYTE, &cnt);
		if (cnt != 777 || st.MPI_SOURCE != 1)
			FAIL("probe: %d bytes from %d", cnt, st.MPI_SOURCE);
		MPI_Recv(b, cnt, MPI_BYTE, st.MPI_SOURCE, 42, MPI_COMM_WORLD, &st);
		check(b, 777, 1, "probe");
		/* Iprobe until it is there */
		for (long i = 0; !flag; i++) {
			MPI_Iprobe(1, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
			if (i > 200000000L)
				FAIL("iprobe never saw the message");
		}
		MPI_Get_count(&st, MPI_BYTE, &cnt);
		if (cnt != 333 || st.MPI_TAG != 43)
			FAIL("iprobe: %d bytes tag %d", cnt, st.MPI_TAG);
		MPI_Recv(b, cnt, MPI_BYTE, 1, 43, MPI_COMM_WORLD, &st);
		check(b, 333, 2, "iprobe");
		/* Mprobe / Mrecv of a large message */
		MPI_Mprobe(1, 44, MPI_COMM_WORLD, &msg, &st);
		MPI_Get_count(&st, MPI_BYTE, &cnt);
		if ((size_t)cnt != big)
			FAIL("mprobe: %d bytes", cnt);
		memset(b, 0, big);
		MPI_Mrecv(b, cnt, MPI_BYTE, &msg, &st);
		check(b, big, 3, "mrecv");
		/* Improbe */
		flag = 0;
		for (long i = 0; !flag; i++) {
			MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st);
			if (i > 200000000L)
				FAIL("improbe never saw the message");
		}
		MPI_Get_count(&st, MPI_BYTE, &cnt);
		if (cnt != 55 || st.MPI_TAG != 45)
			FAIL("improbe: %d bytes tag %d", cnt, st.MPI_TAG);
		MPI_Mrecv(b, cnt, MPI_BYTE, &msg, &st);
		check(b, 55, 4, "improbe");
	}
	free(b);
	MPI_Barrier(MPI_COMM_WORLD);
	OK("MPI_Probe, MPI_Iprobe, MPI_Mprobe/MPI_Mrecv (100 kB), MPI_Improbe");
}

static void test_cancel(void)
{
	char buf[16];
	MPI_Request rq;
	MPI_Status st;
	int flag = 0;

	MPI_Irecv(buf, sizeof(buf), MPI_BYTE, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &rq);
	MPI_Cancel(&rq);
	MPI_Wait(&rq, &st);
	MPI_Test_cancelled(&st, &flag);
	if (!flag)
		FAIL("cancel: receive not cancelled");
	MPI_Barrier(MPI_COMM_WORLD);
	OK("MPI_Cancel of a posted receive");
}

static void test_truncate(void)
{
	unsigned char b[100];

	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if (rank == 1) {
		fill(b, 100, 9);
		MPI_Send(b, 100, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
	} else if (rank == 0) {
		MPI_Status st;
		int err, cls;

		err = MPI_Recv(b, 10, MPI_BYTE, 1, 7, MPI_COMM_WORLD, &st);
		MPI_Error_class(err, &cls);
		if (cls != MPI_ERR_TRUNCATE)
			FAIL("truncation: error class %d, not MPI_ERR_TRUNCATE", cls);
		check(b, 10, 9, "truncated");
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
	MPI_Barrier(MPI_COMM_WORLD);
	OK("a message longer than the receive buffer: MPI_ERR_TRUNCATE");
}

static void test_ssend(void)
{
	int v = rank * 10;

	if (rank == 1) {
		MPI_Ssend(&v, 1, MPI_INT, 0, 77, MPI_COMM_WORLD);
	} else if (rank == 0) {
		MPI_Recv(&v, 1, MPI_INT, 1, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (v != 10)
			FAIL("ssend: got %d", v);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	OK("MPI_Ssend");
}

static void test_self(void)
{
	static const size_t sz[] = { 0, 5, 5000, 1 << 20 };
	unsigned char *s = xmalloc(1 << 20), *r = xmalloc(1 << 20);

	for (int i = 0; i < 4; i++) {
		MPI_Request rq;
		MPI_Status st;
		int cnt;

		fill(s, sz[i], 40 + (uint32_t)i);
		/* send first (unexpected at ourselves), then receive */
		MPI_Isend(s, (int)sz[i], MPI_BYTE, rank, 300 + i, MPI_COMM_WORLD, &rq);
		MPI_Probe(rank, 300 + i, MPI_COMM_WORLD, &st);
		MPI_Recv(r, (int)sz[i], MPI_BYTE, MPI_ANY_SOURCE, 300 + i, MPI_COMM_WORLD, &st);
		MPI_Wait(&rq, MPI_STATUS_IGNORE);
		MPI_Get_count(&st, MPI_BYTE, &cnt);
		if ((size_t)cnt != sz[i] || st.MPI_SOURCE != rank)
			FAIL("self %zu: %d bytes from %d", sz[i], cnt, st.MPI_SOURCE);
		check(r, sz[i], 40 + (uint32_t)i, "self");
		/* receive first, then send */
		MPI_Irecv(r, (int)sz[i], MPI_BYTE, rank, 400 + i, MPI_COMM_WORLD, &rq);
		MPI_Send(s, (int)sz[i], MPI_BYTE, rank, 400 + i, MPI_COMM_WORLD);
		MPI_Wait(&rq, &st);
		check(r, sz[i], 40 + (uint32_t)i, "self posted");
	}
	free(s);
	free(r);
	MPI_Barrier(MPI_COMM_WORLD);
	OK("sends to self (0 B .. 1 MiB), unexpected and posted");
}

static void test_collectives(void)
{
	const int n = 1000;
	int *a = xmalloc(sizeof(int) * n), *b = xmalloc(sizeof(int) * n);
	int *x = xmalloc(sizeof(int) * nranks), *y = xmalloc(sizeof(int) * nranks);
	unsigned char *bc = xmalloc(1 << 20);

	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		fill(bc, 1 << 20, 77);
	MPI_Bcast(bc, 1 << 20, MPI_BYTE, 0, MPI_COMM_WORLD);
	check(bc, 1 << 20, 77, "bcast");
	for (int i = 0; i < n; i++)
		a[i] = rank + i;
	MPI_Allreduce(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < n; i++)
		if (b[i] != nranks * (nranks - 1) / 2 + nranks * i)
			FAIL("allreduce: element %d is %d", i, b[i]);
	for (int i = 0; i < nranks; i++)
		x[i] = rank * 100 + i;
	MPI_Alltoall(x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD);
	for (int i = 0; i < nranks; i++)
		if (y[i] != i * 100 + rank)
			FAIL("alltoall: element %d is %d", i, y[i]);
	free(a);
	free(b);
	free(x);
	free(y);
	free(bc);
	MPI_Barrier(MPI_COMM_WORLD);
	OK("MPI_Barrier, MPI_Bcast (1 MiB), MPI_Allreduce, MPI_Alltoall on %d ranks", nranks);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (nranks < 2 || nranks > 64)
		FAIL("needs 2..64 ranks, not %d", nranks);
	test_sizes();
	test_wildcards();
	test_unexpected();
	test_probe();
	test_cancel();
	test_truncate();
	test_ssend();
	test_self();
	test_collectives();
	OK("all parts passed on %d ranks", nranks);
	MPI_Finalize();
	return 0;
}
