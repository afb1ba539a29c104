/*
 * The floor of a holder scan: what any scanner must read. One pass opens /proc, reads every
 * /proc/PID/maps once to its end and lists every /proc/PID/fd, and does nothing else (no stat,
 * no readlink, no parsing). It stays up and runs one pass per line read from stdin, so the bench
 * can time it warm, interleaved with the other scanners, without process start-up in the figure.
 *
 * stdout, per pass: "NANOS CPU_NANOS PROCESSES MAPS_BYTES FD_ENTRIES" (wall and CPU time of the pass)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
  while (fgets(line, sizeof line, stdin) != NULL) {
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
        while ((f = readdir(d)) != NULL) {
          if (f->d_name[0] != '.') fds++;
        }
        closedir(d);
      }
    }
    closedir(proc);
    printf("%ld %ld %ld %ld %ld\n", clock_ns(CLOCK_MONOTONIC) - start, clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu,
        procs, bytes, fds);
    fflush(stdout);
  }
  return 0;
}
