"""Evaluation without a DataLoader of its own: every 10 steps the model goes to eval mode and runs
forward passes over held-out tensors under no_grad, then back to training (as hand-written loops
and nanoGPT-style estimate_loss functions that call model.eval() do)."""
import torch
from torch import nn

torch.manual_seed(0)
torch.set_num_threads(1)
model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(2048, 64), torch.randint(0, 10, (2048,))
held_out = torch.randn(4096, 64)


@torch.no_grad()
def estimate_loss():
    model.eval()
    total = 0.0
    for _ in range(20):
        total += float(model(held_out).logsumexp(1).mean())
    model.train()
    return total


for step in range(120):
    if step % 10 == 9:
        estimate_loss()
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("eval_mode_no_loader: done")
