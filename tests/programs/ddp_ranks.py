"""Two gloo ranks train a tiny model with DDP; rank 1 exits with status 3 when argv[1] == 'fail'."""
import os
import sys
import time

import torch
import torch.distributed as dist
from torch import nn

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
model = nn.parallel.DistributedDataParallel(nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(20):
    loss = model(torch.randn(16, 8)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
if len(sys.argv) > 1 and sys.argv[1] == "fail" and rank == 1:
    time.sleep(1.5)        # gpuprof promises events up to the last second before an os._exit
    os._exit(3)
dist.barrier()
print(f"rank {rank} done", flush=True)
dist.destroy_process_group()
