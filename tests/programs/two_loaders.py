"""Two DataLoaders over the same Dataset class, the validation one built first; the training one
gets 24 batches, the validation one 4. Usage: two_loaders.py CONTEXT map|iterable"""
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset, IterableDataset


class Samples(Dataset):
    def __len__(self):
        return 4096

    def __getitem__(self, i):
        return torch.full((4,), float(i))


class Stream(IterableDataset):
    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        start, step = (info.id, info.num_workers) if info else (0, 1)
        for i in range(start, 4096, step):
            yield torch.full((4,), float(i))


def main():
    context, kind = sys.argv[1], sys.argv[2]
    dataset = Samples() if kind == "map" else Stream()
    val = DataLoader(dataset, batch_size=8, num_workers=2, multiprocessing_context=context, prefetch_factor=2)
    train = DataLoader(dataset, batch_size=8, num_workers=2, multiprocessing_context=context, prefetch_factor=2)
    total = 0.0
    for i, x in enumerate(train):
        total += float(x.sum())
        time.sleep(0.01)
        if i == 23:
            break
    for i, x in enumerate(val):
        total += float(x.sum())
        if i == 3:
            break
    print(f"total {total:.0f}")


if __name__ == "__main__":
    main()
