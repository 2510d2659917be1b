"""A job that spends much of its run building its dataset (argv[1] seconds, default 4, in a
function of its own) before a short DataLoader-fed training loop (argv[2] seconds, by default as
long as the build)."""
import sys
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

SETUP_S = float(sys.argv[1]) if len(sys.argv) > 1 else 4.0
TRAIN_S = float(sys.argv[2]) if len(sys.argv) > 2 else SETUP_S


def build_dataset(seconds: float) -> TensorDataset:
    """Stands for tokenising a corpus: slow, and done again on every run."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.01)
    torch.manual_seed(0)
    return TensorDataset(torch.randn(8 * 100, 8), torch.zeros(8 * 100, dtype=torch.long))


def train(dataset, seconds: float) -> None:
    model = nn.Linear(8, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(dataset, batch_size=8)
    per_step = seconds / len(loader)
    for x, y in loader:
        end = time.perf_counter() + per_step
        while time.perf_counter() < end:     # busy "compute" for a steady step time
            pass
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    train(build_dataset(SETUP_S), TRAIN_S)
    print("slow setup done")
