"""A training loader that keeps up (cheap samples) and a validation loader whose samples are slow to
make (a CPU loop per sample, in the main process), run over a few batches every 5 training steps:
the validation pass is evaluation, reported apart, and never the training loop's data wait."""
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Samples(Dataset):
    def __init__(self, n, work):
        self.n, self.work = n, work

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        x = torch.full((32,), float(i % 7))
        for _ in range(self.work):
            x = torch.tanh(x + 0.1)
        return x, i % 2


def validate(model, loader):
    model.eval()
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += int((model(x).argmax(1) == y).sum())
    model.train()
    return correct


if __name__ == "__main__":
    torch.manual_seed(0)
    torch.set_num_threads(1)       # the same shares on a loaded machine as on an idle one
    model = nn.Sequential(nn.Linear(32, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    train_loader = DataLoader(Samples(1280, 0), batch_size=32, shuffle=True)
    val_loader = DataLoader(Samples(96, 150), batch_size=32)
    correct = 0
    for step, (x, y) in enumerate(train_loader):
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        for _ in range(2):
            model(torch.randn(256, 32)).sum().backward()
        if step % 5 == 4:
            correct = validate(model, val_loader)
    print(f"validate_every_few_steps: {correct}")
