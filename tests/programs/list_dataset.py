"""A Dataset that keeps its samples as a Python list of floats, read by two forked workers: reading
updates each float's reference count, so every page a worker touches becomes its own copy."""
import torch
from torch.utils.data import DataLoader, Dataset

PER_ITEM = 20_000


class ListOfFloats(Dataset):
    def __init__(self, n=3_000_000):
        self.values = [float(i) for i in range(n)]

    def __len__(self):
        return len(self.values) // PER_ITEM

    def __getitem__(self, i):
        return torch.tensor(sum(self.values[i * PER_ITEM:(i + 1) * PER_ITEM]))


model = torch.nn.Linear(1, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=1e-9)
loader = DataLoader(ListOfFloats(), batch_size=2, num_workers=2, multiprocessing_context="fork")
for epoch in range(2):
    for x in loader:
        loss = model(x.view(-1, 1)).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
print("done")
