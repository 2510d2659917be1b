"""A GPT-style language model trained as people write one (nanoGPT's shape): token ids in host
memory, a random window per sample each step, pinned and copied non-blocking, causal attention
through scaled_dot_product_attention, AdamW, the loss printed every few steps. `--precision bf16`
runs the forward and the loss under torch.autocast(bfloat16); fp32 leaves torch's defaults (float32
matmuls without TF32).

    python transformer_lm.py [--precision fp32|bf16] [--steps 40]
"""
import argparse
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab, block, layers, d, heads):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(block, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.tok.weight

    def forward(self, idx, targets):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def get_batch(data, batch, block, device):
    ix = torch.randint(len(data) - block - 1, (batch,))
    x = torch.stack([torch.from_numpy(data[i:i + block].astype(np.int64)) for i in ix])
    y = torch.stack([torch.from_numpy(data[i + 1:i + 1 + block].astype(np.int64)) for i in ix])
    return x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)


def synthetic_step(precision="fp32", layers=12, d=768, heads=12, block=512, batch=16, vocab=32000, device="cuda"):
    """One training step of this model on random tokens already on the device, as a closure (for
    bench/real_gpu/cost_table.py)."""
    model = GPT(vocab, block, layers, d, heads).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    x = torch.randint(vocab, (batch, block), device=device)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=precision == "bf16"):
            loss = model(x, x)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return step


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--precision", choices=("fp32", "bf16"), default="fp32")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--d", type=int, default=768)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--block", type=int, default=512)
    args = parser.parse_args()
    device, vocab = "cuda", 32000
    data = np.random.default_rng(0).integers(0, vocab, 2_000_000, dtype=np.uint16)
    torch.manual_seed(0)
    model = GPT(vocab, args.block, args.layers, args.d, args.d // 64).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    for step in range(args.steps):
        if step == 5:
            started = time.perf_counter()
        x, y = get_batch(data, args.batch, args.block, device)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.precision == "bf16"):
            loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.3f}")
    print("done", float(loss.item()), f"{(args.steps - 5) / (time.perf_counter() - started):.2f} steps/s")


if __name__ == "__main__":
    main()
