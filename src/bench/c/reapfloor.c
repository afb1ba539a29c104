/*
 * The floor of a reap: the least kernel work that removes N leaked files, two ways, timed inside
 * the process so that neither process start-up nor the bench's pipe is in the figure. It stays up
 * and answers one command per line of stdin; the files live in DIR (a tmpfs of the bench's own).
 *
 *   make N           creates N files nccl-XXXXXX (4 KiB allocated each, closed): answers "made N"
 *   unlink           unlinkat of each file the last make created: the plain floor, no check at all
 *   lease BATCH US   the lease dance of each file, BATCH files at a time: for each, open (read-only,
 *                    no link followed, not blocking), F_SETLEASE F_WRLCK, renameat2 to a hidden
 *                    name (RENAME_NOREPLACE); then one sleep of US microseconds for the batch (0: none);
 *                    then for each, F_GETLEASE, unlinkat of the hidden name, close (which releases
 *                    the lease)
 * stdout for unlink and lease: "NANOS CPU_NANOS DONE" (wall and CPU time of the whole command;
 * DONE: files unlinked). A step that fails leaves the file counted as not done.
 *
 * usage: reapfloor DIR
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_FILES 1000000
#define NAME 32

static char (*names)[NAME];
static char (*hidden)[NAME];
static int *fds;
static long made;
static unsigned long serial;

static long clock_ns(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* NCCL's shape, nccl-XXXXXX, from a serial number unique in this run. */
static void name_of(unsigned long v, char *out) {
  static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  strcpy(out, "nccl-");
  for (int k = 0; k < 6; k++) {
    out[5 + k] = abc[v % 62];
    v /= 62;
  }
  out[11] = 0;
}

static long make(int dfd, long n) {
  if (n > MAX_FILES) n = MAX_FILES;
  made = 0;
  for (long i = 0; i < n; i++) {
    name_of(serial++, names[made]);
    int fd = openat(dfd, names[made], O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
      perror(names[made]);
      continue;
    }
    if (posix_fallocate(fd, 0, 4096) != 0) perror("fallocate");
    close(fd);
    made++;
  }
  return made;
}

static long plain(int dfd) {
  long done = 0;
  for (long i = 0; i < made; i++) done += unlinkat(dfd, names[i], 0) == 0;
  return done;
}

static long leased(int dfd, long batch, long settle_us) {
  long done = 0;
  for (long from = 0; from < made; from += batch) {
    long to = from + batch < made ? from + batch : made;
    for (long i = from; i < to; i++) {
      fds[i] = openat(dfd, names[i], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      hidden[i][0] = 0;
      if (fds[i] < 0) continue;
      if (fcntl(fds[i], F_SETLEASE, F_WRLCK) != 0) continue;
      snprintf(hidden[i], NAME, ".shmguard-reap-%016lx", serial++);
      if (renameat2(dfd, names[i], dfd, hidden[i], RENAME_NOREPLACE) != 0) hidden[i][0] = 0;
    }
    if (settle_us > 0) usleep((useconds_t) settle_us);
    for (long i = from; i < to; i++) {
      if (fds[i] < 0) continue;
      if (hidden[i][0] != 0 && fcntl(fds[i], F_GETLEASE) == F_WRLCK) done += unlinkat(dfd, hidden[i], 0) == 0;
      close(fds[i]);
    }
  }
  return done;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: reapfloor DIR\n");
    return 2;
  }
  int dfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) {
    perror(argv[1]);
    return 1;
  }
  names = calloc(MAX_FILES, NAME);
  hidden = calloc(MAX_FILES, NAME);
  fds = calloc(MAX_FILES, sizeof(int));
  if (names == NULL || hidden == NULL || fds == NULL) {
    perror("calloc");
    return 1;
  }
  char line[128];
  while (fgets(line, sizeof line, stdin) != NULL) {
    long a = 0, b = 0;
    if (sscanf(line, "make %ld", &a) == 1) {
      printf("made %ld\n", make(dfd, a));
    } else {
      long start = clock_ns(CLOCK_MONOTONIC);
      long cpu = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
      long done = sscanf(line, "lease %ld %ld", &a, &b) == 2 ? leased(dfd, a > 0 ? a : 1, b) : plain(dfd);
      printf("%ld %ld %ld\n", clock_ns(CLOCK_MONOTONIC) - start, clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu, done);
      made = 0;
    }
    fflush(stdout);
  }
  return 0;
}
