"""torch warns from inside DataLoader code (pin_memory without an accelerator, too many workers):
the warnings must name the same file and line under gpuprof as without it."""
import warnings

import torch
from torch.utils.data import DataLoader, TensorDataset

warnings.simplefilter("always")
data = TensorDataset(torch.arange(32.0).reshape(16, 2))
for workers in (0, 2):
    loader = DataLoader(data, batch_size=4, pin_memory=True, num_workers=workers)
    print(sum(float(x.sum()) for (x,) in loader))
too_many = DataLoader(data, batch_size=4, num_workers=8)
print(len(next(iter(too_many))[0]))
