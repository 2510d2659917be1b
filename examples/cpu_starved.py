"""Expected: input.cpu, fix num-workers first.

Per-sample CPU transforms (noise, blur, normalisation) in the main process (num_workers=0) feed a
small model: the training loop mostly waits for the next batch."""
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Augmented(Dataset):
    def __init__(self, n=640):
        self.images = torch.randint(0, 256, (n, 3, 32, 32), dtype=torch.uint8,
                                    generator=torch.Generator().manual_seed(0))

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        x = self.images[i].float() / 255
        g = torch.Generator().manual_seed(i)
        for _ in range(25):
            x = (x + 0.02 * torch.randn(x.shape, generator=g)).clamp(0, 1)
            x = (x + x.roll(1, dims=-1) + x.roll(1, dims=-2)) / 3
        return (x - 0.5) / 0.25, i % 10


torch.manual_seed(0)
model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 128), nn.ReLU(), nn.Linear(128, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
loader = DataLoader(Augmented(), batch_size=16, shuffle=True, num_workers=0)
for x, y in loader:
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"cpu_starved: final loss {loss.item():.4f}")
