"""Two balanced ranks (gloo) training a tiny model whose gradients DDP sends in one bucket per
parameter (bucket_cap_mb near zero): each step is a few microseconds of compute and ten all-reduces
across processes, so the collectives are most of the step although no rank waits for another. Run with torchrun --nproc-per-node=2; `nosync` as argv[1] accumulates over
4 micro-batches with no_sync (the hand-made ddp-no-sync change, 4x the batch per update)."""
import contextlib
import sys
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    layers = [nn.Linear(4, 4) for _ in range(4)]
    model = DistributedDataParallel(nn.Sequential(*layers, nn.Linear(4, 1)), bucket_cap_mb=1e-5)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    generator = torch.Generator().manual_seed(rank)
    accumulate = 4 if sys.argv[1:] == ["nosync"] else 1
    started = time.perf_counter()
    for step in range(600 * accumulate):
        x = torch.randn(8, 4, generator=generator)
        sync = (step + 1) % accumulate == 0
        with contextlib.nullcontext() if sync else model.no_sync():
            loss = model(x).pow(2).mean() / accumulate
            loss.backward()
        if sync:
            optimizer.step()
            optimizer.zero_grad()
    per_batch = (time.perf_counter() - started) / (600 * accumulate)
    print(f"rank {rank} done {loss.item():.6f} ({per_batch * 1e3:.3f} ms a batch)", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
