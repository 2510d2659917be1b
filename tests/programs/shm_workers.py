"""DataLoader workers that hand 4 MiB batches to the training process through /dev/shm: run with a
/dev/shm of a few MiB (a container's default is 64 MB) the first batch does not fit, and the program
fails with torch's "unable to allocate shared memory(shm)"."""
import torch
from torch.utils.data import DataLoader, Dataset


class Big(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        return torch.ones(256, 1024, 4)


if __name__ == "__main__":
    for x in DataLoader(Big(), batch_size=4, num_workers=2):
        pass
    print("shm_workers: done")
