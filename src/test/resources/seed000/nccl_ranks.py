#!/usr/bin/python3
"""Four local ranks' worth of NCCL's SHM transport, as NCCL 2.21.5 makes its files (docs/nccl.md).

Each rank is a process of its own. For each of the ring's 2 channels it makes a receive buffer
(/dev/shm/nccl-XXXXXX of 9,637,892 bytes: header, LL, LL128 and SIMPLE buffers and the 4-byte
reference count) and a send buffer (4,100 bytes): open with O_CREAT|O_EXCL, posix_fallocate to the
full size, and keeps it open (NCCL maps it; Debian's python3-minimal has no mmap module, and
an open descriptor holds a file as a mapping does). A segment it cannot extend is closed and left as a 0-byte file, never unlinked,
and the rank fails as NCCL does ("failed to extend ... unhandled system error"); the job then
ends every rank, whose segments stay behind, as a crashed job's do. When every rank has its
segments, each touches them, unlinks them (NCCL unlinks once the peer has attached) and the job
exits 0.
"""
import os
import signal
import sys
import time

RANKS = 4
CHANNELS = 2
RECV = 4096 + 524288 + 4915200 + 4194304 + 4  # NcclFacts.SHM_RECV_BYTES + REFCOUNT_BYTES
SEND = 4096 + 4
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def segment(size):
    while True:
        path = "/dev/shm/nccl-" + "".join(LETTERS[b % len(LETTERS)] for b in os.urandom(6))
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
            break
        except FileExistsError:
            continue
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as e:
        os.close(fd)
        raise OSError(e.errno, "NCCL WARN Error: failed to extend %s to %d bytes, error: %s" % (path, size, os.strerror(e.errno)))
    return path, fd


def rank(r, ready, done):
    made = []
    try:
        for _ in range(CHANNELS):
            made.append(segment(RECV))
            made.append(segment(SEND))
    except OSError as e:
        print("rank %d: %s; NCCL error: unhandled system error" % (r, e.strerror), flush=True)
        os.write(ready, b"f")
        os._exit(1)
    os.write(ready, b"x")
    os.read(done, 1)  # until the job's step is done: end of file
    for path, fd in made:
        os.close(fd)
        os.unlink(path)
    os._exit(0)


def main():
    ready_r, ready_w = os.pipe()
    done_r, done_w = os.pipe()
    pids = []
    for r in range(RANKS):
        pid = os.fork()
        if pid == 0:
            os.close(ready_r)
            os.close(done_w)
            rank(r, ready_w, done_r)
        pids.append(pid)
    os.close(ready_w)
    os.close(done_r)
    answers = b""
    while len(answers) < RANKS:
        b = os.read(ready_r, 1)
        if not b:
            break
        answers += b
    failed = answers != b"x" * RANKS
    if failed:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)  # NCCL's abort: the segments made so far stay behind
            except ProcessLookupError:
                pass
    os.close(done_w)
    for pid in pids:
        os.waitpid(pid, 0)
    if failed:
        print("job failed: not every rank could make its NCCL segments", flush=True)
        return 1
    print("job ran: %d ranks made their NCCL segments" % RANKS, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
