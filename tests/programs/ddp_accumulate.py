"""Two balanced ranks (gloo) that accumulate gradients over several micro-batches per optimizer
step and let DDP all-reduce after every one of them (one bucket per parameter, so the collectives
are most of each step). Run with torchrun --nproc-per-node=2.

    ddp_accumulate.py [plain|nosync] [MICRO_BATCHES] [STEPS]

`nosync`: the same training with the first MICRO_BATCHES-1 backward passes of each step under
model.no_sync() (the hand-made ddp-no-sync change: one all-reduce a step, same gradients)."""
import contextlib
import sys
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "plain"
    micro = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 150
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = DistributedDataParallel(nn.Sequential(*[nn.Linear(4, 4) for _ in range(4)], nn.Linear(4, 1)),
                                    bucket_cap_mb=1e-5)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    generator = torch.Generator().manual_seed(rank)
    started = time.perf_counter()
    for _ in range(steps):
        for i in range(micro):
            x = torch.randn(8, 4, generator=generator)
            last = i == micro - 1
            with contextlib.nullcontext() if mode != "nosync" or last else model.no_sync():
                loss = model(x).pow(2).mean() / micro
                loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    per_step = (time.perf_counter() - started) / steps
    print(f"rank {rank} done {loss.item():.6f} ({per_step * 1e3:.3f} ms a step)", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
