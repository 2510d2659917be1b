"""A small causal language model whose Dataset tokenizes each document when it is fetched.

The tokenizer is adapted from karpathy/minbpe (MIT), minbpe/regex.py: text is split into chunks by
a GPT-2-style pattern, each chunk's UTF-8 bytes are merged pair by pair in the order the merges were
learnt. Here the merges are learnt at start from the made-up corpus (word counts rather than the
whole text), and the Dataset calls encode() in __getitem__, every time, in the training process
(num_workers=0). The model is a two-layer decoder trained with AdamW.

    python train.py [--steps N]
"""
import argparse
import itertools
import random
import re

import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset

CACHE = False  # True: encode every document once before training and index the token ids

SPLIT = re.compile(r"""'(?:[sdmt]|ll|ve|re)| ?[A-Za-z]+| ?[0-9]{1,3}| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+""")
MERGES = 200
SEQ = 64
DOCS = 2000


def make_corpus():
    """Made-up documents: sentences drawn from a syllable-built vocabulary with a skewed word frequency."""
    rng = random.Random(0)
    syllables = ["ka", "lo", "mi", "ter", "an", "shu", "ve", "ro", "di", "pel", "ost", "ing", "qua", "zer", "ne"]
    words = sorted({"".join(rng.choice(syllables) for _ in range(rng.randint(1, 4))) for _ in range(900)})
    cumulative = list(itertools.accumulate(1.0 / (rank + 3) for rank in range(len(words))))
    docs = []
    for _ in range(DOCS):
        sentences = []
        for _ in range(rng.randint(5, 9)):
            n = rng.randint(6, 16)
            sentence = " ".join(rng.choices(words, cum_weights=cumulative, k=n))
            if rng.random() < 0.3:
                sentence += f" {rng.randint(0, 999)}"
            sentences.append(sentence.capitalize() + rng.choice([".", ".", "!", "?", ", they're"]))
        docs.append(" ".join(sentences))
    return docs


def get_stats(ids, counts, weight=1):
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + weight


def merge(ids, pair, idx):
    out, i = [], 0
    while i < len(ids):
        if i < len(ids) - 1 and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(idx)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


class RegexBPE:
    def __init__(self, texts, merges):
        chunk_counts = {}
        for text in texts:
            for chunk in SPLIT.findall(text):
                chunk_counts[chunk] = chunk_counts.get(chunk, 0) + 1
        chunks = [(list(chunk.encode("utf-8")), n) for chunk, n in chunk_counts.items()]
        self.merges = {}
        for k in range(merges):
            stats = {}
            for ids, n in chunks:
                get_stats(ids, stats, n)
            if not stats:
                break
            pair = max(stats, key=stats.get)
            idx = 256 + k
            chunks = [(merge(ids, pair, idx) if pair[0] in ids else ids, n) for ids, n in chunks]
            self.merges[pair] = idx
        self.vocab_size = 256 + len(self.merges) + 1
        self.eot = self.vocab_size - 1

    def encode_chunk(self, data):
        ids = list(data)
        while len(ids) >= 2:
            stats = {}
            get_stats(ids, stats)
            pair = min(stats, key=lambda p: self.merges.get(p, float("inf")))
            if pair not in self.merges:
                break
            ids = merge(ids, pair, self.merges[pair])
        return ids

    def encode(self, text):
        ids = []
        for chunk in SPLIT.findall(text):
            ids.extend(self.encode_chunk(chunk.encode("utf-8")))
        return ids


class Documents(Dataset):
    def __init__(self, docs, tokenizer):
        self.docs, self.tokenizer = docs, tokenizer
        self.cached = [self.tokens(i) for i in range(len(docs))] if CACHE else None

    def __len__(self):
        return len(self.docs)

    def tokens(self, index):
        ids = self.tokenizer.encode(self.docs[index])[: SEQ + 1]
        ids += [self.tokenizer.eot] * (SEQ + 1 - len(ids))
        return torch.tensor(ids, dtype=torch.long)

    def __getitem__(self, index):
        ids = self.cached[index] if self.cached is not None else self.tokens(index)
        return ids[:-1], ids[1:]


class TinyGPT(nn.Module):
    def __init__(self, vocab, dim=64, heads=4, layers=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.zeros(SEQ, dim))
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.0, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(SEQ))

    def forward(self, idx):
        x = self.tok(idx) + self.pos[: idx.shape[1]]
        x = self.blocks(x, mask=self.mask, is_causal=True)
        return self.head(self.norm(x))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=150)
    args = parser.parse_args()
    torch.manual_seed(0)

    docs = make_corpus()
    tokenizer = RegexBPE(docs[:200], MERGES)
    dataset = Documents(docs, tokenizer)
    loader = DataLoader(dataset, batch_size=32, shuffle=True, num_workers=0, drop_last=True)

    model = TinyGPT(tokenizer.vocab_size)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)

    step = 0
    while step < args.steps:
        for x, y in loader:
            logits = model(x)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            step += 1
            if step % 50 == 0:
                print(f"step {step} loss {loss.item():.4f}", flush=True)
            if step >= args.steps:
                break
    print(f"final loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
