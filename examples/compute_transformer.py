"""Expected: compute; model-side fixes (mixed precision where the CPU has bf16 instructions, compile).

A small GPT-style decoder trained on random tokens with AdamW: attention and matmuls set the pace."""
import torch
from torch import nn

torch.manual_seed(0)
VOCAB, CONTEXT, WIDTH, BATCH = 512, 64, 192, 16


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(WIDTH), nn.LayerNorm(WIDTH)
        self.attention = nn.MultiheadAttention(WIDTH, 4, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(WIDTH, 4 * WIDTH), nn.GELU(), nn.Linear(4 * WIDTH, WIDTH))

    def forward(self, x, mask):
        h = self.norm1(x)
        x = x + self.attention(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class TinyGPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, WIDTH)
        self.positions = nn.Parameter(torch.zeros(CONTEXT, WIDTH))
        self.blocks = nn.ModuleList(Block() for _ in range(3))
        self.head = nn.Linear(WIDTH, VOCAB)
        self.register_buffer("mask", torch.triu(torch.full((CONTEXT, CONTEXT), float("-inf")), diagonal=1))

    def forward(self, idx):
        x = self.tokens(idx) + self.positions
        for block in self.blocks:
            x = block(x, self.mask)
        return self.head(x)


model = TinyGPT()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
data = torch.randint(0, VOCAB, (BATCH * 40, CONTEXT + 1))
for step in range(40):
    batch = data[step * BATCH:(step + 1) * BATCH]
    logits = model(batch[:, :-1])
    loss = nn.functional.cross_entropy(logits.reshape(-1, VOCAB), batch[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"compute_transformer: final loss {loss.item():.4f}")
