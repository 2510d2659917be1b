"""Expected: compute; channels-last offered (convolutions fed NCHW images), and compile.

A small CNN on in-memory images: its convolutions, not the input pipeline, set the pace."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
images = TensorDataset(torch.randn(16 * 30, 3, 48, 48), torch.randint(0, 10, (16 * 30,)))
model = nn.Sequential(
    nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
loader = DataLoader(images, batch_size=16, shuffle=True)
for x, y in loader:
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"compute_cnn: final loss {loss.item():.4f}")
