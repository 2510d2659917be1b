"""Two DDP ranks under torchrun, each on its own GPU (NCCL), training a wide MLP on batches already
on the GPU. Run on a machine whose second GPU is power-capped, that rank is the straggler: the other
rank's all-reduce waits for it inside NCCL every step.

Expected on an H100 node: the capped rank named as the job's straggler, the other rank waiting on it,
and no advice to use DDP (each GPU already has its process)."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=30)
args = parser.parse_args()
local_rank = int(os.environ.get("LOCAL_RANK", "0"))
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
model = nn.Sequential(*[nn.Linear(4096, 4096) for _ in range(6)]).to(local_rank)
model = DistributedDataParallel(model, device_ids=[local_rank])
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(8192, 4096, device=local_rank)
for step in range(args.steps):
    loss = model(x).pow(2).mean()
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    if step % 10 == 0:
        print(f"rank {dist.get_rank()} step {step} loss {loss.item():.4f}")
print("done", dist.get_rank())
dist.destroy_process_group()
