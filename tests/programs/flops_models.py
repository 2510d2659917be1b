"""Seeded training of a small model (mlp, cnn or transformer) on random data, printing each step's
loss: the FLOP count's accuracy and its invisibility are checked on it."""

import sys

import torch
from torch import nn

BATCH, STEPS = 8, 8


def build(kind):
    if kind == "mlp":
        return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 32)), (lambda: torch.randn(BATCH, 64)), 32
    if kind == "cnn":
        model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(),
                              nn.Flatten(), nn.Linear(16 * 16 * 16, 10))
        return model, (lambda: torch.randn(BATCH, 3, 16, 16)), 10
    return TinyLM(), (lambda: torch.randint(0, 100, (BATCH, 16))), 100


class TinyLM(nn.Module):
    def __init__(self, vocab=100, width=64, heads=4, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        layer = nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(width, vocab)

    def forward(self, ids):
        return self.head(self.encoder(self.embed(ids)))


def main(kind):
    torch.manual_seed(0)
    model, batch, classes = build(kind)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(STEPS):
        x = batch()
        out = model(x)
        target = torch.randint(0, classes, out.shape[:-1])
        loss = nn.functional.cross_entropy(out.reshape(-1, classes), target.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.10f}")
    print(f"next random {torch.rand(1).item():.10f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "transformer")
