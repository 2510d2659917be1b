"""A loop with no optimizer: parameters updated by hand after each backward, with gradient
accumulation over 2 micro-batches in the second half, and an LBFGS closure loop at the end in a
separate mode (argv[1] == "lbfgs")."""
import sys

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))
x, y = torch.randn(256, 32), torch.randn(256, 1)
if len(sys.argv) > 1 and sys.argv[1] == "lbfgs":
    optimizer = torch.optim.LBFGS(model.parameters(), max_iter=5)
    for step in range(12):
        def closure():
            optimizer.zero_grad()
            loss = (model(x) - y).pow(2).mean()
            loss.backward()
            return loss
        loss = optimizer.step(closure)
    print("lbfgs done", round(float(loss), 6))
else:
    lr = 0.01
    for step in range(40):
        i = (step * 16) % 256
        loss = (model(x[i:i + 16]) - y[i:i + 16]).pow(2).mean()
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-lr)
    print("manual done", round(loss.item(), 6))
