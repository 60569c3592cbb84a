/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * xw_mpi.h - what the project's MPI programs (xw_mpi_test.c,
 * xw_mpi_alive.c) share: this rank and the size, FAIL (print, abort the
 * job) and OK (rank 0 prints "ok:   ..."), the payload pattern.  A header
 * of static definitions: each program is one file, built with mpicc.
 */
#ifndef XW_MPI_H
#define XW_MPI_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, nranks;

#define FAIL(...)                                                                          \
	do {                                                                               \
		fprintf(stderr, "FAIL: rank %d: ", rank);                                  \
		fprintf(stderr, __VA_ARGS__);                                              \
		fprintf(stderr, "\n");                                                     \
		fflush(stderr);                                                            \
		MPI_Abort(MPI_COMM_WORLD, 1);                                              \
	} while (0)

#define OK(...)                                                                            \
	do {                                                                               \
		if (rank == 0) {                                                           \
			printf("ok:   ");                                                  \
			printf(__VA_ARGS__);                                               \
			printf("\n");                                                      \
			fflush(stdout);                                                    \
		}                                                                          \
	} while (0)

static unsigned char pat(uint32_t seed, size_t i)
{
	uint32_t x = seed * 2654435761u + (uint32_t)i * 40503u + (uint32_t)(i >> 12);

	return (unsigned char)(x ^ (x >> 13));
}

static void fill(unsigned char *b, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = pat(seed, i);
}

#endif
