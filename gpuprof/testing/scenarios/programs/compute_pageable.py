"""Expected: compute. A large bf16 MLP on the GPU; each step copies a small float32 batch from
pageable memory with a plain blocking `.to("cuda")`. CUDA syncs the stream before a pageable copy,
so the copy's host time is mostly the wait for the previous step's kernels, not copying."""
import argparse

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=60)
parser.add_argument("--batch", type=int, default=16384)
parser.add_argument("--hidden", type=int, default=8192)
parser.add_argument("--layers", type=int, default=6)
args = parser.parse_args()
device = "cuda"


class Batches(torch.utils.data.Dataset):
    """The same ready batch every step: the input costs nothing here."""

    def __init__(self):
        self.x = torch.randn(args.batch, 1024)

    def __len__(self):
        return args.steps

    def __getitem__(self, i):
        return self.x


def linear(n_in, n_out):
    return nn.Linear(n_in, n_out, device=device, dtype=torch.bfloat16)


blocks = [linear(1024, args.hidden), nn.ReLU()]
for _ in range(args.layers):
    blocks += [linear(args.hidden, args.hidden), nn.ReLU()]
model = nn.Sequential(*blocks, linear(args.hidden, 16))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
loader = torch.utils.data.DataLoader(Batches(), batch_size=None)
for x in loader:
    x = x.to(device)
    loss = model(x.to(torch.bfloat16)).float().pow(2).mean()
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
print("done", float(loss.item()))
