"""Expected: input.cpu, device-preprocessing or gpu-staging in the top three.

A recommender-style loop with no DataLoader: each step densifies sparse feature rows on the host,
one Python loop per row, before a small model trains on the dense batch."""
import torch
from torch import nn

FEATURES, BATCH = 8192, 64
torch.manual_seed(0)
rows = [torch.randint(0, FEATURES, (48,)) for _ in range(2048)]
labels = torch.rand(2048)
model = nn.Sequential(nn.Linear(FEATURES, 32), nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(40):
    dense = torch.zeros(BATCH, FEATURES)
    for r in range(BATCH):
        for col in rows[(step * BATCH + r) % len(rows)].tolist():
            dense[r, col] += 1.0
    target = labels[torch.arange(step * BATCH, (step + 1) * BATCH) % len(rows)]
    loss = nn.functional.mse_loss(model(dense).squeeze(1), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"sparse_to_dense: final loss {loss.item():.4f}")
