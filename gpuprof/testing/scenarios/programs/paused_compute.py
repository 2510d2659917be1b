"""Compute with idle gaps: every tenth step the program pauses (as a checkpoint or an evaluation on
the host would), so the GPU idles at its idle clock for a while between busy stretches."""
import argparse
import time

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=60)
parser.add_argument("--pause", type=float, default=0.4)
args = parser.parse_args()
device = "cuda"
model = nn.Sequential(*[nn.Linear(8192, 8192, device=device, dtype=torch.bfloat16) for _ in range(4)])
optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
x = torch.randn(16384, 8192, device=device, dtype=torch.bfloat16)
for step in range(args.steps):
    loss = model(x).float().pow(2).mean()
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    if step % 10 == 9:
        loss.item()
        time.sleep(args.pause)
print("done", float(loss.item()))
