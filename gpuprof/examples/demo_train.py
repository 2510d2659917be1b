"""gpuprof demo: a small training loop whose DataLoader does heavy per-sample work on the CPU in a
single process, so the model mostly waits for data. Makes its own data; needs only torch (and runs a
pure-Python stand-in when torch is not installed)."""

import math
import sys
import time

STEPS = 60


def with_torch():
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, Dataset

    class Augmented(Dataset):
        """Per-sample CPU transforms: noise, blur-like smoothing, normalisation."""

        def __init__(self, n=STEPS * 16):
            generator = torch.Generator().manual_seed(0)
            self.images = torch.randint(0, 256, (n, 3, 32, 32), dtype=torch.uint8, generator=generator)

        def __len__(self):
            return len(self.images)

        def __getitem__(self, i):
            x = self.images[i].float() / 255
            for _ in range(30):
                x = (x + 0.01 * torch.sin(x * 7.0)).clamp(0, 1)
                x = (x + x.roll(1, dims=-1) + x.roll(-1, dims=-1)) / 3
            return x, int(i % 10)

    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 64), nn.ReLU(), nn.Linear(64, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    loader = DataLoader(Augmented(), batch_size=16, shuffle=True, num_workers=0)
    for step, (x, y) in enumerate(loader):
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"demo: {step + 1} steps, final loss {loss.item():.4f}")


def without_torch():
    total = 0.0
    for step in range(STEPS):
        batch = [math.sin(i) for i in range(20000)]          # "preprocessing" on the CPU
        time.sleep(0.01)                                       # "the model"
        total += sum(batch)
    print(f"demo: {STEPS} steps (torch not installed: a pure-Python stand-in), checksum {total:.3f}")


if __name__ == "__main__":
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        without_torch()
        sys.exit(0)
    with_torch()
