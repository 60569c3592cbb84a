// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * xw_mpi_alive.c - MPI ranks that do not call MPI for a long time: the job
 * must survive them (issue 23, "alive while computing").  Run by
 * tests/test_mpi_alive.sh (with a scaled-down FI_XDPWAKE_GIVE_UP_MS, so
 * that a few seconds of computing are many give-up times) and by
 * bench/mpi/alive.sh at full length.
 *
 * Parts run in the order given: xw_mpi_alive PART SECS [PART SECS]...
 *
 *   xw_mpi_alive base SECS
 *       every rank computes SECS with nothing pending (the compute rate
 *       alone, to compare the computing ranks' rates of the parts below).
 *   xw_mpi_alive idle SECS
 *       rank 0 sleeps SECS, the others wait in MPI_Recv, then in
 *       MPI_Barrier: their CPU time over the wait, as a share of a core.
 *   xw_mpi_alive late SECS
 *       the last rank computes (no MPI calls) for SECS, then every rank
 *       enters MPI_Barrier; then rank 0 computes SECS before an
 *       MPI_Allreduce the others are already waiting in.
 *   xw_mpi_alive post SECS
 *       every rank posts MPI_Isend and MPI_Irecv with its partner (rank ^
 *       1; eager 1 KiB and rendezvous 1 MiB messages), then the even ranks
 *       compute for SECS before MPI_Waitall; then the same with the odd
 *       ranks computing.  Every byte checked.
 *   xw_mpi_alive loop SECS
 *       ping-pong rounds between partners (8 B, 64 KiB, 1 MiB; every byte
 *       checked) for SECS of wall time; rank XW_ALIVE_RANK (default 1)
 *       writes its pid to $XW_ALIVE_PIDFILE first, so that the test can
 *       stop (SIGSTOP/SIGCONT) or kill it meanwhile.  A rank whose MPI
 *       call fails prints "ERROR: ..." with the time since its last
 *       successful round and exits 3 (the communicator returns errors).
 *
 * Rank 0 prints "ok:   ..." per part and "ok:   all parts passed on N
 * ranks"; a failed check prints "FAIL:" and aborts the job.  Built with
 * mpicc by the test (it needs Open MPI's compiler wrapper).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "xw_mpi.h"

#define MPI_OK(call)                                                                       \
	do {                                                                               \
		int rc_ = (call);                                                          \
		if (rc_ != MPI_SUCCESS) {                                                  \
			char s_[MPI_MAX_ERROR_STRING];                                     \
			int n_ = 0;                                                        \
			MPI_Error_string(rc_, s_, &n_);                                    \
			FAIL("%s: %s", #call, s_);                                         \
		}                                                                          \
	} while (0)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Compute for @secs without calling MPI (a busy loop the compiler keeps);
 * returns the rate in millions of loop iterations per second, the measure
 * of how much the computing rank is slowed by what runs for it meanwhile
 * (compare with part `base`). */
static double compute(double secs)
{
	double t0 = now_s(), end = t0 + secs, t;
	volatile uint64_t x = 1;
	uint64_t n = 0;

	while ((t = now_s()) < end) {
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		n += 100000;
	}
	return n / (t - t0) / 1e6;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

/* Rank 0 sleeps @secs, then sends to every rank, which waited in MPI_Recv;
 * then it sleeps @secs again before an MPI_Barrier the others wait in.
 * The waiting ranks' CPU time over their wait, as a share of one core:
 * what a blocked rank costs (issue 23: under 2 % with the provider's idle
 * sleep). */
static void part_idle(double secs)
{
	const char *what[2] = { "MPI_Recv", "MPI_Barrier" };

	for (int k = 0; k < 2; k++) {
		double t0, c0, share = 0, mx = 0, sum = 0, *all = NULL;
		char b = 1;

		MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
		t0 = now_s();
		c0 = cpu_s();
		if (rank == 0) {
			struct timespec ts = { (time_t)secs,
					       (long)((secs - (time_t)secs) * 1e9) };

			nanosleep(&ts, NULL);
			for (int r = 1; r < nranks && k == 0; r++)
				MPI_OK(MPI_Send(&b, 1, MPI_BYTE, r, 9, MPI_COMM_WORLD));
			if (k == 1)
				MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
		} else {
			if (k == 0)
				MPI_OK(MPI_Recv(&b, 1, MPI_BYTE, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			else
				MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
			share = (cpu_s() - c0) / (now_s() - t0);
		}
		if (rank == 0)
			all = calloc((size_t)nranks, sizeof(double));
		MPI_OK(MPI_Gather(&share, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
		if (rank == 0) {
			for (int r = 1; r < nranks; r++) {
				sum += all[r];
				mx = all[r] > mx ? all[r] : mx;
			}
			OK("idle: %d ranks blocked %.1f s in %s: CPU %.2f %% of a core each on "
			   "average, %.2f %% at most",
			   nranks - 1, secs, what[k], 100 * sum / (nranks - 1), 100 * mx);
			free(all);
		}
	}
}

/* Every rank computes @secs with nothing pending: the compute rate alone
 * (rank 0's printed). */
static void part_base(double secs)
{
	double r;

	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	r = compute(secs);
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	OK("base: %.1f s of computing with nothing pending: %.1f M iterations/s", secs, r);
}

static int verify(const unsigned char *b, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != pat(seed, i))
			return (int)i;
	return -1;
}

static void part_late(double secs)
{
	double t0 = now_s(), waited, r = 0;
	int one = 1, sum = 0;

	if (rank == nranks - 1)
		r = compute(secs);
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	waited = now_s() - t0;
	if (rank == 0 && waited < secs * 0.9)
		FAIL("late barrier: rank 0 left after %.1f s, the last rank computed %.1f s",
		     waited, secs);
	OK("late barrier: rank %d computed %.1f s without MPI calls; rank 0 waited %.1f s in "
	   "MPI_Barrier",
	   nranks - 1, secs, waited);
	t0 = now_s();
	if (rank == 0)
		r = compute(secs);
	MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	if (sum != nranks)
		FAIL("late allreduce: sum %d, want %d", sum, nranks);
	OK("late allreduce: rank 0 computed %.1f s (%.1f M iterations/s) while the others waited; "
	   "they waited %.1f s",
	   secs, r, now_s() - t0);
}

static void part_post(double secs)
{
	static const size_t sizes[2] = { 1024, 1 << 20 };
	int peer = rank ^ 1;

	if (peer >= nranks) /* an odd rank count: the last rank only computes */
		peer = -1;
	for (int who = 0; who < 2; who++) {
		unsigned char *sb[2], *rb[2];
		MPI_Request rq[4];
		double t0, r = 0;
		int n = 0;

		for (int k = 0; k < 2; k++) {
			sb[k] = malloc(sizes[k]);
			rb[k] = calloc(1, sizes[k]);
			if (!sb[k] || !rb[k])
				FAIL("malloc");
			fill(sb[k], sizes[k], (uint32_t)(rank * 10 + k + who * 100));
		}
		MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
		t0 = now_s();
		for (int k = 0; k < 2 && peer >= 0; k++) {
			MPI_OK(MPI_Irecv(rb[k], (int)sizes[k], MPI_BYTE, peer, 40 + k, MPI_COMM_WORLD,
					 &rq[n++]));
			MPI_OK(MPI_Isend(sb[k], (int)sizes[k], MPI_BYTE, peer, 40 + k, MPI_COMM_WORLD,
					 &rq[n++]));
		}
		if ((rank & 1) == who)
			r = compute(secs);
		MPI_OK(MPI_Waitall(n, rq, MPI_STATUSES_IGNORE));
		for (int k = 0; k < 2 && peer >= 0; k++) {
			int bad = verify(rb[k], sizes[k], (uint32_t)(peer * 10 + k + who * 100));

			if (bad >= 0)
				FAIL("post-compute-wait: %zu bytes from rank %d: byte %d differs",
				     sizes[k], peer, bad);
		}
		MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
		if (who == 0)
			OK("post-compute-wait: even ranks computed %.1f s (rank 0: %.1f M "
			   "iterations/s) between MPI_Isend/MPI_Irecv (1 KiB, 1 MiB) and "
			   "MPI_Waitall: done in %.1f s, every byte checked",
			   secs, r, now_s() - t0);
		else
			OK("post-compute-wait: odd ranks computed %.1f s between MPI_Isend/MPI_Irecv "
			   "(1 KiB, 1 MiB) and MPI_Waitall: done in %.1f s, every byte checked",
			   secs, now_s() - t0);
		for (int k = 0; k < 2; k++) {
			free(sb[k]);
			free(rb[k]);
		}
	}
}

/* One ping-pong round of @len bytes with @peer; 0 or the failing call's
 * error code. */
static int round_trip(int peer, unsigned char *sb, unsigned char *rb, int len, uint32_t seed)
{
	MPI_Status st;
	int rc, bad;

	fill(sb, (size_t)len, seed + (uint32_t)rank);
	if (rank < peer) {
		rc = MPI_Send(sb, len, MPI_BYTE, peer, 7, MPI_COMM_WORLD);
		if (rc == MPI_SUCCESS)
			rc = MPI_Recv(rb, len, MPI_BYTE, peer, 7, MPI_COMM_WORLD, &st);
	} else {
		rc = MPI_Recv(rb, len, MPI_BYTE, peer, 7, MPI_COMM_WORLD, &st);
		if (rc == MPI_SUCCESS)
			rc = MPI_Send(sb, len, MPI_BYTE, peer, 7, MPI_COMM_WORLD);
	}
	if (rc != MPI_SUCCESS)
		return rc;
	bad = verify(rb, (size_t)len, seed + (uint32_t)peer);
	if (bad >= 0)
		FAIL("loop: %d bytes from rank %d: byte %d differs", len, peer, bad);
	return MPI_SUCCESS;
}

static void part_loop(double secs)
{
	static const int sizes[3] = { 8, 64 << 10, 1 << 20 };
	const char *pidfile = getenv("XW_ALIVE_PIDFILE");
	const char *wr = getenv("XW_ALIVE_RANK");
	int peer = rank ^ 1, rounds = 0, go = 1;
	unsigned char *sb = malloc(1 << 20), *rb = malloc(1 << 20);
	double t0, last, worst = 0;

	if (!sb || !rb)
		FAIL("malloc");
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if (pidfile && rank == (wr ? atoi(wr) : 1)) {
		char tmp[512];
		FILE *f;

		snprintf(tmp, sizeof(tmp), "%s.tmp", pidfile);
		f = fopen(tmp, "w");
		if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) || rename(tmp, pidfile))
			FAIL("cannot write %s", pidfile);
	}
	if (peer >= nranks)
		peer = -1;
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	t0 = last = now_s();
	/* partners go on for as long as rank 0's clock says (a broadcast of
	 * "go on" every 10 rounds would stall on the stopped rank: the
	 * decision is each pair's lower rank's, sent with its message) */
	while (go && peer >= 0) {
		for (int k = 0; k < 3; k++) {
			int rc = round_trip(peer, sb, rb, sizes[k], (uint32_t)rounds * 3 + (uint32_t)k);
			double t = now_s();

			if (rc != MPI_SUCCESS) {
				char s[MPI_MAX_ERROR_STRING];
				int n = 0;

				MPI_Error_string(rc, s, &n);
				printf("ERROR: rank %d: round %d (%d B) with rank %d failed %.1f s after "
				       "the last good round: %s\n",
				       rank, rounds, sizes[k], peer, t - last, s);
				fflush(stdout);
				exit(3);
			}
			if (t - last > worst)
				worst = t - last;
			last = t;
		}
		rounds++;
		if (rank < peer) {
			go = now_s() - t0 < secs;
			MPI_OK(MPI_Send(&go, 1, MPI_INT, peer, 8, MPI_COMM_WORLD));
		} else {
			MPI_OK(MPI_Recv(&go, 1, MPI_INT, peer, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		}
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	OK("loop: %d ping-pong rounds (8 B, 64 KiB, 1 MiB) with rank 1 in %.1f s, every byte "
	   "checked; longest gap between rounds %.1f s",
	   rounds, now_s() - t0, worst);
	free(sb);
	free(rb);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (argc < 3 || argc % 2 == 0 || nranks < 2)
		FAIL("usage: xw_mpi_alive {base|idle|late|post|loop SECS}... (2 ranks or more)");
	for (int a = 1; a + 1 < argc; a += 2) {
		double secs = atof(argv[a + 1]);

		if (secs <= 0)
			FAIL("bad time %s", argv[a + 1]);
		if (!strcmp(argv[a], "base"))
			part_base(secs);
		else if (!strcmp(argv[a], "idle"))
			part_idle(secs);
		else if (!strcmp(argv[a], "late"))
			part_late(secs);
		else if (!strcmp(argv[a], "post"))
			part_post(secs);
		else if (!strcmp(argv[a], "loop"))
			part_loop(secs);
		else
			FAIL("unknown part %s", argv[a]);
	}
	OK("all parts passed on %d ranks", nranks);
	MPI_Finalize();
	return 0;
}
