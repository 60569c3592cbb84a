// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Endpoint ids on this host: the claim of an id by the process that opens
 * it (an exclusive flock on a lock file beside the id's local inbox, held
 * while the endpoint lives and released by the kernel when the process
 * dies), the claim of an interface queue by a process's port (the same,
 * on a lock file per queue), and the removal of what endpoints of dead
 * processes left in /dev/shm: their inboxes (local.c), lock files and
 * half-created inboxes (the queue lock files on demand only).
 * A lock file nobody holds is the proof: its endpoint is closed or dead.
 * The remover takes the claim itself while it removes the files, so an
 * endpoint being opened meanwhile waits for it (xwi_local_claim) and
 * creates its files afterwards.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "internal.h"
#include "local.h"

/* XWI_LOCAL_DIR "/xdpwake-<netns>-<ifindex>-<kind><n><suffix>" of this
 * network namespace. */
static int shm_path(char *buf, size_t len, int ifindex, const char *kind, unsigned int n,
		    const char *suffix)
{
	struct stat st;

	if (stat("/proc/self/ns/net", &st))
		return -errno;
	if ((size_t)snprintf(buf, len, XWI_LOCAL_DIR "/xdpwake-%llu-%d-%s%u%s",
			     (unsigned long long)st.st_ino, ifindex, kind, n, suffix) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int xwi_local_path(char *buf, size_t len, int ifindex, __u16 id)
{
	return shm_path(buf, len, ifindex, "", id, "");
}

/* Exclusive flock on the lock file @path (created if missing), the file
 * still at that name; looks again for @rounds x 50 us while another
 * process holds it.  The fd, -EBUSY or -errno. */
static int lock_take(const char *path, int rounds)
{
	struct stat a, b;
	int err, fd;

	/* Bounded: a retry only follows a close-and-unlink by the previous
	 * owner between our open and our lock. */
	for (int i = 0; i < 16; i++) {
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0)
			return -errno;
		for (int t = 0; flock(fd, LOCK_EX | LOCK_NB); t++) {
			if (errno != EWOULDBLOCK || t == rounds) {
				err = errno == EWOULDBLOCK ? -EBUSY : -errno;
				close(fd);
				return err;
			}
			usleep(50);
		}
		/* Locked; still the file at that name (the previous owner
		 * unlinks it at close)? */
		if (!fstat(fd, &a) && !stat(path, &b) && a.st_ino == b.st_ino && a.st_dev == b.st_dev)
			return fd;
		close(fd);
	}
	return -EBUSY;
}

/* Whether a process holds the lock file @path (no file: nobody). */
static bool lock_held(const char *path)
{
	bool held;
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return false;
	held = flock(fd, LOCK_SH | LOCK_NB) && errno == EWOULDBLOCK;
	close(fd); /* (our shared lock, if we got it, goes with it) */
	return held;
}

int xwi_local_claim(int ifindex, __u16 id)
{
	char path[PATH_MAX];
	int err;

	err = xwi_local_path(path, sizeof(path) - 8, ifindex, id);
	if (err)
		return err;
	strcat(path, ".lock");
	/* A holder keeps it for as long as its endpoint lives; a process
	 * probing it (xwi_local_claimed, the clean-up) for microseconds:
	 * look again for a millisecond before calling it busy. */
	return lock_take(path, 20);
}

bool xwi_local_claimed(int ifindex, __u16 id)
{
	char path[PATH_MAX];

	if (xwi_local_path(path, sizeof(path) - 8, ifindex, id))
		return false;
	strcat(path, ".lock");
	return lock_held(path);
}

void xwi_local_unclaim(int fd, int ifindex, __u16 id)
{
	char path[PATH_MAX];

	if (fd < 0)
		return;
	/* Unlinked while still locked: an opener that got the old file
	 * finds it is no longer at the name and retries (xwi_local_claim). */
	if (!xwi_local_path(path, sizeof(path) - 8, ifindex, id)) {
		strcat(path, ".lock");
		unlink(path);
	}
	close(fd);
}

static int queue_lock_path(char *buf, size_t len, int ifindex, __u32 queue)
{
	return shm_path(buf, len, ifindex, "q", queue, ".lock");
}

int xwi_queue_claim(int ifindex, __u32 queue)
{
	char path[PATH_MAX];
	int err = queue_lock_path(path, sizeof(path), ifindex, queue);

	/* A holder keeps it while its port lives; the clean-up of `xdpwake
	 * status --clean` probes it for microseconds: look again 4 times. */
	return err ? err : lock_take(path, 4);
}

void xwi_queue_unclaim(int fd, int ifindex, __u32 queue)
{
	char path[PATH_MAX];

	if (fd < 0)
		return;
	if (!queue_lock_path(path, sizeof(path), ifindex, queue))
		unlink(path); /* still locked: as xwi_local_unclaim */
	close(fd);
}

/* ---- leftovers of dead endpoints ----------------------------------------- */

/* A file of the local path: "xdpwake-<netns>-<ifindex>-<id>" (the inbox),
 * + ".lock" (the claim), + ".<pid>.tmp" (an inbox being created). */
struct leftover {
	unsigned long long ns;
	int ifindex;
	unsigned int id;
	char name[NAME_MAX + 1];
};

static bool parse_name(const char *name, struct leftover *f)
{
	unsigned int pid;
	int n = 0, m = 0;

	if (sscanf(name, "xdpwake-%llu-%d-%u%n", &f->ns, &f->ifindex, &f->id, &n) != 3 || !n ||
	    f->id >= XW_MAX_ENDPOINTS)
		return false;
	name += n;
	if (*name && strcmp(name, ".lock") &&
	    !(sscanf(name, ".%u.tmp%n", &pid, &m) == 1 && m && !name[m]))
		return false;
	return true;
}

static int by_endpoint(const void *pa, const void *pb)
{
	const struct leftover *a = pa, *b = pb;

	if (a->ns != b->ns)
		return a->ns < b->ns ? -1 : 1;
	if (a->ifindex != b->ifindex)
		return a->ifindex < b->ifindex ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* The files of one endpoint id, @n of them from @f: all removed if nobody
 * holds its claim (we take it meanwhile), the lock file last.  Files
 * removed, or 0. */
static int clean_one(const struct leftover *f, int n, void (*removed)(const char *, void *),
		     void *ctx)
{
	char lock[PATH_MAX], path[PATH_MAX];
	int fd, done = 0;
	bool had_lock;

	snprintf(lock, sizeof(lock), XWI_LOCAL_DIR "/xdpwake-%llu-%d-%u.lock", f->ns,
		 f->ifindex, f->id);
	if (lock_held(lock))
		return 0;
	had_lock = !access(lock, F_OK);
	fd = lock_take(lock, 0);
	if (fd < 0)
		return 0; /* taken meanwhile: live */
	for (int i = 0; i < n; i++) {
		struct xwi_local_hdr *h;
		struct stat st;
		int ifd;

		snprintf(path, sizeof(path), XWI_LOCAL_DIR "/%s", f[i].name);
		if (strstr(f[i].name, ".lock"))
			continue;
		/* An inbox peers may still map: closed first, so that they
		 * stop writing to it (local.c, dst_get). */
		ifd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
		if (ifd >= 0 && !fstat(ifd, &st) && S_ISREG(st.st_mode) &&
		    (size_t)st.st_size >= sizeof(*h)) {
			h = mmap(NULL, sizeof(*h), PROT_READ | PROT_WRITE, MAP_SHARED, ifd, 0);
			if (h != MAP_FAILED) {
				if (h->magic == XWI_LOCAL_MAGIC)
					__atomic_store_n(&h->closed, 1, __ATOMIC_SEQ_CST);
				munmap(h, sizeof(*h));
			}
		}
		if (ifd >= 0)
			close(ifd);
		if (!unlink(path)) {
			done++;
			if (removed)
				removed(path, ctx);
		}
	}
	/* The lock last, still held: an opener waiting for it retries on a
	 * new file (lock_take).  One we made only to hold is not counted. */
	if (!unlink(lock) && had_lock) {
		done++;
		if (removed)
			removed(lock, ctx);
	}
	close(fd);
	return done;
}

/* A queue lock file @name nobody holds: removed (taken meanwhile).  1 or 0. */
static int clean_queue_lock(const char *name, void (*removed)(const char *, void *), void *ctx)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), XWI_LOCAL_DIR "/%s", name);
	fd = lock_take(path, 0);
	if (fd < 0)
		return 0; /* held: a live port's */
	if (unlink(path)) {
		close(fd);
		return 0;
	}
	close(fd);
	if (removed)
		removed(path, ctx);
	return 1;
}

