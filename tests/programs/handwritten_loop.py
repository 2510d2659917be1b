"""No DataLoader: each step densifies sparse rows on the CPU by hand, then trains a small model."""
import torch
from torch import nn

torch.manual_seed(0)
rows = [torch.randint(0, 4096, (64,)) for _ in range(512)]
model = nn.Sequential(nn.Linear(4096, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(50):
    dense = torch.zeros(32, 4096)
    for r in range(32):                      # per-row Python densify: slow host work
        for col in rows[(step * 32 + r) % 512].tolist():
            dense[r, col] += 1.0
    loss = model(dense).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("done", round(loss.item(), 6))
