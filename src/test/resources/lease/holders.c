/*
 * Holders no /proc walk can see, and racers that open by name, for LeaseReapTest. Built at test
 * time with cc. Each mode prints "ready" once its state is set up, then follows lines on stdin.
 *
 *   scm PATH      a child opens PATH read-write, sends the fd over a socketpair to this process
 *                 with SCM_RIGHTS and exits; the fd sits unreceived in the socket. On the line
 *                 "recv": recvmsg, then print "nlink N" of the received fd.
 *   handoff PATH  the same, but the child holds PATH open (it is the only holder /proc shows)
 *                 until the line "send": then it sends the fd, closes it and exits, and this
 *                 process prints "sent" once the child is gone. "recv" as for scm.
 *   bind PATH TARGET  in a mount namespace of its own (as a container has), bind-mounts the file
 *                 PATH onto the file TARGET and opens nothing. On "nlink": print "nlink N" of
 *                 TARGET as this namespace sees it (stat, so it follows the mount).
 *   uring PATH    opens PATH, registers it in an io_uring (IORING_REGISTER_FILES, raw syscalls),
 *                 closes the fd. On "unregister": IORING_UNREGISTER_FILES, print "unregistered".
 *                 Prints "unavailable REASON" instead of "ready" where io_uring is turned off.
 *   racer MS PATH...  for MS milliseconds, opens each PATH by name (O_RDWR) in turn; for every fd
 *                 it got, fstat's it; prints "opened N unlinked M" (M: fds whose nlink was 0).
 * Every mode exits when stdin closes (racer: when its time is up).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what) {
  fprintf(stderr, "holders: %s: %s\n", what, strerror(errno));
  exit(2);
}

static int read_line(char *buf, size_t n) {
  if (!fgets(buf, (int) n, stdin)) {
    return 0;
  }
  buf[strcspn(buf, "\n")] = 0;
  return 1;
}

static void ready(void) {
  printf("ready\n");
  fflush(stdout);
}

/* Waits for the sending child; false (and says why) unless it sent and exited cleanly. */
static int sender_done(pid_t child) {
  int status;
  if (waitpid(child, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "holders: the sender failed\n");
    return 0;
  }
  return 1;
}

/* later: the child holds the fd until a byte arrives on go[0], and says so with a byte on opened[1]. */
static int scm(const char *path, int later) {
  int sv[2], go[2], opened[2];
  if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) < 0) die("socketpair");
  if (pipe(go) < 0 || pipe(opened) < 0) die("pipe");
  pid_t child = fork();
  if (child < 0) die("fork");
  if (child == 0) {
    close(sv[1]);
    close(go[1]); /* so that the parent's exit ends the wait below */
    close(opened[0]);
    int fd = open(path, O_RDWR);
    if (fd < 0) die("open");
    if (later) {
      char b = 1;
      if (write(opened[1], &b, 1) != 1) die("write");
      if (read(go[0], &b, 1) != 1) _exit(0); /* the parent went away: nothing to send */
    }
    char byte = 'x';
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    char control[CMSG_SPACE(sizeof(int))];
    memset(control, 0, sizeof control);
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof(int));
    if (sendmsg(sv[0], &msg, 0) != 1) die("sendmsg");
    close(fd);
    _exit(0);
  }
  close(sv[0]);
  close(go[0]);
  close(opened[1]);
  if (later) {
    char b;
    if (read(opened[0], &b, 1) != 1) {
      fprintf(stderr, "holders: the holding child failed\n");
      return 2;
    }
    ready();
  } else if (!sender_done(child)) {
    return 2;
  } else {
    ready();
  }
  char line[64];
  while (read_line(line, sizeof line)) {
    if (strcmp(line, "send") == 0 && later) {
      char b = 1;
      if (write(go[1], &b, 1) != 1) die("write");
      if (!sender_done(child)) return 2;
      printf("sent\n");
      fflush(stdout);
    } else if (strcmp(line, "recv") == 0) {
      char byte;
      struct iovec iov = {.iov_base = &byte, .iov_len = 1};
      char control[CMSG_SPACE(sizeof(int))];
      struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control};
      if (recvmsg(sv[1], &msg, 0) != 1) die("recvmsg");
      struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
      if (!c || c->cmsg_type != SCM_RIGHTS) {
        fprintf(stderr, "holders: no fd received\n");
        return 2;
      }
      int fd;
      memcpy(&fd, CMSG_DATA(c), sizeof(int));
      struct stat st;
      if (fstat(fd, &st) < 0) die("fstat");
      printf("nlink %ld\n", (long) st.st_nlink);
      fflush(stdout);
    }
  }
  return 0;
}

static int bind_mounted(const char *path, const char *target) {
  if (unshare(CLONE_NEWNS) < 0) die("unshare(CLONE_NEWNS)");
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) die("mount --make-rprivate /");
  if (mount(path, target, NULL, MS_BIND, NULL) < 0) die("mount --bind");
  ready();
  char line[64];
  while (read_line(line, sizeof line)) {
    if (strcmp(line, "nlink") == 0) {
      struct stat st;
      if (stat(target, &st) < 0) die("stat");
      printf("nlink %ld\n", (long) st.st_nlink);
      fflush(stdout);
    }
  }
  return 0;
}

static int uring(const char *path) {
  struct io_uring_params p;
  memset(&p, 0, sizeof p);
  int ring = (int) syscall(__NR_io_uring_setup, 1, &p);
  if (ring < 0) {
    /* ENOSYS: a kernel without io_uring; EPERM: kernel.io_uring_disabled or a seccomp filter. */
    printf("unavailable %s\n", strerror(errno));
    fflush(stdout);
    return 0;
  }
  int fd = open(path, O_RDWR);
  if (fd < 0) die("open");
  if (syscall(__NR_io_uring_register, ring, IORING_REGISTER_FILES, &fd, 1) < 0) die("IORING_REGISTER_FILES");
  close(fd);
  ready();
  char line[64];
  while (read_line(line, sizeof line)) {
    if (strcmp(line, "unregister") == 0) {
      if (syscall(__NR_io_uring_register, ring, IORING_UNREGISTER_FILES, NULL, 0) < 0) die("IORING_UNREGISTER_FILES");
      printf("unregistered\n");
      fflush(stdout);
    }
  }
  return 0;
}

static long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

static int racer(long ms, char **paths, int n) {
  long opened = 0, unlinked = 0;
  ready();
  long end = now_ms() + ms;
  while (now_ms() < end) {
    for (int i = 0; i < n; i++) {
      int fd = open(paths[i], O_RDWR | O_CLOEXEC);
      if (fd < 0) continue;
      struct stat st;
      if (fstat(fd, &st) == 0) {
        opened++;
        if (st.st_nlink == 0) unlinked++;
      }
      close(fd);
    }
  }
  printf("opened %ld unlinked %ld\n", opened, unlinked);
  fflush(stdout);
  return 0;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc >= 3 && strcmp(argv[1], "scm") == 0) return scm(argv[2], 0);
  if (argc >= 3 && strcmp(argv[1], "handoff") == 0) return scm(argv[2], 1);
  if (argc >= 4 && strcmp(argv[1], "bind") == 0) return bind_mounted(argv[2], argv[3]);
  if (argc >= 3 && strcmp(argv[1], "uring") == 0) return uring(argv[2]);
  if (argc >= 4 && strcmp(argv[1], "racer") == 0) return racer(atol(argv[2]), argv + 3, argc - 3);
  fprintf(stderr, "usage: holders scm PATH | handoff PATH | bind PATH TARGET | uring PATH | racer MS PATH...\n");
  return 2;
}
