/*
 * A process confined as Docker's default seccomp profile confines a container without
 * CAP_SYS_NICE: get_mempolicy, mbind and set_mempolicy fail with EPERM. It tries get_mempolicy
 * (the call NCCL's cuMem host allocation needs), prints "get_mempolicy: <errno name or ok>",
 * then "ready", and waits to be killed.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DENY(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
                 BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))

int main(void) {
  struct sock_filter filter[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    DENY(SYS_get_mempolicy),
    DENY(SYS_mbind),
    DENY(SYS_set_mempolicy),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = { .len = sizeof(filter) / sizeof(filter[0]), .filter = filter };
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
    perror("seccomp");
    return 1;
  }
  int mode = 0;
  long r = syscall(SYS_get_mempolicy, &mode, NULL, 0, NULL, 0);
  printf("get_mempolicy: %s\nready\n", r == 0 ? "ok" : errno == EPERM ? "EPERM" : "other");
  fflush(stdout);
  for (;;) {
    pause();
  }
}
