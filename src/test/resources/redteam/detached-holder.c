/*
 * Run as root of an ordinary user's user and mount namespace (unshare -Urm): mounts a tmpfs at
 * DIR, creates COUNT files in it and keeps each open, then detaches the mount (umount -l), so no
 * mountinfo lists the mount of those fds. The files' inode numbers are the small ones every
 * fresh tmpfs hands out. Usage: detached-holder DIR COUNT. Prints "ready", then waits to be killed.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 3 || mount("atk-detached", argv[1], "tmpfs", 0, "size=1m") != 0 || chdir(argv[1]) != 0) {
    perror("detached-holder");
    return 1;
  }
  long count = atol(argv[2]);
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
