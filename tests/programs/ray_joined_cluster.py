"""A training job that joins a Ray cluster already running (RAY_ADDRESS set, as production runs Ray):
its two training tasks are started by the cluster's raylets, one CPU each, and may land on any node.
Each trains a small model from a DataLoader whose dataset sleeps per batch (an input-bound loop) and
returns its final loss, printed by the driver in task order."""
import os
import time

import ray
import torch
from torch.utils.data import DataLoader, Dataset


class Slow(Dataset):
    def __len__(self):
        return 160

    def __getitem__(self, i):
        time.sleep(0.002)
        g = torch.Generator().manual_seed(i)
        return torch.randn(32, generator=g), torch.randn(1, generator=g)


@ray.remote(num_cpus=1)
def train(seed):
    torch.manual_seed(seed)
    model = torch.nn.Linear(32, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(2):
        for x, y in DataLoader(Slow(), batch_size=8):
            loss = torch.nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return round(loss.item(), 6)


ray.init(address=os.environ.get("RAY_ADDRESS"), log_to_driver=False)
print("losses", ray.get([train.remote(seed) for seed in range(2)]))
