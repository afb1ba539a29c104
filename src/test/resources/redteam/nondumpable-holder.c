/*
 * A holder that hides what it can of itself from /proc: prctl(PR_SET_DUMPABLE, 0) makes its
 * /proc/PID/fd, fdinfo and maps root's, readable only with CAP_SYS_PTRACE. Keeps FILE open (fd)
 * or mapped with its fd closed (map). Usage: nondumpable-holder fd|map FILE. Prints "ready".
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: nondumpable-holder fd|map FILE\n");
    return 2;
  }
  int fd = open(argv[2], O_RDWR);
  if (fd < 0) {
    perror("open");
    return 1;
  }
  if (strcmp(argv[1], "map") == 0) {
    if (mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED) {
      perror("mmap");
      return 1;
    }
    close(fd);
  }
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
    perror("prctl");
    return 1;
  }
  printf("ready\n");
  fflush(stdout);
  pause();
  return 0;
}
