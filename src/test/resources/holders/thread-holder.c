/*
 * A holder whose hold only a thread's view of /proc shows, for the holder-pass tests.
 *
 *   thread-holder fd PATH           the main thread opens PATH (a plain holder, for comparison)
 *   thread-holder memfd NAME        the main thread holds a memfd named NAME
 *   thread-holder clone-fd PATH     a thread made by raw clone() without CLONE_FILES opens PATH;
 *                                   its fd table is its own, so the main thread holds nothing
 *   thread-holder clone-map PATH    the same thread maps PATH shared and closes the fd
 *   thread-holder exit-main-fd PATH a second thread opens PATH; "exit-main" makes the main
 *                                   thread call pthread_exit, leaving the group leader a zombie
 *   thread-holder exit-main-map PATH  the same with a shared mapping (fd closed)
 *
 * The holding thread prints "ready", then answers lines on stdin:
 *   nlink      -> "nlink N": fstat of its fd; for a mapping (no fd left, and /proc/PID/map_files
 *                 is gone with a zombie leader), the links of the name if it still leads to the
 *                 mapped inode, else 0
 *   exit-main  -> "main exiting" (exit-main modes only)
 *   exit, EOF  -> the whole process exits
 * The clone() thread has no TLS of its own, so it uses raw system calls only.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *path;
static int map_mode;
static int exit_main_mode;
static int memfd_mode;
static int main_pipe[2];
static dev_t mapped_dev;
static ino_t mapped_ino;

static void say(const char *s) { syscall(SYS_write, 1, s, strlen(s)); }

static void say_number(const char *prefix, long v) {
  char buf[64];
  int n = 0;
  char digits[24];
  int d = 0;
  while (*prefix) buf[n++] = *prefix++;
  if (v == 0) digits[d++] = '0';
  while (v > 0) { digits[d++] = (char) ('0' + v % 10); v /= 10; }
  while (d > 0) buf[n++] = digits[--d];
  buf[n++] = '\n';
  syscall(SYS_write, 1, buf, n);
}

/* Reads one line from stdin into buf; the length, or -1 at end of input. */
static int read_line(char *buf, int size) {
  int n = 0;
  while (n < size - 1) {
    char c;
    long r = syscall(SYS_read, 0, &c, 1);
    if (r <= 0) return n > 0 ? n : -1;
    if (c == '\n') break;
    buf[n++] = c;
  }
  buf[n] = 0;
  return n;
}

static int hold(void *unused) {
  (void) unused;
  long fd = memfd_mode ? syscall(SYS_memfd_create, path, 0) : syscall(SYS_openat, AT_FDCWD, path, O_RDWR | O_CLOEXEC);
  if (fd < 0) { say("cannot open\n"); syscall(SYS_exit_group, 2); }
  if (map_mode) {
    struct stat st;
    syscall(SYS_fstat, fd, &st);
    mapped_dev = st.st_dev;
    mapped_ino = st.st_ino;
    long len = st.st_size > 0 ? st.st_size : 4096;
    long addr = syscall(SYS_mmap, 0, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (addr < 0 && addr > -4096) { say("cannot map\n"); syscall(SYS_exit_group, 2); }
    syscall(SYS_close, fd);
    fd = -1;
  }
  say("ready\n");
  char line[64];
  while (read_line(line, sizeof line) >= 0) {
    if (strcmp(line, "nlink") == 0) {
      struct stat st;
      if (map_mode) {
        if (syscall(SYS_newfstatat, AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) != 0) {
          say("nlink 0\n");
        } else if (st.st_dev != mapped_dev || st.st_ino != mapped_ino) {
          say("nlink 0\n");
        } else {
          say_number("nlink ", (long) st.st_nlink);
        }
      } else if (syscall(SYS_fstat, fd, &st) != 0) {
        say("nlink -1\n");
      } else {
        say_number("nlink ", (long) st.st_nlink);
      }
    } else if (strcmp(line, "exit-main") == 0 && exit_main_mode) {
      say("main exiting\n");
      char c = 1;
      syscall(SYS_write, main_pipe[1], &c, 1);
    } else if (strcmp(line, "exit") == 0) {
      break;
    }
  }
  syscall(SYS_exit_group, 0);
  return 0;
}

static void *hold_thread(void *arg) {
  hold(arg);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    say("usage: thread-holder fd|memfd|clone-fd|clone-map|exit-main-fd|exit-main-map PATH\n");
    return 2;
  }
  const char *mode = argv[1];
  path = argv[2];
  map_mode = strstr(mode, "-map") != NULL;
  if (strcmp(mode, "fd") == 0 || strcmp(mode, "memfd") == 0) {
    memfd_mode = mode[0] == 'm';
    return hold(NULL);
  }
  if (strncmp(mode, "clone-", 6) == 0) {
    size_t size = 1 << 20;
    char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED) return 2;
    /* A thread of this process (same address space, signal handlers, thread group) with a copy of
       the fd table, not a share of it: no CLONE_FILES. */
    int flags = CLONE_VM | CLONE_THREAD | CLONE_SIGHAND | CLONE_FS | CLONE_SYSVSEM;
    if (clone(hold, stack + size, flags, NULL) < 0) return 2;
    for (;;) pause();
  }
  if (strncmp(mode, "exit-main-", 10) == 0) {
    exit_main_mode = 1;
    if (pipe(main_pipe) != 0) return 2;
    pthread_t t;
    if (pthread_create(&t, NULL, hold_thread, NULL) != 0) return 2;
    char c;
    while (read(main_pipe[0], &c, 1) != 1) {
    }
    pthread_exit(NULL);
  }
  say("unknown mode\n");
  return 2;
}
