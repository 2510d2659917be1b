"""A model wrapped in nn.DataParallel (on a machine without GPUs it runs the module as is), fed by a
DataLoader whose batches take CPU work."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
data = TensorDataset(torch.randn(1024, 128), torch.randint(0, 10, (1024,)))
model = nn.DataParallel(nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 10)))  # DATA PARALLEL LINE
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = DataLoader(data, batch_size=32, shuffle=True)
for epoch in range(2):
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
print("done", round(loss.item(), 6))
