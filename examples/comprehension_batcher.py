"""Expected: input.cpu, the batch built in list comprehensions found by sampling.

nanoGPT's get_batch builds x and y in list comprehensions, one Python slice per row. On Python 3.11
each comprehension runs in a frame of its own, and here each row also goes through a helper
(`clean`): the time is the batch's, though the innermost frames are `<listcomp>` and `clean`. The
data-making function owns the frames it calls, so the sampled data share counts all of it."""
import os
import sys
import tempfile

import numpy as np
import torch
from torch import nn

BLOCK, BATCH, VOCAB = 64, 16, 256


def make_tokens(folder):
    path = os.path.join(folder, "train.bin")
    np.random.default_rng(0).integers(0, VOCAB, 400_000, dtype=np.uint16).tofile(path)
    return path


def clean(row):
    for _ in range(50):
        row = torch.where(row >= VOCAB, row % VOCAB, row)
    return row


def get_batch(data, generator):
    ix = torch.randint(len(data) - BLOCK - 1, (BATCH,), generator=generator).tolist()
    x = torch.stack([clean(torch.from_numpy(data[i:i + BLOCK].astype(np.int64))) for i in ix])
    y = torch.stack([clean(torch.from_numpy(data[i + 1:i + 1 + BLOCK].astype(np.int64))) for i in ix])
    return x, y


if __name__ == "__main__":
    folder = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="gpuprof-tokens-")
    data = np.memmap(make_tokens(folder), dtype=np.uint16, mode="r")
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(0)
    model = nn.Sequential(nn.Embedding(VOCAB, 128), nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, VOCAB))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = get_batch(data, generator)
    for step in range(400):
        logits = model(x)
        loss = nn.functional.cross_entropy(logits.view(-1, VOCAB), y.view(-1))
        x, y = get_batch(data, generator)        # the next batch, between forward and backward as nanoGPT does
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    print(f"comprehension_batcher: final loss {loss.item():.4f}")
