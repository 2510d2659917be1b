"""A DataLoader whose samples wait on a slow store (8 ms each, no CPU): input-bound on any machine,
however loaded, so `gpuprof try` can be checked without timing flakes. Writes a results file next to
itself only when asked (argv[1]), to show that try leaves the user's files as the program leaves them."""
import sys
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class SlowStore(Dataset):
    def __len__(self):
        return 4 * 60

    def __getitem__(self, i):
        time.sleep(0.008)
        return torch.full((16,), float(i % 7)), i % 3


torch.manual_seed(0)
model = nn.Linear(16, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = DataLoader(SlowStore(), batch_size=4, shuffle=False, num_workers=0)  # LOADER LINE
for x, y in loader:
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
if len(sys.argv) > 1:
    with open(sys.argv[1], "a") as out:
        out.write("finished\n")
print("done", round(loss.item(), 6))
