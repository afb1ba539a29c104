/*
 * The floor of a holder scan: what any scanner must read. One pass opens /proc, reads every
 * /proc/PID/maps once to its end and lists every /proc/PID/fd, and does nothing else (no stat,
 * no readlink, no parsing). It stays up and runs one pass per line read from stdin, so the bench
 * can time it warm, interleaved with the other scanners, without process start-up in the figure.
 *
 * A line "full DIR" asks instead for the kernel work of a whole shmguard scan that keeps the
 * holder rules of issue 11, parsing only the one number it must (fdinfo's mnt_id): per process, a
 * statx of /proc/PID/task (its link count is the thread count) and its maps; for every fd table it
 * reads, a readlink of each fd (a link not starting with '/' is a socket, pipe or anon inode:
 * done), for the others a read of /proc/PID/.../fdinfo/N (mount id and inode, where a stat would
 * ask the file's filesystem), and a statx through the fd link (AT_STATX_DONT_SYNC) only where
 * mnt_id is DIR's mount; for a process with more than one thread, a listing of /proc/PID/task and
 * a kcmp(KCMP_FILES) of each other thread with every fd table read so far, reading
 * /proc/PID/task/TID/fd the same way when its table is another; a readlink of every
 * /proc/PID/ns/mnt, a read of every /proc/PID/stat, an lstat (fstatat) of every entry of DIR, and
 * once per pass a read of /proc/self/mountinfo (mount ids to devices). It tells how much of
 * shmguard's time is the kernel's and how much its own.
 *
 * A line "fds DIR" asks for the kernel work of the exit pass's confirming read (issue 33): every
 * fd table as "full" reads it (the thread count, each distinct table, fdinfo where the link is a
 * path, the statx only on DIR's mount), the mount table once, and nothing else: no maps (the write
 * lease answers for mappings), no ns/mnt, no stat, no listing of DIR.
 *
 * A line "old DIR" asks for the kernel work of a whole scan as it was before issue 11: the floor,
 * plus a stat through every fd link (the leader's table only), the ns/mnt readlink, the stat read
 * and the lstat of every entry of DIR. "full" minus "old" is what issue 11's checks cost a pass.
 *
 * stdout, per pass: "NANOS CPU_NANOS PROCESSES MAPS_BYTES FD_ENTRIES TABLES FDINFOS" (wall and CPU
 * time of the pass; TABLES: fd tables of threads other than the leader read; FDINFOS: fdinfo files
 * read; both 0 but in "full")
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kcmp.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_TABLES 64

static char buf[1 << 16];

static long clock_ns(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/*
 * Reads a whole file relative to dirfd; the bytes read, or -1. Its first half of buf's size stays
 * in buf (all of an fdinfo text); the rest is read over the second half.
 */
static long slurp(int dirfd, const char *name) {
  int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  const long half = sizeof buf / 2;
  long total = 0;
  ssize_t n;
  while ((n = read(fd, buf + (total < half ? total : half), half)) > 0) total += n;
  close(fd);
  return total;
}

/* The value of the "mnt_id:" line of an fdinfo text in buf, or -1. */
static long mnt_id_of(long length) {
  buf[length < (long) sizeof buf ? length : (long) sizeof buf - 1] = 0;
  char *at = strstr(buf, "mnt_id:");
  return at == NULL ? -1 : strtol(at + 7, NULL, 10);
}

/* The mount id of DIR, from the fdinfo of an fd on it (the way a "full" pass learns an fd's mount). */
static long mount_id_of(const char *dir) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -1;
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
  long n = slurp(AT_FDCWD, path);
  close(fd);
  return n < 0 ? -1 : mnt_id_of(n);
}

struct counts {
  long procs, bytes, fds, tables, fdinfos;
};

