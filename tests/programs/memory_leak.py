"""A training loop that adds each step's validation loss tensor to a running total: the total keeps
every step's graph (and the activations it saved) alive, and memory climbs step after step."""
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(512, 2048), nn.ReLU(), nn.Linear(2048, 2048), nn.ReLU(), nn.Linear(2048, 1))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
x_val = torch.randn(128, 512)
total_val = 0
for step in range(60):
    x = torch.randn(128, 512)
    loss = model(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    total_val += model(x_val).pow(2).mean()     # a running validation loss: keeps its graph alive
print("done", total_val.item())
