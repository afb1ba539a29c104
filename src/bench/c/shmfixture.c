/*
 * Benchmark fixture: creates segment files in a directory and forks holder processes that keep
 * some of them open or mapped, then sleeps until stdin closes; the bench kills single holders by
 * pid. Lighter than a JVM per holder, so hundreds fit on a small machine.
 *
 * usage: shmfixture DIR SEGMENTS PROCESSES HELD SIZE [FIRST [THREADED]]
 *   SEGMENTS files named nccl-XXXXXX (SIZE bytes each, allocated), numbered from FIRST (default
 *   0); the first HELD are held, segment j by holder j % PROCESSES, by fd, by mapping, or by
 *   mapping of a file then unlinked, as j % 3 is 0, 1 or 2. Every holder exists even if it holds nothing.
 *   THREADED (default 0, none): every THREADED-th holder (i % THREADED == 0) also starts three
 *   threads once its segments are open: two that share its fd table (clone with CLONE_FILES, as
 *   pthreads do) and one made without CLONE_FILES, whose fd table is its own copy of the holder's
 *   (the same fds, so the same segments held); /proc shows that copy only under
 *   /proc/PID/task/TID/fd. The threads only sleep. Every scanner still finds the same holders.
 * stdout: one line "holder PID NAME,NAME,..." per holder (the names of the segments it holds that
 *   stay linked), then "ready". The parent reaps holders that die; when stdin closes it kills the
 *   holders that remain and exits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void name_of(long j, char *out) {
  static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  /* NCCL's own shape, nccl-XXXXXX; odd multiplier not divisible by 31, so unique mod 62^6 */
  const unsigned long space = 56800235584UL; /* 62^6 */
  unsigned long v = ((unsigned long) j * 2654435761UL + 12345) % space;
  strcpy(out, "nccl-");
  for (int k = 0; k < 6; k++) {
    out[5 + k] = abc[v % 62];
    v /= 62;
  }
  out[11] = 0;
}

static pid_t *pids;
static long processes;

/* Reaps dead holders and forgets their pids, so that the final kill cannot reach a reused pid. */
static void reap_children(int sig) {
  (void) sig;
  int saved = errno;
  pid_t dead;
  while ((dead = waitpid(-1, NULL, WNOHANG)) > 0) {
    for (long i = 0; i < processes; i++) {
      if (pids[i] == dead) pids[i] = 0;
    }
  }
  errno = saved;
}

static void die(const char *what) {
  perror(what);
  exit(1);
}

/* A thread made by raw clone() has no TLS of its own: it makes raw system calls only. */
static int sleeper(void *unused) {
  (void) unused;
  for (;;) syscall(SYS_pause);
  return 0;
}

/* Starts a thread of this process that sleeps; with its own copy of the fd table unless share_files. */
static void start_thread(int share_files) {
  const size_t stack = 64 * 1024;
  char *s = mmap(NULL, stack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (s == MAP_FAILED) die("mmap stack");
  int flags = CLONE_VM | CLONE_FS | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM | (share_files ? CLONE_FILES : 0);
  if (clone(sleeper, s + stack, flags, NULL) < 0) die("clone");
}

int main(int argc, char **argv) {
  if (argc < 6 || argc > 8) {
    fprintf(stderr, "usage: shmfixture DIR SEGMENTS PROCESSES HELD SIZE [FIRST [THREADED]]\n");
    return 2;
  }
  const char *dir = argv[1];
  processes = atol(argv[3]);
  long segments = atol(argv[2]), held = atol(argv[4]), size = atol(argv[5]);
  long first = argc >= 7 ? atol(argv[6]) : 0;
  long threaded = argc == 8 ? atol(argv[7]) : 0;
  int dfd = open(dir, O_RDONLY | O_DIRECTORY);
  if (dfd < 0) die(dir);
  char name[64];
  for (long j = first; j < first + segments; j++) {
    name_of(j, name);
    int fd = openat(dfd, name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) die(name);
    if (size > 0 && posix_fallocate(fd, 0, size) != 0) die("fallocate");
    close(fd);
  }
  pids = calloc(processes, sizeof(pid_t));
  int ready[2];
  if (pipe(ready) != 0) die("pipe");
  for (long i = 0; i < processes; i++) {
    pid_t pid = fork();
    if (pid < 0) die("fork");
    if (pid == 0) {
      close(ready[0]);
      for (long j = i; j < held; j += processes) {
        name_of(j, name);
        int fd = openat(dfd, name, O_RDWR);
        if (fd < 0) die(name);
        int mode = (int) (j % 3);
        if (mode != 0) {
          void *p = mmap(NULL, size > 0 ? size : 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
          if (p == MAP_FAILED) die("mmap");
          close(fd);
          if (mode == 2 && unlinkat(dfd, name, 0) != 0) die("unlink");
        }
      }
      close(dfd);
      if (threaded > 0 && i % threaded == 0) {
        start_thread(1);
        start_thread(1);
        start_thread(0);
      }
      if (write(ready[1], "r", 1) != 1) _exit(1);
      close(ready[1]);
      close(0);
      for (;;) pause();
    }
    pids[i] = pid;
  }
  close(ready[1]);
  close(dfd); /* the mount's directory open here would count as one more user of the mount in lsof */
  char c;
  for (long i = 0; i < processes; i++) {
    if (read(ready[0], &c, 1) != 1) die("holder failed");
  }
  close(ready[0]);
  for (long i = 0; i < processes; i++) {
    printf("holder %d ", (int) pids[i]);
    int lead = 1;
    for (long j = i; j < held; j += processes) {
      if (j % 3 != 2) {
        name_of(j, name);
        printf(lead ? "%s" : ",%s", name);
        lead = 0;
      }
    }
    printf("\n");
  }
  printf("ready\n");
  fflush(stdout);
  /* Wait for stdin to close, reaping at once the holders the bench kills meanwhile. */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = reap_children;
  sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  sigaction(SIGCHLD, &sa, NULL);
  reap_children(0);
  char buf[64];
  while (read(0, buf, sizeof buf) > 0) {
  }
  signal(SIGCHLD, SIG_DFL);
  for (long i = 0; i < processes; i++) {
    if (pids[i] > 0) kill(pids[i], SIGKILL);
  }
  while (wait(NULL) > 0) {
  }
  return 0;
}
