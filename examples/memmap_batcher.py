"""Expected: input.cpu, the batch construction inside the step found by sampling.

A GPT-style trainer with a hand-written batcher over a token file (np.memmap), in the "prefetch the
next batch while the GPU works" idiom: the next batch is built between the forward and the backward.
On a GPU the copy is asynchronous; on a CPU it is serial, and it costs a large share of every step
that no data wait shows (the time before the forward is nearly nil)."""
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


def get_batch(data, generator):
    """Random windows of the token file, one Python slice per row (as nanoGPT does), then a
    per-row cleanup pass over the tokens that costs as much again."""
    ix = torch.randint(len(data) - BLOCK - 1, (BATCH,), generator=generator)
    rows = [torch.from_numpy(data[i:i + BLOCK + 1].astype(np.int64)) for i in ix.tolist()]
    for row in rows:
        for _ in range(40):
            row.copy_(torch.where(row >= VOCAB, row % VOCAB, row))
    batch = torch.stack(rows)
    return batch[:, :-1].contiguous(), batch[:, 1:].contiguous()


if __name__ == "__main__":
    folder = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="gpuprof-tokens-")
    data = np.memmap(make_tokens(folder), dtype=np.uint16, mode="r")
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(0)
    model = nn.Sequential(nn.Embedding(VOCAB, 64), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, VOCAB))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = get_batch(data, generator)
    for step in range(200):
        logits = model(x)
        loss = nn.functional.cross_entropy(logits.view(-1, VOCAB), y.view(-1))
        x, y = get_batch(data, generator)        # the next batch, built while "the GPU works"
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    print(f"memmap_batcher: final loss {loss.item():.4f}")
