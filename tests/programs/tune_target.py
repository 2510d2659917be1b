"""A DataLoader without workers whose samples wait on a slow store (20 ms each, no CPU), built by a
call over several lines with a comment: `gpuprof tune` finds more workers faster on any machine, and
its patch must edit this call and keep the comment. Prints what it trained on, the same whatever the
settings, so a check can compare the patched program's output with this one's."""
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class SlowStore(Dataset):
    def __len__(self):
        return 4 * 30

    def __getitem__(self, i):
        import time
        time.sleep(0.02)
        return torch.full((8,), float(i % 5)), i % 2


torch.manual_seed(0)
model = nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = DataLoader(  # LOADER LINE
    SlowStore(),
    batch_size=4,
    num_workers=0,  # one process: the store's waits add up
)
seen = 0
for x, y in loader:
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    seen += int(y.sum())
print("seen", seen, "loss", round(loss.item(), 4))
