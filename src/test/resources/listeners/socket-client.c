/*
 * A small Unix-socket client the listener tests run as an ordinary user (setpriv).
 *
 *   socket-client hold SOCKET N   opens N connections and sends nothing; prints "connected K";
 *                                 when standard input closes, prints one line per connection:
 *                                 the first line it was sent so far, or "open" (still open, nothing
 *                                 sent), or "closed" (closed with nothing sent); then exits.
 *   socket-client ask SOCKET LINE sends LINE and a newline, prints the whole reply.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int dial(const char *path) {
  struct sockaddr_un a;
  memset(&a, 0, sizeof a);
  a.sun_family = AF_UNIX;
  strncpy(a.sun_path, path, sizeof a.sun_path - 1);
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) {
    return -1;
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

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "hold") == 0) {
    return hold(argv[2], atoi(argv[3]));
  }
  if (argc == 4 && strcmp(argv[1], "ask") == 0) {
    return ask(argv[2], argv[3]);
  }
  fprintf(stderr, "usage: socket-client hold SOCKET N | ask SOCKET LINE\n");
  return 2;
}
