"""A DataLoader with two worker processes that runs until it is signalled: prints "ready" once both
workers have made a batch. argv[1] (any word) marks the job's processes for a scan."""
import sys

import torch
from torch.utils.data import DataLoader, Dataset


class Endless(Dataset):
    def __len__(self):
        return 10 ** 9

    def __getitem__(self, i):
        return torch.full((4,), float(i % 7))


if __name__ == "__main__":
    torch.set_num_threads(1)
    loader = DataLoader(Endless(), batch_size=4, num_workers=2)
    for step, batch in enumerate(loader):
        if step == 4:
            print("ready", flush=True)
