"""A training job to attach to, started plainly: `attach_target.py MODE EPOCHS [STATUS]`; EPOCHS
`until=PATH` trains until the file PATH exists (a test ends it once it has attached).

MODE input: the DataLoader makes each batch in the training process with heavy per-sample CPU work.
MODE compute: batches come ready from memory; the model's matrix products are the work.
MODE spawn: two spawned workers make batches with heavy per-sample work; the model is tiny.
MODE ddp: under torchrun, each gloo rank as `input` with one forked worker, DDP over a tiny model.
Prints "epoch N loss L" after each epoch (the same every run), then exits with STATUS (default 0)."""
import os
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

MODE = sys.argv[1]
UNTIL = sys.argv[2][len("until="):] if sys.argv[2].startswith("until=") else None
EPOCHS = 10 ** 6 if UNTIL else int(sys.argv[2])
STATUS = int(sys.argv[3]) if len(sys.argv) > 3 else 0


class Augmented(Dataset):
    """Per-sample CPU work (smoothing passes), deterministic per index."""

    def __init__(self, n, passes):
        self.n, self.passes = n, passes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        x = torch.rand(3, 32, 32, generator=torch.Generator().manual_seed(i))
        for _ in range(self.passes):
            x = (x + 0.01 * torch.sin(x * 7.0)).clamp(0, 1)
            x = (x + x.roll(1, dims=-1) + x.roll(-1, dims=-1)) / 3
        return x, i % 10


class Ready(Dataset):
    def __init__(self, n):
        self.x = torch.rand(n, 3, 32, 32, generator=torch.Generator().manual_seed(0))

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], i % 10


def build():
    if MODE == "compute":
        model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 1024), nn.ReLU(), nn.Linear(1024, 1024),
                              nn.ReLU(), nn.Linear(1024, 10))
        return model, DataLoader(Ready(16 * 12), batch_size=16)
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 10))
    if MODE == "spawn":
        return model, DataLoader(Augmented(16 * 10, 150), batch_size=16, num_workers=2,
                                 multiprocessing_context="spawn", persistent_workers=True)
    if MODE == "ddp":
        return model, DataLoader(Augmented(16 * 6, 20), batch_size=16, num_workers=1, persistent_workers=True)
    return model, DataLoader(Augmented(16 * 10, 20), batch_size=16)


def stop_now() -> bool:
    """The file is there; under DDP, there for any rank (all ranks stop after the same epoch)."""
    there = torch.tensor([float(os.path.exists(UNTIL))])
    if MODE == "ddp":
        import torch.distributed as dist
        dist.all_reduce(there)
    return bool(there.item() > 0)


if __name__ == "__main__":
    torch.manual_seed(0)
    model, loader = build()
    if MODE == "ddp":
        import torch.distributed as dist
        dist.init_process_group("gloo")
        model = nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(EPOCHS):
        total = 0.0
        for x, y in loader:
            if UNTIL and MODE != "ddp" and os.path.exists(UNTIL):
                break
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
        prefix = f"rank {os.environ['RANK']} " if MODE == "ddp" else ""
        print(f"{prefix}epoch {epoch} loss {total:.4f}", flush=True)
        if UNTIL and stop_now():
            break
    if MODE == "ddp":
        dist.destroy_process_group()
    sys.exit(STATUS)
