/*
 * What one system call through a /proc/self/fd link costs: statx (following the link, as the
 * holder pass does for every fd) against readlinkat (what a scan would add to skip sockets and
 * pipes by their link text), for a pipe, a socket and a regular file, 200,000 calls each, in CPU
 * time. Not part of the harness; run by hand, under the shared lock on a shared machine:
 *
 *   gcc -O2 -o fdcost src/bench/c/fdcost.c && flock /work/bench.lock ./fdcost DIR
 *
 * DIR is where the regular file is made (and unlinked at once, so it stays open but nameless).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static long cpu_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1000000000L + t.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: fdcost DIR\n");
    return 2;
  }
  int p[2];
  if (pipe(p) != 0) return 1;
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  char path[4096];
  snprintf(path, sizeof path, "%s/fdcost-file", argv[1]);
  int f = open(path, O_CREAT | O_RDWR, 0600);
  if (s < 0 || f < 0) return 1;
  unlink(path);
  int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY);
  int fds[3] = {p[0], s, f};
  const char *kind[3] = {"pipe", "socket", "regular file"};
  struct statx st;
  char buf[4096];
  const int n = 200000;
  for (int k = 0; k < 3; k++) {
    char name[16];
    snprintf(name, sizeof name, "%d", fds[k]);
    for (int round = 0; round < 2; round++) { /* the first round warms caches; the second is printed */
      long t = cpu_ns();
      for (int i = 0; i < n; i++) statx(dir, name, 0, STATX_INO | STATX_SIZE, &st);
      long a = cpu_ns() - t;
      t = cpu_ns();
      for (int i = 0; i < n; i++) readlinkat(dir, name, buf, sizeof buf);
      long b = cpu_ns() - t;
      if (round == 1) printf("%-13s statx %.0f ns  readlinkat %.0f ns\n", kind[k], (double) a / n, (double) b / n);
    }
  }
  return 0;
}
