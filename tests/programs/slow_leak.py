"""A long loop that sums a validation loss tensor each step (`total = total + loss`) for a running
average: the sum keeps every step's small graph and the activations it saved alive, about 40 KB a
step — a leak too slow to reach a fixed threshold in a short run, and gigabytes over a long one."""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 96), nn.ReLU(), nn.Linear(96, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
x_val = torch.randn(48, 64)
total = 0
for step in range(400):
    x = torch.randn(48, 64)
    loss = model(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    total = total + model(x_val).pow(2).mean()    # a running validation loss that keeps each graph alive
print("mean validation loss", round(total.item() / 400, 4))
