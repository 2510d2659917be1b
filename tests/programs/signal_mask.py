"""Prints the signals blocked at start (plain python: none), then trains from a waiting loader whose
persistent workers the interpreter ends by SIGTERM at exit."""
import signal
import time

print("blocked:", sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])), flush=True)

import torch  # noqa: E402
from torch import nn  # noqa: E402
from torch.utils.data import DataLoader, Dataset  # noqa: E402


class Slow(Dataset):
    def __len__(self):
        return 4 * 40

    def __getitem__(self, i):
        time.sleep(0.005)
        return torch.full((8,), float(i % 5)), i % 2


model = nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = DataLoader(Slow(), batch_size=4, num_workers=0)
for x, y in loader:
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
