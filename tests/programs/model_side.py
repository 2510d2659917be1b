"""A compute-bound training loop for the model-side probes and try changes. argv[1] picks it:
  plain      an MLP trained in float32 by SGD
  autocast   the same, its forward and loss under bf16 autocast already
  by-hand    the plain MLP updated by hand after backward(), no optimizer
  naive-bce  a binary classifier whose loss is written -log(1 - sigmoid(z)) by hand with z near 10:
             finite in float32, infinite once sigmoid rounds to 1.0 in bfloat16
argv[2] (optional): steps (default 30). Prints the final loss."""
import contextlib
import sys

import torch
from torch import nn

torch.manual_seed(0)
mode = sys.argv[1]
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 30
model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                      nn.Linear(512, 1 if mode == "naive-bce" else 10))
if mode == "naive-bce":
    with torch.no_grad():
        model[-1].bias.fill_(10.0)
optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
x = torch.randn(128, 256)
y = torch.randint(0, 10, (128,))
for step in range(steps):
    context = torch.autocast("cpu", dtype=torch.bfloat16) if mode == "autocast" else contextlib.nullcontext()
    with context:
        out = model(x)
        if mode == "naive-bce":
            loss = -torch.log(1 - torch.sigmoid(out)).mean()
        else:
            loss = nn.functional.cross_entropy(out, y)
    optimizer.zero_grad()
    loss.backward()
    if mode == "by-hand":
        with torch.no_grad():
            for p in model.parameters():
                p.add_(p.grad, alpha=-1e-4)
        continue
    optimizer.step()
print(f"model_side {mode}: final loss {loss.item():.4f}")
