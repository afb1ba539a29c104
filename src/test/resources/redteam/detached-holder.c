/*
 * Run as root of an ordinary user's user and mount namespace (unshare -Urm): mounts a tmpfs at
 * DIR, creates COUNT files in it and keeps each open, then detaches the mount (umount -l), so no
 * mountinfo lists the mount of those fds. The files' inode numbers are the small ones every
 * fresh tmpfs hands out. With "deep", the files are in a directory whose path is nearly PATH_MAX
 * long, so each fd's link text is too, and the first 1,000 inode numbers are used up first (made
 * and removed), so the fds' numbers are not those of a fresh tmpfs's first files. Usage: detached-holder DIR COUNT [deep]. Prints "ready",
 * then waits to be killed.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/mount.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if ((argc != 3 && argc != 4) || mount("atk-detached", argv[1], "tmpfs", 0, "size=1m") != 0 || chdir(argv[1]) != 0) {
    perror("detached-holder");
    return 1;
  }
  long count = atol(argv[2]);
  struct rlimit nofile;
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
    nofile.rlim_cur = nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);
  }
  for (long i = 0; argc == 4 && i < 1000; i++) {
    char name[32];
    snprintf(name, sizeof name, "skip%ld", i);
    int fd = open(name, O_RDWR | O_CREAT, 0644);
    if (fd < 0 || close(fd) != 0 || unlink(name) != 0) {
      perror("skip");
      return 1;
    }
  }
  char part[241];
  memset(part, 'd', sizeof part - 1);
  part[sizeof part - 1] = 0;
  for (size_t len = strlen(argv[1]); argc == 4 && len + 2 * sizeof part < 3900; len += sizeof part) {
    if (mkdir(part, 0755) != 0 || chdir(part) != 0) {
      perror("mkdir");
      return 1;
    }
  }
  for (long i = 0; i < count; i++) {
    char name[32];
    snprintf(name, sizeof name, "f%ld", i);
    if (open(name, O_RDWR | O_CREAT, 0644) < 0) {
      perror("open");
      return 1;
    }
  }
  if (chdir("/") != 0 || umount2(argv[1], MNT_DETACH) != 0) {
    perror("umount2");
    return 1;
  }
  printf("ready\n");
  fflush(stdout);
  pause();
  return 0;
}
