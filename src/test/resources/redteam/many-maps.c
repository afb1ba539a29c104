/*
 * An ordinary user's process that makes its /proc/PID/maps as large as the kernel lets it: COUNT
 * one-page shared mappings of one file whose path is nearly PATH_MAX long, each its own line.
 * Usage: many-maps DIR COUNT. Prints "ready N" (N mappings made), then waits to be killed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 3 || chdir(argv[1]) != 0) {
    fprintf(stderr, "usage: many-maps DIR COUNT\n");
    return 2;
  }
  long count = atol(argv[2]);
  char part[241];
  memset(part, 'm', sizeof part - 1);
  part[sizeof part - 1] = 0;
  size_t len = strlen(argv[1]);
  /* Deepen until the path is within a part of PATH_MAX (4096). */
  while (len + 2 * sizeof part < 4000) {
    if ((mkdir(part, 0755) != 0 && errno != EEXIST) || chdir(part) != 0) {
      perror("mkdir");
      return 1;
    }
    len += sizeof part;
  }
  int fd = open("f", O_RDWR | O_CREAT, 0644);
  if (fd < 0 || ftruncate(fd, 4096) != 0) {
    perror("open");
    return 1;
  }
  long made = 0;
  for (; made < count; made++) {
    /* Offset 0 each time: neighbouring mappings never merge into one line. */
    if (mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED) {
      break;
    }
  }
  printf("ready %ld\n", made);
  fflush(stdout);
  pause();
  return 0;
}
