/*
 * The smallest FUSE filesystem for the holder-pass tests: a root directory with one read-only
 * file, "hello". Mounted by an ordinary user without allow_other, so that even root gets EACCES
 * on any stat of it: a /proc pass that stats an fd on it cannot finish.
 *
 *   hello-fs -f MOUNTPOINT    (libfuse3; fusermount3 does the mount for an ordinary user)
 */
#define FUSE_USE_VERSION 31
#include <errno.h>
#include <fuse.h>
#include <string.h>
#include <sys/stat.h>

static const char text[] = "hello\n";

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
  (void) fi;
  memset(st, 0, sizeof *st);
  if (strcmp(path, "/") == 0) {
    st->st_mode = S_IFDIR | 0755;
    st->st_nlink = 2;
    return 0;
  }
  if (strcmp(path, "/hello") == 0) {
    st->st_mode = S_IFREG | 0444;
    st->st_nlink = 1;
    st->st_size = sizeof text - 1;
    return 0;
  }
  return -ENOENT;
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off, struct fuse_file_info *fi,
                      enum fuse_readdir_flags flags) {
  (void) off;
  (void) fi;
  (void) flags;
  if (strcmp(path, "/") != 0) return -ENOENT;
  fill(buf, ".", NULL, 0, 0);
  fill(buf, "..", NULL, 0, 0);
  fill(buf, "hello", NULL, 0, 0);
  return 0;
}

static int fs_open(const char *path, struct fuse_file_info *fi) {
  if (strcmp(path, "/hello") != 0) return -ENOENT;
  if ((fi->flags & O_ACCMODE) != O_RDONLY) return -EACCES;
  return 0;
}

static int fs_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi) {
  (void) fi;
  if (strcmp(path, "/hello") != 0) return -ENOENT;
  size_t len = sizeof text - 1;
  if ((size_t) off >= len) return 0;
  if (off + size > len) size = len - off;
  memcpy(buf, text + off, size);
  return (int) size;
}

static const struct fuse_operations ops = {
  .getattr = fs_getattr,
  .readdir = fs_readdir,
  .open = fs_open,
  .read = fs_read,
};

int main(int argc, char *argv[]) {
  return fuse_main(argc, argv, &ops, NULL);
}
