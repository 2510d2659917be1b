"""A loop that evaluates every 10 steps in a function of its own (as nanoGPT's estimate_loss does
every eval_interval steps): a forward pass over held-out batches under no_grad, inside the loop."""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(64, 64), torch.randint(0, 10, (64,))
held_out = torch.randn(4096, 64)


@torch.no_grad()
def estimate_loss():
    total = 0.0
    for _ in range(40):
        total += float(model(held_out).logsumexp(1).mean())
    return total


for step in range(120):
    if step % 10 == 9:
        estimate_loss()
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("periodic_eval: done")
