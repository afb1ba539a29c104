/*
 * A FUSE filesystem for tests that stands in for a network filesystem that stops answering, or
 * for an ordinary user's mount that root may not enter. Built at test time by testing/FuseFixture:
 *   cc -o fusefix fusefix.c $(pkg-config --cflags --libs fuse3)
 *
 * fusefix serve MOUNTPOINT [allow_other]
 *   Serves a tiny tree: / , /dev , /dev/shm (directories) and /held (a 6-byte file), with no
 *   kernel caching of names or attributes, so every path walk asks the server. Prints "ready"
 *   once mounted. Run as an ordinary user without allow_other, the kernel refuses every other
 *   user, root included. Serves until the mount goes away (fusermount3 -u, umount, or an abort
 *   of the connection). To stall it, stop the process (SIGSTOP): it then reads no request, and
 *   every caller waits in the kernel (killably, as on a hard NFS mount whose server went away)
 *   until SIGCONT or an abort through /sys/fs/fuse/connections/N/abort.
 *
 * fusefix container DIR
 *   A "container" whose root is DIR: a mount namespace of its own, a 1 MB tmpfs mounted at
 *   DIR/dev/shm, then chroot(DIR). Its /proc/PID/root/dev/shm walks through DIR. Prints "ready"
 *   and stays until standard input closes. Needs root.
 */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE
#include <errno.h>
#include <fuse.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static const char HELD[] = "hello\n";

static void *fx_init(struct fuse_conn_info *conn, struct fuse_config *cfg) {
  (void)conn;
  cfg->entry_timeout = 0;
  cfg->attr_timeout = 0;
  cfg->negative_timeout = 0;
  cfg->use_ino = 0;
  return NULL;
}

static int is_dir(const char *path) {
  return strcmp(path, "/") == 0 || strcmp(path, "/dev") == 0 || strcmp(path, "/dev/shm") == 0;
}

static int fx_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
  (void)fi;
  memset(st, 0, sizeof(*st));
  st->st_uid = getuid();
  st->st_gid = getgid();
  if (is_dir(path)) {
    st->st_mode = S_IFDIR | 0755;
    st->st_nlink = 2;
    return 0;
  }
  if (strcmp(path, "/held") == 0) {
    st->st_mode = S_IFREG | 0644;
    st->st_nlink = 1;
    st->st_size = sizeof(HELD) - 1;
    return 0;
  }
  return -ENOENT;
}

static int fx_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off, struct fuse_file_info *fi,
                      enum fuse_readdir_flags flags) {
  (void)off; (void)fi; (void)flags;
  if (!is_dir(path)) {
    return -ENOTDIR;
  }
  fill(buf, ".", NULL, 0, 0);
  fill(buf, "..", NULL, 0, 0);
  if (strcmp(path, "/") == 0) {
    fill(buf, "dev", NULL, 0, 0);
    fill(buf, "held", NULL, 0, 0);
  } else if (strcmp(path, "/dev") == 0) {
    fill(buf, "shm", NULL, 0, 0);
  }
  return 0;
}

static int fx_open(const char *path, struct fuse_file_info *fi) {
  if (strcmp(path, "/held") != 0) {
    return -ENOENT;
  }
  if ((fi->flags & O_ACCMODE) != O_RDONLY) {
    return -EACCES;
  }
  return 0;
}

static int fx_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi) {
  (void)fi;
  if (strcmp(path, "/held") != 0) {
    return -ENOENT;
  }
  size_t len = sizeof(HELD) - 1;
  if ((size_t)off >= len) {
    return 0;
  }
  if (off + size > len) {
    size = len - off;
  }
  memcpy(buf, HELD + off, size);
  return (int)size;
}

static int fx_statfs(const char *path, struct statvfs *st) {
  (void)path;
  memset(st, 0, sizeof(*st));
  st->f_bsize = 4096;
  st->f_namemax = 255;
  return 0;
}

static const struct fuse_operations OPS = {
  .init = fx_init,
  .getattr = fx_getattr,
  .readdir = fx_readdir,
  .open = fx_open,
  .read = fx_read,
  .statfs = fx_statfs,
};

static int serve(const char *mountpoint, int allow_other) {
  char *argv[] = {"fusefix", "-o", allow_other ? "allow_other,fsname=fusefix" : "fsname=fusefix", NULL};
  struct fuse_args args = FUSE_ARGS_INIT(3, argv);
  struct fuse *f = fuse_new(&args, &OPS, sizeof(OPS), NULL);
  if (f == NULL) {
    fprintf(stderr, "fusefix: fuse_new failed\n");
    return 1;
  }
  if (fuse_mount(f, mountpoint) != 0) {
    fprintf(stderr, "fusefix: cannot mount on %s\n", mountpoint);
    fuse_destroy(f);
    return 1;
  }
  printf("ready\n");
  fflush(stdout);
  int rc = fuse_loop(f);
  fuse_unmount(f);
  fuse_destroy(f);
  fuse_opt_free_args(&args);
  return rc < 0 ? 1 : 0;
}

static int container(const char *dir) {
  char shm[4096];
  snprintf(shm, sizeof(shm), "%s/dev/shm", dir);
  if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
    perror("fusefix: unshare");
    return 1;
  }
  if (mount("fusefix-ctr-shm", shm, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=1777") != 0) {
    perror("fusefix: mount tmpfs");
    return 1;
  }
  if (chroot(dir) != 0 || chdir("/") != 0) {
    perror("fusefix: chroot");
    return 1;
  }
  printf("ready\n");
  fflush(stdout);
  char c;
  while (read(0, &c, 1) > 0) {
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 3 && strcmp(argv[1], "serve") == 0) {
    return serve(argv[2], argc >= 4 && strcmp(argv[3], "allow_other") == 0);
  }
  if (argc == 3 && strcmp(argv[1], "container") == 0) {
    return container(argv[2]);
  }
  fprintf(stderr, "usage: fusefix serve MOUNTPOINT [allow_other] | fusefix container DIR\n");
  return 2;
}
