/*
 * Run as root of an ordinary user's user and mount namespace (unshare -Urm): mounts a tmpfs at
 * DIR, makes a path in it nearly PATH_MAX long, and binds that directory onto itself COUNT times,
 * so that the namespace's /proc/PID/mountinfo has COUNT lines of about 8 KiB each. With HOLD, it
 * also keeps a file of that tmpfs open, so that a holder pass has to place an fd on it.
 * Usage: many-mounts DIR COUNT [short]. With "short", the path stays DIR (lines of about 100
 * bytes, for as many mounts as the namespace takes). Prints "ready N" (N binds made), then waits.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 3 && argc != 4) {
    fprintf(stderr, "usage: many-mounts DIR COUNT [short]\n");
    return 2;
  }
  long count = atol(argv[2]);
  if (mount("atk-many", argv[1], "tmpfs", 0, "size=1m") != 0) {
    perror("mount");
    return 1;
  }
  static char path[4096];
  snprintf(path, sizeof path, "%s", argv[1]);
  char part[241];
  memset(part, 'n', sizeof part - 1);
  part[sizeof part - 1] = 0;
  while (argc == 3 && strlen(path) + 2 * sizeof part < 3900) {
    strcat(path, "/");
    strcat(path, part);
    if (mkdir(path, 0755) != 0) {
      perror("mkdir");
      return 1;
    }
  }
  char file[4200];
  snprintf(file, sizeof file, "%s/held", path);
  int fd = open(file, O_RDWR | O_CREAT, 0644);
  if (fd < 0) {
    perror("open");
    return 1;
  }
  long made = 0;
  for (; made < count; made++) {
    if (mount(path, path, NULL, MS_BIND, NULL) != 0) {
      break;
    }
  }
  printf("ready %ld\n", made);
  fflush(stdout);
  pause();
  return 0;
}
