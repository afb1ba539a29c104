/*
 * The floor of a holder scan: what any scanner must read. One pass opens /proc, reads every
 * /proc/PID/maps once to its end and lists every /proc/PID/fd, and does nothing else (no stat,
 * no readlink, no parsing). It stays up and runs one pass per line read from stdin, so the bench
 * can time it warm, interleaved with the other scanners, without process start-up in the figure.
 *
 * A line "full DIR" asks instead for the kernel work of a whole shmguard scan, still without
 * parsing: the same, plus a readlink of every fd link and a read of /proc/PID/fdinfo/N for each
 * that is a path (the fd's mount and inode, where a stat would ask the file's filesystem), a
 * statx of every /proc/PID/task (its thread count) and, for a process with more threads, a
 * listing of its tasks and a kcmp(KCMP_FILES) of each with the main thread, a readlink of every
 * /proc/PID/ns/mnt, a read of every /proc/PID/stat, and an lstat (fstatat) of every entry of DIR.
 * It tells how much of shmguard's time is the kernel's and how much its own.
 *
 * stdout, per pass: "NANOS CPU_NANOS PROCESSES MAPS_BYTES FD_ENTRIES" (wall and CPU time of the pass)
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

static char buf[1 << 16];

static long clock_ns(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

int main(void) {
  char line[64];
  char path[300];
  char link[300];
  while (fgets(line, sizeof line, stdin) != NULL) {
    line[strcspn(line, "\n")] = 0;
    int full = strncmp(line, "full ", 5) == 0;
    long start = clock_ns(CLOCK_MONOTONIC);
    long cpu = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    long procs = 0, bytes = 0, fds = 0;
    DIR *proc = opendir("/proc");
    if (proc == NULL) {
      perror("/proc");
      return 1;
    }
    struct dirent *e;
    while ((e = readdir(proc)) != NULL) {
      if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
      procs++;
      snprintf(path, sizeof path, "/proc/%s/maps", e->d_name);
      int fd = open(path, O_RDONLY);
      if (fd >= 0) {
        ssize_t n;
        while ((n = read(fd, buf, sizeof buf)) > 0) bytes += n;
        close(fd);
      }
      snprintf(path, sizeof path, "/proc/%s/fd", e->d_name);
      DIR *d = opendir(path);
      if (d != NULL) {
        struct dirent *f;
        int info = full ? -1 : -2;
        while ((f = readdir(d)) != NULL) {
          if (f->d_name[0] == '.') continue;
          fds++;
          if (full && readlinkat(dirfd(d), f->d_name, link, sizeof link) > 0 && link[0] == '/') {
            if (info == -1) {
              snprintf(path, sizeof path, "/proc/%s/fdinfo", e->d_name);
              info = open(path, O_RDONLY | O_DIRECTORY);
            }
            int fi = info >= 0 ? openat(info, f->d_name, O_RDONLY) : -1;
            if (fi >= 0) {
              (void) read(fi, buf, sizeof buf);
              close(fi);
            }
          }
        }
        if (info >= 0) close(info);
        closedir(d);
      }
      if (full) {
        struct statx tx;
        snprintf(path, sizeof path, "/proc/%s/task", e->d_name);
        if (statx(AT_FDCWD, path, 0, STATX_NLINK, &tx) == 0 && tx.stx_nlink > 3) {
          DIR *t = opendir(path);
          struct dirent *task;
          while (t != NULL && (task = readdir(t)) != NULL) {
            if (task->d_name[0] != '.' && strcmp(task->d_name, e->d_name) != 0) {
              syscall(SYS_kcmp, atoi(e->d_name), atoi(task->d_name), KCMP_FILES, 0, 0);
            }
          }
          if (t != NULL) closedir(t);
        }
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
    closedir(proc);
    if (full) {
      DIR *seg = opendir(line + 5);
      if (seg != NULL) {
        struct dirent *f;
        struct stat st;
        while ((f = readdir(seg)) != NULL) {
          if (f->d_name[0] != '.') fstatat(dirfd(seg), f->d_name, &st, AT_SYMLINK_NOFOLLOW);
        }
        closedir(seg);
      }
    }
    printf("%ld %ld %ld %ld %ld\n", clock_ns(CLOCK_MONOTONIC) - start, clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu,
        procs, bytes, fds);
    fflush(stdout);
  }
  return 0;
}
