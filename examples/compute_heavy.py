"""Expected: compute; no num-workers or uint8-transfer first.

A deep MLP on cheap in-memory data: the model, not the input pipeline, sets the pace."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
data = TensorDataset(torch.randn(64 * 25, 512), torch.randint(0, 10, (64 * 25,)))
layers = []
for _ in range(6):
    layers += [nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 512), nn.ReLU()]
model = nn.Sequential(*layers, nn.Linear(512, 10))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
loader = DataLoader(data, batch_size=64, shuffle=True, num_workers=0)
for x, y in loader:
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"compute_heavy: final loss {loss.item():.4f}")
