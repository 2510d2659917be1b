"""Two ranks (torchrun --nproc-per-node 2), each training its own model on its own GPU
(`torch.cuda.set_device(LOCAL_RANK)`), compute-bound; the process group (gloo) only names ranks."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=40)
parser.add_argument("--batch", type=int, default=32768)
args = parser.parse_args()
local_rank = int(os.environ.get("LOCAL_RANK", "0"))
torch.cuda.set_device(local_rank)
dist.init_process_group("gloo")
device = torch.device("cuda", local_rank)
model = nn.Sequential(*[nn.Linear(8192, 8192, device=device, dtype=torch.bfloat16) for _ in range(4)])
optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
source = torch.randn(args.batch, 1024)
project = nn.Linear(1024, 8192, device=device, dtype=torch.bfloat16)
for step in range(args.steps):
    x = source.to(device)
    loss = model(project(x.to(torch.bfloat16))).float().pow(2).mean()
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
print("done", dist.get_rank(), float(loss.item()))
dist.destroy_process_group()