int xwi_local_clean(int ifindex, bool queues, void (*removed)(const char *path, void *ctx),
		    void *ctx)
{
	struct leftover *f = NULL, *nf;
	unsigned long long ns = 0;
	size_t n = 0;
	struct dirent *de;
	struct stat st;
	int total = 0;
	DIR *d;

	if (ifindex) {
		if (stat("/proc/self/ns/net", &st))
			return -errno;
		ns = (unsigned long long)st.st_ino;
	}
	d = opendir(XWI_LOCAL_DIR);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		struct leftover x;
		unsigned int q;
		int m = 0;

		if (queues &&
		    sscanf(de->d_name, "xdpwake-%llu-%d-q%u.lock%n", &x.ns, &x.ifindex, &q, &m) == 3 &&
		    m && !de->d_name[m] && (!ifindex || (x.ns == ns && x.ifindex == ifindex))) {
			total += clean_queue_lock(de->d_name, removed, ctx);
			continue;
		}
		if (!parse_name(de->d_name, &x) || (ifindex && (x.ns != ns || x.ifindex != ifindex)))
			continue;
		nf = n % 64 ? f : realloc(f, (n + 64) * sizeof(*f)); /* 64 more */
		if (!nf) {
			total = -ENOMEM;
			goto out;
		}
		f = nf;
		snprintf(x.name, sizeof(x.name), "%s", de->d_name);
		f[n++] = x;
	}
	if (n)
		qsort(f, n, sizeof(*f), by_endpoint);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && !by_endpoint(&f[i], &f[j]); j++)
			;
		total += clean_one(&f[i], (int)(j - i), removed, ctx);
	}
out:
	closedir(d);
	free(f);
	return total;
}

XW_API int xw_leftovers_clean(const char *ifname, void (*removed)(const char *path, void *ctx),
			      void *ctx)
{
	int ifindex = 0;

	if (ifname) {
		ifindex = (int)if_nametoindex(ifname);
		if (!ifindex)
			return -ENODEV;
	}
	return xwi_local_clean(ifindex, true, removed, ctx);
}
