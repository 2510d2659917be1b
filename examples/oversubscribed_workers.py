"""Expected: input.cpu (contended), found by the training's own wait for a CPU.

A pipeline tuned to four workers on a two-core machine: the loop hardly waits for data and the
workers' share of the job's CPU is modest, but whenever they run, the training's intra-op threads
wait for a core; compute itself slows. The training threads' wait for a CPU is the evidence."""
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Augmented(Dataset):
    def __init__(self, n=16 * 100):
        self.images = torch.randint(0, 256, (n, 3, 32, 32), dtype=torch.uint8,
                                    generator=torch.Generator().manual_seed(0))

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        x = self.images[i].float() / 255
        for _ in range(25):
            x = (x + x.roll(1, dims=-1) + x.roll(1, dims=-2)) / 3
        return x, i % 10


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                          nn.Linear(1024, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(Augmented(), batch_size=16, shuffle=True, num_workers=4, persistent_workers=True)
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"oversubscribed_workers: final loss {loss.item():.4f}")
