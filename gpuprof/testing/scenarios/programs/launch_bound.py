"""Expected: host.overhead. The data is on the GPU, but each step launches well over a thousand
tiny kernels and syncs with .item(): the GPU idles between them while the host launches."""
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=40)
parser.add_argument("--params", type=int, default=100)
args = parser.parse_args()
device = "cuda"
params = [torch.randn(16, device=device, requires_grad=True) for _ in range(args.params)]
optimizer = torch.optim.SGD(params, lr=0.01, foreach=False)
x = torch.randn(16, device=device)
for step in range(args.steps):
    loss = sum(((p * x).tanh() ** 2).sum() for p in params)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if loss.item() != loss.item():
        break
print("done", float(loss.item()))
