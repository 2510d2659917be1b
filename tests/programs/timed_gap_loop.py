"""No DataLoader: each of 400 steps prepares its batch by hand for a varying time (1 to 3 ms of
sleep and list work) before the forward, and writes to the file named by argv[1] how long each
step waited between the previous optimizer step's return and its own forward (the first step: from
the loop's start), so that the report's before-first-forward data wait can be checked against it."""
import json
import sys
import time

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
waits = []
ended = None
for step in range(400):
    began = time.perf_counter() if ended is None else ended
    time.sleep(0.001 * (1 + step % 3))
    batch = torch.tensor([[float((step + i) % 7) for i in range(8)] for _ in range(4)])
    waits.append(time.perf_counter() - began)
    loss = model(batch).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    ended = time.perf_counter()
with open(sys.argv[1], "w") as out:
    json.dump(waits, out)
print("done")
