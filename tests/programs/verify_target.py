"""A DataLoader whose samples wait 25 ms each on a slow store that serves one request at a time (a
sleep under a lock every worker shares, no CPU), in front of a step that waits 50 ms on "the device"
(a sleep, no CPU): input-bound by design on any machine, however loaded, with speed-ups that sleeps
set rather than the cores, so that `run --verify`'s rounds agree and stop at the fewest. Its steps
(about 150 ms) are long enough that the 20-step window already spans 2 s (no planning run to
repeat); the input made free runs about 3x as fast, while workers only overlap the store with the
step (about 1.5x, however many), so the two speed-ups stand apart. One intra-op thread, as torchrun
starts ranks: on a machine other programs keep busy, fewer training threads would otherwise lead
the fixes, and their gain (none, here) takes the most rounds to tell."""
import multiprocessing
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class SlowStore(Dataset):
    def __init__(self):
        self.one_at_a_time = multiprocessing.Lock()

    def __len__(self):
        return 4 * 30

    def __getitem__(self, i):
        with self.one_at_a_time:
            time.sleep(0.025)
        return torch.full((16,), float(i % 7)), i % 3


if __name__ == "__main__":
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = nn.Linear(16, 3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(SlowStore(), batch_size=4, shuffle=False, num_workers=0)  # LOADER LINE
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        time.sleep(0.05)                # the step's device time: waited for, no CPU
        optimizer.step()
    print("done", round(loss.item(), 6))
