// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * mpi_pingpong.c - MPI ping-pong between ranks 0 and 1 (latency and
 * bandwidth per size, CPU per message of both ranks), then MPI_Allreduce
 * latency over all ranks.  Output (rank 0), one CSV line per measurement:
 *   pingpong,SIZE,RTT_US,MB_PER_S,CPU_US_PER_MSG
 *   allreduce,8,LAT_US,,
 * With --allreduce-only only the latter.
 * The round trip is the median of 5 batches.  bench/mpi/run.sh builds it with mpicc and runs it.
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

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static const int sizes[] = { 0, 8, 64, 512, 4096, 32768, 262144, 1 << 20, 4 << 20 };
	int rank, n;
	char *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	buf = calloc(1, 4 << 20);
	/* --allreduce-only: more than two ranks, the ping-pong would leave the
	 * others spinning in a barrier on the same cores */
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]) &&
			   !(argc > 1 && !strcmp(argv[1], "--allreduce-only"));
	     k++) {
		int sz = sizes[k], iters = sz <= 4096 ? 2000 : sz <= 262144 ? 200 : 20;
		double rtt[5], c0, c1, cpu_other = 0;

		for (int b = -1; b < 5; b++) {
			double t0;

			MPI_Barrier(MPI_COMM_WORLD);
			c0 = cpu_s();
			t0 = MPI_Wtime();
			for (int i = 0; i < (b < 0 ? iters / 10 + 1 : iters); i++) {
				if (rank == 0) {
					MPI_Send(buf, sz, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
					MPI_Recv(buf, sz, MPI_BYTE, 1, 1, MPI_COMM_WORLD,
						 MPI_STATUS_IGNORE);
				} else if (rank == 1) {
					MPI_Recv(buf, sz, MPI_BYTE, 0, 1, MPI_COMM_WORLD,
						 MPI_STATUS_IGNORE);
					MPI_Send(buf, sz, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
				}
			}
			if (b >= 0)
				rtt[b] = (MPI_Wtime() - t0) / iters * 1e6;
		}
		c1 = cpu_s() - c0; /* last batch */
		if (rank == 1)
			MPI_Send(&c1, 1, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
		else if (rank == 0)
			MPI_Recv(&cpu_other, 1, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (rank == 0) {
			qsort(rtt, 5, sizeof(double), cmp);
			printf("pingpong,%d,%.2f,%.1f,%.2f\n", sz, rtt[2],
			       rtt[2] > 0 ? 2.0 * sz / rtt[2] : 0.0,
			       (c1 + cpu_other) / (2.0 * iters) * 1e6);
			fflush(stdout);
		}
	}
	{
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
