"""A hand-written loop over a torch.compile'd model (the eager backend: no compiler needed)."""
import warnings

import torch

warnings.simplefilter("error")          # as `python -W error`: any warning is a crash
torch.manual_seed(0)
model = torch.compile(torch.nn.Linear(8, 1), backend="eager")
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(64, 8), torch.randn(64, 1)
for step in range(12):
    batch = slice(4 * step % 64, 4 * step % 64 + 4)
    loss = torch.nn.functional.mse_loss(model(x[batch]), y[batch])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.6f}")
