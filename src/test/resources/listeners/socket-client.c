/*
 * A small Unix-socket client the listener tests run as an ordinary user (setpriv).
 *
 *   socket-client hold SOCKET N   opens N connections and sends nothing; prints "connected K";
 *                                 when standard input closes, prints one line per connection:
 *                                 the first line it was sent so far, or "open" (still open, nothing
 *                                 sent), or "closed" (closed with nothing sent); then exits.
 *   socket-client ask SOCKET LINE sends LINE and a newline, prints the whole reply.
 *   socket-client flood SOCKET CONNS SECONDS LINE
 *                                 on CONNS connections at a time (one thread each), asks LINE
 *                                 back to back for SECONDS, each reply read to its end; then
 *                                 prints "sent N", and per reply code "OK N", "ERR CODE N"
 *                                 ("ERR none N" for a connection that got no reply).
 *   socket-client rate SOCKET PER_SECOND SECONDS LINE...
 *                                 asks PER_SECOND requests a second for SECONDS, open loop
 *                                 (each is due at its own time, its latency counted from then),
 *                                 taking the LINEs in turn; prints "sent N", "ok N", and the
 *                                 latency in ms as "p50 X", "p99 X", "max X".
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

/* Connect, send and each read give up after this (0: never), for the flood and rate modes. */
static int io_timeout_s = 0;

static int dial(const char *path) {
  struct sockaddr_un a;
  memset(&a, 0, sizeof a);
  a.sun_family = AF_UNIX;
  strncpy(a.sun_path, path, sizeof a.sun_path - 1);
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) {
    return -1;
  }
  if (io_timeout_s > 0) {
    /* SO_SNDTIMEO also bounds a connect that waits for room in the server's queue */
    struct timeval tv = {io_timeout_s, 0};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

static void first_line(int fd) {
  char buf[512];
  struct pollfd p = {fd, POLLIN, 0};
  if (poll(&p, 1, 0) <= 0) {
    puts("open");
    return;
  }
  ssize_t n = read(fd, buf, sizeof buf - 1);
  if (n <= 0) {
    puts(n == 0 ? "closed" : "error");
    return;
  }
  buf[n] = 0;
  char *nl = strchr(buf, '\n');
  if (nl) {
    *nl = 0;
  }
  puts(buf);
}

static int hold(const char *path, int n) {
  int *fds = calloc(n, sizeof *fds);
  int k = 0;
  for (int i = 0; i < n; i++) {
    fds[i] = dial(path);
    if (fds[i] >= 0) {
      k++;
    }
  }
  printf("connected %d\n", k);
  fflush(stdout);
  char c;
  while (read(0, &c, 1) > 0) {
  }
  for (int i = 0; i < n; i++) {
    if (fds[i] >= 0) {
      first_line(fds[i]);
    } else {
      puts("failed");
    }
  }
  return 0;
}

static int ask(const char *path, const char *line) {
  int fd = dial(path);
  if (fd < 0) {
    perror("connect");
    return 1;
  }
  char req[1100];
  int len = snprintf(req, sizeof req, "%s\n", line);
  if (write(fd, req, len) != len) {
    perror("write");
    return 1;
  }
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) {
    fwrite(buf, 1, n, stdout);
  }
  return n < 0 ? 1 : 0;
}

#define CODES 16

struct flood {
  const char *path;
  const char *line;
  double end;
  long sent;
  char codes[CODES][32];
  long counts[CODES];
};

static pthread_mutex_t flood_lock = PTHREAD_MUTEX_INITIALIZER;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

/* "OK" or "ERR CODE" from the first line of a reply, "ERR none" for none. */
static void code_of(const char *reply, ssize_t len, char *code, size_t size) {
  if (len <= 0) {
    snprintf(code, size, "ERR none");
  } else if (strncmp(reply, "OK ", 3) == 0) {
    snprintf(code, size, "OK");
  } else if (strncmp(reply, "ERR v1 ", 7) == 0) {
    const char *c = reply + 7;
    size_t n = strcspn(c, " \n");
    snprintf(code, size, "ERR %.*s", (int)(n < 20 ? n : 20), c);
  } else {
    snprintf(code, size, "ERR unknown");
  }
}

