// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * mpi_pingpong.c - MPI ping-pong between ranks 0 and 1 (latency and
 * bandwidth per size, CPU per message of both ranks), then MPI_Allreduce
 * latency over all ranks.  Output (rank 0), one CSV line per measurement:
 *   pingpong,SIZE,RTT_US,MB_PER_S,CPU_US_PER_MSG
 *   allreduce,8,LAT_US,,
 * With --allreduce-only only the latter.
 * With --pairs (an even number of ranks, the first half on one host and the
 * second on the other): every rank r of the first half ping-pongs with rank
 * r + n/2 at the same time, and rank 0 prints, per size,
 *   pairs,SIZE,RTT_US,MB_PER_S,CPU_US_PER_MSG,RTT_MAX_US
 * (RTT_US the median over the pairs of each pair's median round trip,
 * RTT_MAX_US the slowest pair's, MB_PER_S the sum over the pairs, CPU over
 * all ranks per round trip of one pair).  --sizes A,B,... limits the sizes.
 * --think US: after every round trip each side computes US microseconds
 * (a busy loop, no MPI calls: the SHRIMP paper's multiprogramming
 * experiment with MPI), and rank 0 also prints, per size,
 *   think,SIZE,US,TOTAL_S
 * (TOTAL_S the wall time of the 5 batches, barrier to barrier).
 * --stream: after each ping-pong size of 4 KiB or more, rank 0 sends 8
 * messages of that size at once to rank 1 (nonblocking), which answers
 * with 0 bytes once all 8 arrived; rank 0 prints, per size,
 *   stream,SIZE,US_PER_WINDOW,MB_PER_S,CPU_US_PER_WINDOW
 * (the median of 5 batches; MB/s one way, 8 * SIZE per window).
 * The round trip is the median of 5 batches.  bench/mpi/run.sh and
 * bench/mpi/ranks.sh build it with mpicc and run it.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

static int think_us, think_set;

/* Compute @us microseconds without MPI calls. */
static void think(void)
{
	double end = MPI_Wtime() + think_us * 1e-6;
	volatile unsigned long x = 1;

	while (MPI_Wtime() < end)
		for (int i = 0; i < 100; i++)
			x = x * 6364136223846793005UL + 1;
}

#define STREAM_WINDOW 8

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One round trip between @rank and @peer (the lower rank sends first),
 * then the think time. */
static void round_trip(char *buf, int sz, int rank, int peer, MPI_Comm comm)
{
	if (rank < peer) {
		MPI_Send(buf, sz, MPI_BYTE, peer, 1, comm);
		MPI_Recv(buf, sz, MPI_BYTE, peer, 1, comm, MPI_STATUS_IGNORE);
	} else {
		MPI_Recv(buf, sz, MPI_BYTE, peer, 1, comm, MPI_STATUS_IGNORE);
		MPI_Send(buf, sz, MPI_BYTE, peer, 1, comm);
	}
	if (think_us)
		think();
}

/* One window of STREAM_WINDOW messages of @sz bytes from the lower rank
 * to the other, answered with 0 bytes once all arrived. */
static void window(char *buf, int sz, int rank, int peer, MPI_Comm comm)
{
	MPI_Request rq[STREAM_WINDOW];

	for (int k = 0; k < STREAM_WINDOW; k++) {
		char *p = buf + (size_t)k * (size_t)sz;

		if (rank < peer)
			MPI_Isend(p, sz, MPI_BYTE, peer, 2, comm, &rq[k]);
		else
			MPI_Irecv(p, sz, MPI_BYTE, peer, 2, comm, &rq[k]);
	}
	MPI_Waitall(STREAM_WINDOW, rq, MPI_STATUSES_IGNORE);
	if (rank < peer)
		MPI_Recv(NULL, 0, MPI_BYTE, peer, 3, comm, MPI_STATUS_IGNORE);
	else
		MPI_Send(NULL, 0, MPI_BYTE, peer, 3, comm);
}

/* The median of 5 batches of @iters calls of @fn between @rank and @peer,
 * in us per call, after a warm-up batch; -1 for ranks outside a pair
 * (@peer < 0).  *@cpu: this rank's CPU time over the 5 batches. */
static double batches(void (*fn)(char *, int, int, int, MPI_Comm), char *buf, int sz, int iters,
		      int rank, int peer, MPI_Comm comm, double *cpu)
{
	double t[5], c0 = 0;

	for (int b = -1; b < 5; b++) {
		double t0;

		MPI_Barrier(comm);
		if (b == 0)
			c0 = cpu_s();
		t0 = MPI_Wtime();
		for (int i = 0; peer >= 0 && i < (b < 0 ? iters / 10 + 1 : iters); i++)
			fn(buf, sz, rank, peer, comm);
		if (b >= 0)
			t[b] = (MPI_Wtime() - t0) / iters * 1e6;
	}
	*cpu = cpu_s() - c0;
	if (peer < 0)
		return -1;
	qsort(t, 5, sizeof(double), cmp);
	return t[2];
}

