"""DDP on gloo ranks, each with its own DataLoader. argv[1] picks the input:
  straggler      rank 1's dataset sleeps 40 ms per batch, the others' are fast
  cpu-straggler  rank 1's dataset does heavy per-sample CPU work in its own process, the others' are fast
  cpu            every rank's dataset does heavy per-sample CPU work (num_workers=0)
  none       light data and a model that does the work
argv[2] (optional): steps per rank (default 40)."""
import os
import sys
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Samples(Dataset):
    def __init__(self, mode, rank):
        self.mode, self.rank = mode, rank

    def __len__(self):
        return 10_000

    def __getitem__(self, i):
        x = torch.rand(64, generator=torch.Generator().manual_seed(i))
        if self.mode == "straggler" and self.rank == 1 and i % 8 == 0:
            time.sleep(0.04)
        if self.mode == "cpu" or (self.mode == "cpu-straggler" and self.rank == 1):
            image = torch.rand(3, 24, 24, generator=torch.Generator().manual_seed(i))
            for _ in range(30):
                image = (image + image.roll(1, dims=-1) + image.roll(-1, dims=-2)) / 3
            x = x + image.mean()
        return x, i % 4


def main():
    mode = sys.argv[1]
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    width = 768 if mode == "none" else 64
    model = nn.parallel.DistributedDataParallel(
        nn.Sequential(nn.Linear(64, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 4)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(Samples(mode, rank), batch_size=8, shuffle=False)
    for step, (x, y) in enumerate(loader):
        if step == steps:
            break
        if mode == "none":
            x = x.repeat(32, 1)
            y = y.repeat(32)
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.barrier()
    print(f"rank {rank} done {loss.item():.6f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
