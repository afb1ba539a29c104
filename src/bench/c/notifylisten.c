/*
 * Listens where a systemd service sends sd_notify messages (a Unix datagram socket, the path the
 * service finds in NOTIFY_SOCKET) and prints each message with the CLOCK_MONOTONIC time it
 * arrived, the clock Java's System.nanoTime reads, so the bench can time start to READY=1.
 *
 * usage: notifylisten SOCKET_PATH        stdout: "listening", then "NANOS MESSAGE" per datagram
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: notifylisten SOCKET_PATH\n");
    return 2;
  }
  int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un addr;
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  strncpy(addr.sun_path, argv[1], sizeof addr.sun_path - 1);
  unlink(argv[1]);
  if (s < 0 || bind(s, (struct sockaddr *) &addr, sizeof addr) != 0) {
    perror(argv[1]);
    return 1;
  }
  printf("listening\n");
  fflush(stdout);
  char msg[4096];
  for (;;) {
    ssize_t n = recv(s, msg, sizeof msg - 1, 0);
    if (n < 0) continue;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    msg[n] = 0;
    for (ssize_t i = 0; i < n; i++) {
      if (msg[i] == '\n') msg[i] = ' ';
    }
    printf("%ld %s\n", ts.tv_sec * 1000000000L + ts.tv_nsec, msg);
    fflush(stdout);
  }
}