int main(int argc, char **argv)
{
	static const int all_sizes[] = { 0, 8, 64, 512, 4096, 32768, 262144, 1 << 20, 4 << 20 };
	int sizes[32], nsizes = 0, rank, n, pairs = 0, allreduce_only = 0, streams = 0;
	char *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--allreduce-only")) {
			allreduce_only = 1;
		} else if (!strcmp(argv[i], "--pairs")) {
			pairs = 1;
		} else if (!strcmp(argv[i], "--stream")) {
			streams = 1;
		} else if (!strcmp(argv[i], "--think") && i + 1 < argc) {
			think_us = atoi(argv[++i]);
			think_set = 1;
		} else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
			for (char *t = strtok(argv[++i], ","); t && nsizes < 32; t = strtok(NULL, ","))
				sizes[nsizes++] = atoi(t);
		} else {
			if (!rank)
				fprintf(stderr, "usage: %s [--allreduce-only | --pairs] [--stream] [--sizes A,B,..] "
					"[--think US]\n",
					argv[0]);
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	}
	if (!nsizes)
		for (size_t k = 0; k < sizeof(all_sizes) / sizeof(all_sizes[0]); k++)
			sizes[nsizes++] = all_sizes[k];
	for (int k = 0; k < nsizes; k++)
		if (sizes[k] < 0 || sizes[k] > 4 << 20)
			MPI_Abort(MPI_COMM_WORLD, 2);
	if (pairs && (n < 2 || n % 2)) {
		if (!rank)
			fprintf(stderr, "--pairs needs an even number of ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	if (streams && pairs) {
		if (!rank)
			fprintf(stderr, "--stream is for two ranks, not with --pairs\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	buf = calloc(STREAM_WINDOW, 4 << 20);
	/* Without --pairs only ranks 0 and 1 ping-pong (--allreduce-only: more
	 * than two ranks, the ping-pong would leave the others spinning in a
	 * barrier on the same cores). */
	for (int k = 0; k < nsizes && !allreduce_only; k++) {
		int sz = sizes[k], iters = sz <= 4096 ? 2000 : sz <= 262144 ? 200 : 20;
		int peer = pairs ? (rank < n / 2 ? rank + n / 2 : rank - n / 2)
				 : rank == 0 ? 1 : rank == 1 ? 0 : -1;
		double rtt, c1, cpu_sum = 0, *all = NULL;

		double tt0;

		if (pairs)
			iters = iters / 4 + 1; /* every pair at once: fewer per batch */
		if (think_set && iters > 200)
			iters = 200;
		MPI_Barrier(MPI_COMM_WORLD);
		tt0 = MPI_Wtime();
		rtt = batches(round_trip, buf, sz, iters, rank, peer, MPI_COMM_WORLD, &c1);
		MPI_Barrier(MPI_COMM_WORLD);
		if (think_set && !rank)
			printf("think,%d,%d,%.4f\n", sz, think_us, MPI_Wtime() - tt0);
		if (!rank)
			all = calloc(n, sizeof(double));
		MPI_Gather(&rtt, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
		MPI_Reduce(&c1, &cpu_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
		if (!rank) {
			double trips = 5.0 * iters;

			if (pairs) {
				int np = n / 2;
				double bw = 0;

				for (int i = 0; i < np; i++)
					bw += all[i] > 0 ? 2.0 * sz / all[i] : 0.0;
				qsort(all, np, sizeof(double), cmp);
				printf("pairs,%d,%.2f,%.1f,%.2f,%.2f\n", sz,
				       np % 2 ? all[np / 2] : (all[np / 2 - 1] + all[np / 2]) / 2,
				       bw, cpu_sum / (trips * np) * 1e6, all[np - 1]);
			} else {
				printf("pingpong,%d,%.2f,%.1f,%.2f\n", sz, rtt,
				       rtt > 0 ? 2.0 * sz / rtt : 0.0, cpu_sum / (2.0 * trips) * 1e6);
			}
			fflush(stdout);
			free(all);
		}
		if (streams && sz >= 4096) {
			int wi = sz <= 262144 ? 100 : 10;
			double us = batches(window, buf, sz, wi, rank, rank < 2 ? 1 - rank : -1,
					    MPI_COMM_WORLD, &c1);

			MPI_Reduce(&c1, &cpu_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
			if (!rank)
				printf("stream,%d,%.2f,%.1f,%.2f\n", sz, us,
				       (double)STREAM_WINDOW * sz / us, cpu_sum / (5.0 * wi) * 1e6);
			fflush(stdout);
		}
	}
	if (!pairs) {
		double v = rank, r, t0, lat[5];

		for (int b = -1; b < 5; b++) {
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
			for (int i = 0; i < 1000; i++)
				MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
			if (b >= 0)
				lat[b] = (MPI_Wtime() - t0) / 1000 * 1e6;
		}
		qsort(lat, 5, sizeof(double), cmp);
		if (rank == 0)
			printf("allreduce,8,%.2f,,\n", lat[2]);
	}
	free(buf);
	MPI_Finalize();
	return 0;
}
