// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * xw_mpi_a2a - MPI_Alltoall of blocks of 4 KiB to 1 MiB per pair of
 * ranks, every byte of every block checked (tests/test_mpi_a2a.sh,
 * bench/mpi/a2a.sh).  Each iteration fills the send blocks with a pattern
 * of (source, destination, size, iteration), poisons the receive buffer,
 * runs MPI_Alltoall and checks every received byte; only the MPI_Alltoall
 * calls are timed.  Rank 0 prints per size
 *   a2a,SIZE,ITERS,US_PER_ALLTOALL,MB_PER_S
 * (the slowest rank's mean time; MB/s: the bytes every rank sends to the
 * others, summed over the ranks, per second), then "ok:   all parts
 * passed on N ranks" if every byte everywhere was right.
 *   xw_mpi_a2a [--sizes 4096,65536,...] [--bytes N]
 * --bytes: about this many bytes sent per rank and size (default 32 MiB;
 * at least 3 iterations).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char pat(int src, int dst, size_t size, int it, size_t i)
{
	uint64_t x = (uint64_t)src * 0x9E3779B97F4A7C15ULL ^ (uint64_t)dst * 0xBF58476D1CE4E5B9ULL ^
		     (uint64_t)size * 0x94D049BB133111EBULL ^ (uint64_t)it;

	x ^= i * 0xD6E8FEB86659FD93ULL;
	x ^= x >> 29;
	return (unsigned char)(x ^ x >> 11);
}

int main(int argc, char **argv)
{
	size_t sizes[16] = { 4096, 16384, 65536, 262144, 1048576 };
	int nsizes = 5, rank, n, bad = 0, allbad = 0;
	double per_rank = 32.0 * 1024 * 1024;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	for (int a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--sizes") && a + 1 < argc) {
			char *p = argv[++a];

			for (nsizes = 0; *p && nsizes < 16; nsizes++) {
				sizes[nsizes] = strtoul(p, &p, 10);
				if (*p == ',')
					p++;
			}
		} else if (!strcmp(argv[a], "--bytes") && a + 1 < argc) {
			per_rank = atof(argv[++a]);
		} else {
			if (!rank)
				fprintf(stderr, "usage: xw_mpi_a2a [--sizes LIST] [--bytes N]\n");
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	}
	for (int s = 0; s < nsizes; s++) {
		size_t size = sizes[s];
		int iters = (int)(per_rank / ((double)size * (n - 1)));
		unsigned char *sb = malloc(size * (size_t)n), *rb = malloc(size * (size_t)n);
		double t = 0, tmax;
		long wrong = 0;

		if (iters < 3)
			iters = 3;
		if (!sb || !rb)
			MPI_Abort(MPI_COMM_WORLD, 2);
		for (int it = 0; it < iters; it++) {
			double t0;

			for (int d = 0; d < n; d++)
				for (size_t i = 0; i < size; i++)
					sb[(size_t)d * size + i] = pat(rank, d, size, it, i);
			memset(rb, 0xEE, size * (size_t)n);
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
			MPI_Alltoall(sb, (int)size, MPI_BYTE, rb, (int)size, MPI_BYTE, MPI_COMM_WORLD);
			t += MPI_Wtime() - t0;
			for (int src = 0; src < n; src++)
				for (size_t i = 0; i < size; i++)
					if (rb[(size_t)src * size + i] != pat(src, rank, size, it, i)) {
						if (!wrong)
							fprintf(stderr,
								"FAIL: rank %d: %zu B from %d, iteration %d: "
								"byte %zu wrong\n",
								rank, size, src, it, i);
						wrong++;
						break;
					}
		}
		if (wrong)
			bad = 1;
		MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
		if (!rank) {
			double us = tmax / iters * 1e6;

			printf("a2a,%zu,%d,%.1f,%.1f\n", size, iters, us,
			       (double)size * (n - 1) * n / (us * 1e-6) / 1e6);
			fflush(stdout);
		}
		free(sb);
		free(rb);
	}
	MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (!rank) {
		if (allbad)
			printf("FAIL: wrong bytes received\n");
		else
			printf("ok:   all parts passed on %d ranks\n", n);
	}
	MPI_Finalize();
	return allbad ? 1 : 0;
}
