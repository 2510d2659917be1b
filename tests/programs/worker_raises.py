"""A DataLoader worker raises on one sample: the program fails as it would without gpuprof."""
import sys

import torch
from torch.utils.data import DataLoader, Dataset


class Fragile(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        if i == 37:
            raise ValueError(f"corrupt sample {i}")
        return torch.tensor([float(i)])


if __name__ == "__main__":
    total = 0.0
    for batch in DataLoader(Fragile(), batch_size=4, num_workers=int(sys.argv[1]),
                            multiprocessing_context=sys.argv[2] if len(sys.argv) > 2 else None):
        total += float(batch.sum())
    print("never", total)
