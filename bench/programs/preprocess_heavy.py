"""A deterministic per-sample preparation (a smoothing filter on each image), made every epoch by
two DataLoader workers on a small CPU-only machine: the case for caching preprocessed samples.

CACHE = True is the hand-made cache-preprocessed change: every sample is prepared once, before
training, and later epochs read the prepared copy (the model trains on the same numbers)."""
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

CACHE = False


def prepare(image):
    x = image.float() / 255
    for _ in range(40):
        x = (x + x.roll(1, dims=-1) + x.roll(1, dims=-2)) / 3
    return x


class Images(Dataset):
    def __init__(self, n=16 * 60):
        self.images = torch.randint(0, 256, (n, 3, 32, 32), dtype=torch.uint8,
                                    generator=torch.Generator().manual_seed(0))
        self.prepared = torch.stack([prepare(image) for image in self.images]) if CACHE else None

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        x = self.prepared[i] if self.prepared is not None else prepare(self.images[i])
        return x, i % 10


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 512), nn.ReLU(), nn.Linear(512, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(Images(), batch_size=16, shuffle=True, num_workers=2, persistent_workers=True)
    for epoch in range(3):
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    print(f"preprocess_heavy: final loss {loss.item():.4f}")