static void count(struct flood *f, const char *code) {
  pthread_mutex_lock(&flood_lock);
  f->sent++;
  for (int i = 0; i < CODES; i++) {
    if (f->codes[i][0] == 0) {
      snprintf(f->codes[i], sizeof f->codes[i], "%s", code);
    }
    if (strcmp(f->codes[i], code) == 0) {
      f->counts[i]++;
      break;
    }
  }
  pthread_mutex_unlock(&flood_lock);
}

static void *flooder(void *arg) {
  struct flood *f = arg;
  char req[1100];
  int len = snprintf(req, sizeof req, "%s\n", f->line);
  char buf[8192];
  while (now_s() < f->end) {
    int fd = dial(f->path);
    if (fd < 0) {
      count(f, "ERR connect");
      continue;
    }
    ssize_t got = 0;
    if (write(fd, req, len) == len) {
      ssize_t n;
      while (got < (ssize_t)sizeof buf && (n = read(fd, buf + got, sizeof buf - got)) > 0) {
        got += n;
      }
      while ((n = read(fd, buf, sizeof buf)) > 0) {
        /* the rest of a long reply */
      }
    }
    close(fd);
    char code[32];
    code_of(buf, got, code, sizeof code);
    count(f, code);
  }
  return NULL;
}

static int flood(const char *path, int conns, double seconds, const char *line) {
  static struct flood f;
  signal(SIGPIPE, SIG_IGN); /* a refused connection may be closed before the request is written */
  f.path = path;
  f.line = line;
  f.end = now_s() + seconds;
  pthread_t *t = calloc(conns, sizeof *t);
  for (int i = 0; i < conns; i++) {
    pthread_create(&t[i], NULL, flooder, &f);
  }
  for (int i = 0; i < conns; i++) {
    pthread_join(t[i], NULL);
  }
  printf("sent %ld\n", f.sent);
  for (int i = 0; i < CODES && f.codes[i][0]; i++) {
    printf("%s %ld\n", f.codes[i], f.counts[i]);
  }
  return 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int rate(const char *path, double per_second, double seconds, char **lines, int nlines) {
  int total = (int)(per_second * seconds);
  double *lat = calloc(total > 0 ? total : 1, sizeof *lat);
  double start = now_s() + 0.05;
  int ok = 0;
  char buf[8192];
  for (int i = 0; i < total; i++) {
    double due = start + i / per_second;
    double wait = due - now_s();
    if (wait > 0) {
      struct timespec t = {(time_t)wait, (long)((wait - (time_t)wait) * 1e9)};
      nanosleep(&t, NULL);
    }
    char req[1100];
    int len = snprintf(req, sizeof req, "%s\n", lines[i % nlines]);
    ssize_t got = 0;
    int fd = dial(path);
    if (fd >= 0) {
      if (write(fd, req, len) == len) {
        ssize_t n;
        while (got < (ssize_t)sizeof buf && (n = read(fd, buf + got, sizeof buf - got)) > 0) {
          got += n;
        }
      }
      close(fd);
    }
    lat[i] = (now_s() - due) * 1000;
    if (got > 3 && strncmp(buf, "OK ", 3) == 0) {
      ok++;
    }
  }
  qsort(lat, total, sizeof *lat, cmp_double);
  printf("sent %d\nok %d\n", total, ok);
  if (total > 0) {
    printf("p50 %.3f\np99 %.3f\nmax %.3f\n", lat[total / 2], lat[(int)(total * 0.99)], lat[total - 1]);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 2 && (strcmp(argv[1], "rate") == 0 || strcmp(argv[1], "flood") == 0)) {
    io_timeout_s = 10; /* a server that stops answering must not hang a measurement */
  }
  if (argc >= 6 && strcmp(argv[1], "rate") == 0) {
    return rate(argv[2], atof(argv[3]), atof(argv[4]), argv + 5, argc - 5);
  }
  if (argc == 6 && strcmp(argv[1], "flood") == 0) {
    return flood(argv[2], atoi(argv[3]), atof(argv[4]), argv[5]);
  }
  if (argc == 4 && strcmp(argv[1], "hold") == 0) {
    return hold(argv[2], atoi(argv[3]));
  }
  if (argc == 4 && strcmp(argv[1], "ask") == 0) {
    return ask(argv[2], argv[3]);
  }
  fprintf(stderr, "usage: socket-client hold SOCKET N | ask SOCKET LINE | flood SOCKET CONNS SECONDS LINE | rate SOCKET PER_SECOND SECONDS LINE...\n");
  return 2;
}
