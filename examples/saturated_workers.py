"""Expected: input.cpu, num-workers not first.

Two spawned workers run heavy per-sample transforms and, with the training process, keep every
core of a 2-core machine busy: more workers cannot help, cheaper batches can."""
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

SIDE = 32


class Heavy(Dataset):
    """A per-sample filter bank: many small convolutions of a random image, as augmentation
    pipelines that blur, sharpen and jitter each sample on the CPU do."""

    def __init__(self):
        kernels = torch.Generator().manual_seed(1)
        self.filters = torch.randn(8, 3, 3, 3, generator=kernels) / 9

    def __len__(self):
        return 16 * 60

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        x = torch.rand(1, 3, SIDE, SIDE, generator=g)
        for _ in range(60):
            y = nn.functional.conv2d(x, self.filters, padding=1)
            x = 0.9 * x + 0.1 * torch.tanh(y[:, :3] - y[:, 3:6])
        return x[0], i % 10


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * SIDE * SIDE, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(Heavy(), batch_size=16, shuffle=True, num_workers=2, multiprocessing_context="spawn")
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"saturated_workers: final loss {loss.item():.4f}")
