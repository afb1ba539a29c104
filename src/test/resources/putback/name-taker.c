/*
 * An ordinary user's name taker: in a tight loop, tries to create NAME in DIR exclusively
 * (O_CREAT|O_EXCL, as a user races a put-back for a name it does not own) and, on each success,
 * writes CONTENT into its new file and prints "took INODE". With "open" as the mode it instead
 * watches DIR with inotify and opens every name shmguard moves a file to (.shmguard-reap-*), as a
 * user who may read the file does to break shmguard's lease and force the put-back. Runs until
 * killed.
 *
 *   name-taker take|open DIR NAME CONTENT
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: name-taker take|open DIR NAME CONTENT\n");
    return 2;
  }
  int dir = open(argv[2], O_RDONLY | O_DIRECTORY);
  if (dir < 0) {
    perror(argv[2]);
    return 1;
  }
  int take = strcmp(argv[1], "take") == 0;
  int watch = -1;
  if (!take) {
    watch = inotify_init1(0);
    if (watch < 0 || inotify_add_watch(watch, argv[2], IN_MOVED_TO) < 0) {
      perror("inotify");
      return 1;
    }
  }
  printf("ready\n");
  fflush(stdout);
  for (;;) {
    if (take) {
      int fd = openat(dir, argv[3], O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW, 0644);
      if (fd >= 0) {
        struct stat st;
        if (write(fd, argv[4], strlen(argv[4])) < 0 || fstat(fd, &st) < 0) {
          perror("write");
        }
        close(fd);
        printf("took %lu\n", (unsigned long) st.st_ino);
        fflush(stdout);
      }
    } else {
      char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
      ssize_t n = read(watch, buf, sizeof buf);
      for (char *p = buf; n > 0 && p < buf + n;) {
        struct inotify_event *ev = (struct inotify_event *) p;
        if (ev->len > 0 && strncmp(ev->name, ".shmguard-reap-", 15) == 0) {
          /* Not blocking: the open starts the lease break and returns at once. */
          int fd = openat(dir, ev->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
          if (fd >= 0) {
            close(fd);
          }
        }
        p += sizeof *ev + ev->len;
      }
    }
  }
}
