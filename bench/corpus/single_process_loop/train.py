"""Character-level MLP language model whose batches are built sample by sample in the training loop.

Adapted from karpathy/nanoGPT (MIT), train.py: no DataLoader; get_batch() opens the training text
as a fresh np.memmap on every call, draws random offsets and builds each sample's window in a Python
loop; the model is the character MLP of karpathy/makemore (MIT): the embeddings of the previous
CONTEXT characters, concatenated, through one hidden layer. Changed: the text is made up at start
and stored as raw ASCII, so each window is decoded and mapped to ids character by character as in
nanoGPT's shakespeare_char preparation, but per sample instead of once.

    python train.py [--steps N]
"""
import argparse
import os
import random
import tempfile

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

CACHE = False  # True: encode the whole text to ids once and gather the windows with tensor indexing

CONTEXT = 8
BATCH = 4096


def write_text(path, chars=2_000_000):
    rng = random.Random(0)
    words = ["the", "of", "and", "to", "in", "king", "queen", "sword", "night", "love", "thou", "hath", "shall",
             "speak", "lord", "what", "good", "death", "heart", "come", "my", "is", "not", "with", "be", "your"]
    parts, size = [], 0
    while size < chars:
        line = " ".join(rng.choices(words, k=rng.randint(4, 12)))
        line = line.capitalize() + rng.choice([".", ",", "!", "?", ";"]) + "\n"
        parts.append(line)
        size += len(line)
    with open(path, "w", encoding="ascii") as f:
        f.write("".join(parts))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    torch.manual_seed(0)

    folder = tempfile.mkdtemp()
    path = os.path.join(folder, "train.txt")
    write_text(path)
    with open(path, encoding="ascii") as f:
        chars = sorted(set(f.read()))
    stoi = {c: i for i, c in enumerate(chars)}
    vocab = len(chars)

    if CACHE:
        with open(path, encoding="ascii") as f:
            all_ids = torch.tensor([stoi[c] for c in f.read()], dtype=torch.long)
        offsets = torch.arange(CONTEXT)

    def get_batch():
        data = np.memmap(path, dtype=np.uint8, mode="r")
        ix = torch.randint(len(data) - CONTEXT - 1, (BATCH,))
        if CACHE:
            return all_ids[ix[:, None] + offsets], all_ids[ix + CONTEXT]
        xs, ys = [], []
        for i in ix.tolist():
            window = bytes(data[i:i + CONTEXT + 1]).decode("ascii")
            xs.append([stoi[c] for c in window[:-1]])
            ys.append(stoi[window[-1]])
        return torch.tensor(xs), torch.tensor(ys)

    model = nn.Sequential(nn.Embedding(vocab, 16), nn.Flatten(), nn.Linear(16 * CONTEXT, 128), nn.Tanh(), nn.Linear(128, vocab))
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)

    for step in range(1, args.steps + 1):
        x, y = get_batch()
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step % 100 == 0:
            print(f"step {step} loss {loss.item():.4f}", flush=True)
    os.remove(path)
    os.rmdir(folder)
    print(f"final loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
