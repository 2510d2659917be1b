"""Two DDP ranks under torchrun on two GPUs joined only by PCIe, training a wide, shallow MLP (four
4096 x 4096 layers: 67M float32 parameters, 268 MB of gradients) on 64 rows a step, already on the
GPU. Little compute per step, many parameters: the gradient all-reduce is the step.

What a real node shows, from first principles:
- The all-reduce: DDP reduces all 268 MB of gradients every step. NCCL's ring all-reduce moves
  2(n-1)/n of the bytes through each GPU's link (nccl-tests' PERFORMANCE.md, "bus bandwidth"), all
  of them for two ranks. A PCIe 4.0 x16 link carries 31.5 GB/s each way (PCI-SIG: 16 GT/s a lane,
  128b/130b); between GPUs under different root ports the traffic crosses the host, and
  all_reduce_perf reaches about 20 GB/s of bus bandwidth there (NVIDIA/nccl-tests#178: an A100
  node's ranks that leave NVLink for the PCIe/SYS path drop from 208 to 20 GB/s; NVIDIA/nccl-tests#74
  and NVIDIA/nccl#1530 show PCIe-only nodes in the same range). 268 MB at 20 GB/s is about 13 ms.
- The compute: 6 x 64 rows x 67M parameters = 26 GFLOP a step, about 0.5 ms at an H100's 51 TFLOPS
  in float32 (about 1 ms with matmuls of 64 rows that fill few SMs); SGD reads and writes the
  parameters and gradients once, about 0.8 GB at 3.35 TB/s: 0.25 ms.
- The overlap: DDP starts each 25 MB bucket once its gradients are ready, but the backward that
  could hide them lasts well under a millisecond, so nearly all of the 13 ms is exposed after it.

So about 85% of each step is the exposed all-reduce, both ranks alike (neither waits for the other:
no straggler). Expected: the comm verdict from DDP's own timing, with the DDP fixes gpuprof offers for
it: larger buckets (ddp-buckets) and all-reducing once per several micro-batches with no_sync()
(ddp-no-sync); no advice to use DDP, which the job already does."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=30)
parser.add_argument("--batch", type=int, default=64)
args = parser.parse_args()
local_rank = int(os.environ.get("LOCAL_RANK", "0"))
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
model = nn.Sequential(*[nn.Sequential(nn.Linear(4096, 4096), nn.ReLU()) for _ in range(4)]).to(local_rank)
model = DistributedDataParallel(model, device_ids=[local_rank])
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
x = torch.randn(args.batch, 4096, device=local_rank)
for step in range(args.steps):
    loss = model(x).pow(2).mean()
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    if step % 10 == 0 or step == args.steps - 1:
        print(f"rank {dist.get_rank()} step {step} loss {loss.item():.4f}")
print("done", dist.get_rank())
dist.destroy_process_group()
