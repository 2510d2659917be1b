"""A small MLP trained with Adam on batches already on the GPU, the loss read with .item() every
step (logging, a NaN check): each step is some hundred tiny kernels launched one after another.

Expected on an H100: host.overhead (an H200 ran such a step in 1.4 ms with the GPU busy 8% of it:
bench/real_gpu/results), answered by fewer launches: CUDA graphs (torch.compile's reduce-overhead
mode) and a fused optimizer step."""
import argparse

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=300)
args = parser.parse_args()
model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10)).to("cuda")
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
x, y = torch.randn(64, 64, device="cuda"), torch.randint(0, 10, (64,), device="cuda")
losses = []
for step in range(args.steps):
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
print("done", losses[-1])
