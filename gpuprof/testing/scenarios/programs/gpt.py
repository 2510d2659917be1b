"""A GPT-style language model (12 layers, 768 wide, 16 x 512 tokens, 134M parameters) trained as
nanoGPT does: token windows sampled from host memory, pinned and copied non-blocking, causal attention
through scaled_dot_product_attention, AdamW, gradient clipping. `--precision bf16` runs the forward
and the loss under torch.autocast(bfloat16); fp32 leaves torch's defaults (float32 matmuls without TF32).

Expected on an H100: compute either way (an H200 measured 136 ms a step in fp32, the GPU busy 99% of
it, and 27.6 ms under bf16 autocast, 72%: bench/real_gpu/results, the host's launches close behind at
16 sequences a step; at 64 the device has four times the work and the host the same); in fp32, TF32 and mixed
precision offered, their ranges holding what `try` measured there (3.10x and 5.68x)."""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--precision", choices=("fp32", "bf16"), default="fp32")
parser.add_argument("--steps", type=int, default=12)
parser.add_argument("--batch", type=int, default=16)
args = parser.parse_args()


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
    def __init__(self, vocab=32000, block=512, layers=12, d=768):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(block, d)
        self.blocks = nn.ModuleList(Block(d, d // 64) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.tok.weight

    def forward(self, idx, targets):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def get_batch(data, batch=16, block=512):
    ix = np.random.randint(0, len(data) - block - 1, batch)
    x = torch.from_numpy(np.stack([data[i:i + block] for i in ix]).astype(np.int64))
    y = torch.from_numpy(np.stack([data[i + 1:i + 1 + block] for i in ix]).astype(np.int64))
    return x.pin_memory().to("cuda", non_blocking=True), y.pin_memory().to("cuda", non_blocking=True)


data = np.random.default_rng(0).integers(0, 32000, 1_000_000, dtype=np.uint16)
torch.manual_seed(0)
model = GPT().to("cuda")
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
for step in range(args.steps):
    x, y = get_batch(data, args.batch)
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.precision == "bf16"):
        loss = model(x, y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    if step % 5 == 0:
        print(f"step {step} loss {loss.item():.3f}")
print("done", float(loss.item()))
