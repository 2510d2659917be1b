"""Expected: input.cpu, num-workers not first.

Two spawned workers run heavy per-sample transforms and, with the training process, keep every
core of a 2-core machine busy: more workers cannot help, cheaper batches can."""
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Heavy(Dataset):
    def __len__(self):
        return 16 * 30

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        x = torch.rand(3, 48, 48, generator=g)
        for _ in range(40):
            x = torch.tanh(x @ x.transpose(-1, -2) / 48) + 0.01 * x
        return x, i % 10


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 48 * 48, 64), nn.ReLU(), nn.Linear(64, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(Heavy(), batch_size=16, shuffle=True, num_workers=2, multiprocessing_context="spawn")
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"saturated_workers: final loss {loss.item():.4f}")
