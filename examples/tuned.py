"""Expected: compute; no num-workers or uint8-transfer first.

A tuned pipeline: uint8 images in shared memory, a light transform in 2 persistent forked workers
with prefetching, normalisation on the training side, and a model big enough to be the limit."""
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Images(Dataset):
    def __init__(self, n=48 * 20):
        self.images = torch.randint(0, 256, (n, 3, 32, 32), dtype=torch.uint8,
                                    generator=torch.Generator().manual_seed(0))

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        x = self.images[i]
        return (x.flip(-1) if i % 2 else x), i % 10          # cheap flip, stays uint8


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(64 * 16, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    loader = DataLoader(Images(), batch_size=48, shuffle=True, num_workers=2, persistent_workers=True,
                        prefetch_factor=4, multiprocessing_context="fork")
    for x, y in loader:
        x = x.float().div_(255).sub_(0.5).div_(0.25)
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"tuned: final loss {loss.item():.4f}")
