"""A training loader whose batches cost CPU, and a test loader that runs after each epoch with a
forward pass over every test batch and more forward passes (about a fifth of the run, so that it stays
well clear of 5% when another program takes a core): the evaluation sits inside the measured steps."""
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Slow(Dataset):
    def __init__(self, n, work):
        self.n, self.work = n, work

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        x = torch.full((32,), float(i % 7))
        for _ in range(self.work):
            x = torch.tanh(x + 0.1)
        return x, i % 2


def make_loader(n, work, shuffle):
    return DataLoader(Slow(n, work), batch_size=16, shuffle=shuffle)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    train = make_loader(640, 60, True)
    test = DataLoader(Slow(640, 20), batch_size=16)
    for epoch in range(3):
        for x, y in train:
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            correct = sum(int((model(x).argmax(1) == y).sum()) for x, y in test)
            for _ in range(80):
                model(torch.randn(256, 32))
    print(f"eval_each_epoch: {correct}")
