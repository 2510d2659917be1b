"""Expected: input.cpu; workers estimated with what shipping each batch between processes costs.

A tabular model trained on rows kept as Python dicts (as a DataFrame's iloc per row would give):
each sample is built in Python, the model is a small MLP, and a step takes a few milliseconds. More
DataLoader workers make batches in parallel, but each batch then crosses between processes
(pickled, queued, woken up for), a cost per batch that a step this short cannot hide."""
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FEATURES = 48


class Rows(Dataset):
    def __init__(self, n=6000):
        g = torch.Generator().manual_seed(0)
        values = torch.rand(n, FEATURES, generator=g).tolist()
        self.rows = [{f"f{j}": v[j] for j in range(FEATURES)} | {"label": i % 2} for i, v in enumerate(values)]

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        row = self.rows[i]
        x = torch.tensor([row[f"f{j}"] for j in range(FEATURES)], dtype=torch.float32)
        return (x - 0.5) / 0.29, row["label"]


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(FEATURES, 64), nn.ReLU(), nn.Linear(64, 2))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(2):
        for x, y in DataLoader(Rows(), batch_size=128, shuffle=True):
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    print(f"short_steps_tabular: final loss {loss.item():.4f}")
