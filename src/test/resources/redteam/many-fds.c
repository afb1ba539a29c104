/*
 * An ordinary user's process with as many fds as its limit allows, every one a dup of /dev/null:
 * cheap for the kernel (one open file, shared), one fdinfo read each for a /proc pass.
 * Usage: many-fds COUNT. Prints "ready N" (N fds open), then waits to be killed.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

int main(int argc, char **argv) {
  long count = argc == 2 ? atol(argv[1]) : 0;
  struct rlimit nofile;
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
    nofile.rlim_cur = nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);
  }
  int fd = open("/dev/null", O_RDONLY);
  long made = fd >= 0 ? 1 : 0;
  while (made < count && dup(fd) >= 0) {
    made++;
  }
  printf("ready %ld\n", made);
  fflush(stdout);
  pause();
  return 0;
}
