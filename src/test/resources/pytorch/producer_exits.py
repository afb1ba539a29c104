# A producer that exits while its batches still wait in a queue: the producer process puts 12
# tensors in a torch.multiprocessing queue (the file_system strategy, so each is a named file in
# /dev/shm registered with the producer's torch_shm_manager), prints its manager's pid, and exits
# normally. The consumer has taken the first batch (so it is a client of that manager), waits for
# a line on stdin, then reads the rest.
# Prints "batch 0 OK", "manager PID", "producer exited 0"; after the line on stdin one
# "batch I OK" per intact batch (or "batch I LOST ..."), then "done".
import os
import sys

import torch
import torch.multiprocessing as mp

BATCHES = 12


def produce(q):
    for i in range(BATCHES):
        q.put(torch.full((256, 1024), float(i)))  # 1 MiB of float32
    q.close()
    q.join_thread()  # every batch pickled: shared by name and registered with the manager
    print("manager %s" % " ".join(children_of_this_process()), flush=True)


def children_of_this_process():
    """The manager is the one child this process started (torch/lib/libshm/core.cpp, start_manager),
    forked by whichever thread pickled the first batch: each thread lists its own children. The
    queue's feeder thread may still be exiting after join_thread: once its task is gone from
    /proc/self/task/, the kernel has handed its children to a live thread, so the listing is made
    again until no task vanished while it was read."""
    while True:
        children, vanished = [], False
        for task in os.listdir("/proc/self/task"):
            try:
                with open("/proc/self/task/%s/children" % task) as f:
                    children += f.read().split()
            except FileNotFoundError:
                vanished = True
        if not vanished:
            return children


def main():
    mp.set_sharing_strategy("file_system")
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    producer = ctx.Process(target=produce, args=(q,))
    producer.start()
    first = q.get()
    print("batch 0 %s" % ("OK" if bool((first == 0.0).all()) else "CORRUPT"), flush=True)
    del first
    producer.join()
    print("producer exited %d" % producer.exitcode, flush=True)
    sys.stdin.readline()
    for i in range(1, BATCHES):
        try:
            t = q.get(timeout=30)
            print("batch %d %s" % (i, "OK" if bool((t == float(i)).all()) else "CORRUPT"), flush=True)
            del t
        except Exception as e:  # the file was unlinked under the queue: "unable to open shared memory object"
            print("batch %d LOST %s" % (i, str(e).splitlines()[0] if str(e) else type(e).__name__), flush=True)
    print("done", flush=True)


if __name__ == "__main__":
    main()
