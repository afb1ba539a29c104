/*
 * mkfiles DIR PREFIX COUNT [FIRST [TARGET]]: creates COUNT empty files DIR/PREFIX<n> (n = FIRST ...)
 * in one process, O_CREAT|O_EXCL, as fast as the kernel allows: the tests' million-file mounts.
 * With TARGET (a file in DIR), each name is a hard link to it instead: many names, one inode.
 * rmfiles is not needed: the tests unmount the tmpfs.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: mkfiles DIR PREFIX COUNT [FIRST]\n");
    return 2;
  }
  int dir = open(argv[1], O_RDONLY | O_DIRECTORY);
  if (dir < 0) {
    perror(argv[1]);
    return 1;
  }
  long count = atol(argv[3]);
  long first = argc > 4 ? atol(argv[4]) : 0;
  const char *target = argc > 5 ? argv[5] : NULL;
  char name[256];
  for (long i = first; i < first + count; i++) {
    snprintf(name, sizeof name, "%s%07ld", argv[2], i);
    if (target != NULL) {
      if (linkat(dir, target, dir, name, 0) < 0) {
        perror(name);
        return 1;
      }
      continue;
    }
    int fd = openat(dir, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) {
      perror(name);
      return 1;
    }
    close(fd);
  }
  return 0;
}
