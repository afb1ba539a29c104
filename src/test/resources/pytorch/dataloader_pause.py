# A training loop's input pipeline: a DataLoader with persistent workers sharing batches through
# files in /dev/shm (the file_system strategy). After the first batch the consumer pauses (an
# evaluation, a checkpoint) while the workers' prefetched batches wait unheld in the queue.
# Prints "first", then one "batch I OK" line per batch whose content is intact, then "done".
import sys
import time

import torch
import torch.multiprocessing as mp
from torch.utils.data import DataLoader, Dataset

mp.set_sharing_strategy("file_system")
PAUSE = float(sys.argv[1])
BATCHES = 12


class Batches(Dataset):
    def __len__(self):
        return BATCHES

    def __getitem__(self, i):
        return torch.full((256, 1024), float(i))  # 1 MiB of float32


def main():
    loader = DataLoader(Batches(), batch_size=None, num_workers=4, persistent_workers=True, prefetch_factor=2)
    for i, batch in enumerate(loader):
        ok = batch.shape == (256, 1024) and bool((batch == float(i)).all())
        print("batch %d %s" % (i, "OK" if ok else "CORRUPT"), flush=True)
        if i == 0:
            print("first", flush=True)
            time.sleep(PAUSE)
    print("done", flush=True)


if __name__ == "__main__":
    main()