/* The fd table of TASK ("PID" or "PID/task/TID") as a "full" pass reads it. */
static void checked_fd_table(int proc, const char *task, long watched, struct counts *c) {
  char path[300];
  char link[300];
  snprintf(path, sizeof path, "%s/fd", task);
  int dfd = openat(proc, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return;
  DIR *d = fdopendir(dfd);
  if (d == NULL) {
    close(dfd);
    return;
  }
  int info = -1;
  struct dirent *f;
  while ((f = readdir(d)) != NULL) {
    if (f->d_name[0] == '.') continue;
    c->fds++;
    ssize_t n = readlinkat(dfd, f->d_name, link, sizeof link);
    if (n > 0 && link[0] != '/') continue; /* socket:[..], pipe:[..], anon_inode:.. */
    if (info == -1) {
      snprintf(path, sizeof path, "%s/fdinfo", task);
      info = openat(proc, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (info < 0) info = -2; /* not readable (a scanner would stop here): the fds are still counted */
    }
    if (info < 0) continue;
    long len = slurp(info, f->d_name);
    if (len < 0) continue;
    c->fdinfos++;
    if (mnt_id_of(len) == watched) {
      struct statx stx;
      statx(dfd, f->d_name, AT_STATX_DONT_SYNC, STATX_INO | STATX_SIZE, &stx);
    }
  }
  if (info >= 0) close(info);
  closedir(d);
}

/* The other threads of a multi-threaded PID: each one's fd table unless kcmp says it was read. */
static void thread_fd_tables(int proc, const char *pid, struct counts *c, long watched) {
  char path[600];
  int tables[MAX_TABLES];
  int count = 0;
  int leader = atoi(pid);
  tables[count++] = leader;
  snprintf(path, sizeof path, "%s/task", pid);
  int tfd = openat(proc, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (tfd < 0) return;
  DIR *t = fdopendir(tfd);
  if (t == NULL) {
    close(tfd);
    return;
  }
  struct dirent *e;
  while ((e = readdir(t)) != NULL) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    int tid = atoi(e->d_name);
    if (tid == leader) continue;
    int shared = 0;
    for (int i = 0; i < count && !shared; i++) {
      shared = syscall(SYS_kcmp, tables[i], tid, KCMP_FILES, 0, 0) == 0;
    }
    if (shared) continue;
    snprintf(path, sizeof path, "%s/task/%s", pid, e->d_name);
    checked_fd_table(proc, path, watched, c);
    c->tables++;
    if (count < MAX_TABLES) tables[count++] = tid;
  }
  closedir(t);
}

static void lstat_all(const char *dir) {
  DIR *seg = opendir(dir);
  if (seg == NULL) return;
  struct dirent *f;
  struct stat st;
  while ((f = readdir(seg)) != NULL) {
    if (f->d_name[0] != '.') fstatat(dirfd(seg), f->d_name, &st, AT_SYMLINK_NOFOLLOW);
  }
  closedir(seg);
}

int main(void) {
  char line[400];
  char path[300];
  char link[300];
  while (fgets(line, sizeof line, stdin) != NULL) {
    line[strcspn(line, "\n")] = 0;
    int fds_only = strncmp(line, "fds ", 4) == 0; /* the exit pass's confirming read */
    int full = strncmp(line, "full ", 5) == 0 || fds_only;
    int old = strncmp(line, "old ", 4) == 0; /* the whole scan before issue 11 */
    const char *dir = line + (old || fds_only ? 4 : 5);
    long start = clock_ns(CLOCK_MONOTONIC);
    long cpu = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    struct counts c = {0, 0, 0, 0, 0};
    long watched = -2;
    if (full) {
      watched = mount_id_of(dir);
      slurp(AT_FDCWD, "/proc/self/mountinfo");
    }
    DIR *procs = opendir("/proc");
    if (procs == NULL) {
      perror("/proc");
      return 1;
    }
    struct dirent *e;
    while ((e = readdir(procs)) != NULL) {
      if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
      c.procs++;
      int threads = 1;
      if (full) {
        struct statx stx;
        snprintf(path, sizeof path, "%s/task", e->d_name);
        if (statx(dirfd(procs), path, 0, STATX_NLINK, &stx) == 0) threads = (int) stx.stx_nlink - 2;
      }
      if (fds_only) {
        checked_fd_table(dirfd(procs), e->d_name, watched, &c);
        if (threads > 1) thread_fd_tables(dirfd(procs), e->d_name, &c, watched);
        continue;
      }
      snprintf(path, sizeof path, "/proc/%s/maps", e->d_name);
      int fd = open(path, O_RDONLY);
      if (fd >= 0) {
        ssize_t n;
        while ((n = read(fd, buf, sizeof buf)) > 0) c.bytes += n;
        close(fd);
      }
      if (full) {
        checked_fd_table(dirfd(procs), e->d_name, watched, &c);
        if (threads > 1) thread_fd_tables(dirfd(procs), e->d_name, &c, watched);
      } else {
        snprintf(path, sizeof path, "/proc/%s/fd", e->d_name);
        DIR *d = opendir(path);
        if (d != NULL) {
          struct dirent *f;
          while ((f = readdir(d)) != NULL) {
            if (f->d_name[0] == '.') continue;
            c.fds++;
            struct stat st;
            if (old) fstatat(dirfd(d), f->d_name, &st, 0);
          }
          closedir(d);
        }
      }
      if (full || old) {
        snprintf(path, sizeof path, "/proc/%s/ns/mnt", e->d_name);
        if (readlink(path, link, sizeof link) < 0) link[0] = 0;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        fd = open(path, O_RDONLY);
        if (fd >= 0) {
          while (read(fd, buf, sizeof buf) > 0) {
          }
          close(fd);
        }
      }
    }
    closedir(procs);
    if ((full && !fds_only) || old) lstat_all(dir);
    printf("%ld %ld %ld %ld %ld %ld %ld\n", clock_ns(CLOCK_MONOTONIC) - start, clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu,
        c.procs, c.bytes, c.fds, c.tables, c.fdinfos);
    fflush(stdout);
  }
  return 0;
}
