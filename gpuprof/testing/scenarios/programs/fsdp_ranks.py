"""Two ranks under torchrun, each on its own GPU, training a wide float32 MLP sharded with FSDP2
(`fully_shard` on each layer, then on the model) over NCCL, with AdamW on the shards and the loss
read with `.item()` every step, as a training log does.

Each layer's parameters live half on each rank: the forward gathers a layer's whole weights before
it runs (all-gather), the backward gathers them again and reduce-scatters the gradients, so each
GPU's link carries about 1.5 times the model's bytes a step, beside the model's FLOPs.

Expected on an H100 node, from the magnitudes: compute, not communication.
- Compute: two 8192x8192 layers on 8192 rows are 2 x 8192 x 8192^2 x 2 = 2.2 TFLOP forward and
  about three times that with the backward, 6.6 TFLOP a step. float32 matmuls run without TF32 by
  default, on the FP32 units: 67 TFLOPS on the H100 SXM data sheet, about 51 measured (an H200,
  the same chip: docs/simulated-gpu.md): ~130 ms a step.
- Communication: 134M parameters, 537 MB in float32. A rank gathers the half it lacks twice (the
  forward, then the backward: FSDP2 frees gathered weights after each layer's forward by default)
  and reduce-scatters the gradients once: 3 x 268 MB = 805 MB through each GPU's NVLink a step. At
  NCCL's ~360 GB/s bus bandwidth on NVLink 4 (450 GB/s each way, H100 data sheet) that is ~2.2
  ms, under 2% of the step, and FSDP2 prefetches the next layer's gather during the current
  layer's compute, so most of it is hidden.
- AdamW on a rank's 67M-parameter shard is memory-bound: a few GB read and written at 3.35 TB/s,
  under 1 ms; one `.item()` a step drains the launch queue once, tens of microseconds.
- Each GPU has its process: no advice to use DDP."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.fsdp import fully_shard

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=20)
parser.add_argument("--width", type=int, default=8192)
parser.add_argument("--rows", type=int, default=8192)
parser.add_argument("--layers", type=int, default=2)
args = parser.parse_args()
local_rank = int(os.environ.get("LOCAL_RANK", "0"))
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
model = nn.Sequential(*[nn.Linear(args.width, args.width) for _ in range(args.layers)]).to(local_rank)
for layer in model:
    fully_shard(layer)
fully_shard(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
x = torch.randn(args.rows, args.width, device=local_rank)
losses = []
for step in range(args.steps):
    loss = model(x).pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    losses.append(loss.item())
    if step % 10 == 0:
        print(f"rank {dist.get_rank()} step {step} loss {losses[-1]:.4f}")
print("done", dist.get_rank())
dist.destroy_process_group()
