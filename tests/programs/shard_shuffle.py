"""A streaming IterableDataset over "shards" (synthetic byte records standing for tar members), split
between two workers, with a shuffle buffer of 1,000 raw samples per worker and batching inside the
pipeline; the loader is iterated twice, once briefly as a smoke test and once to train. Each worker's
memory grows by its buffer: raw samples held until they are drawn."""
import random

import numpy as np
import torch
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

SAMPLE_BYTES = 48 * 48 * 3 * 8          # a raw sample as stored (about 55 KB)
SHARDS, PER_SHARD = 8, 1000


def shard_records(shard):
    rng = random.Random(shard)
    for _ in range(PER_SHARD):
        yield rng.randbytes(SAMPLE_BYTES)


def shuffled(records, size, seed, initial=100):
    """A shuffle buffer as streaming pipelines keep one: it starts yielding at `initial` samples and
    grows by one sample per sample drawn until it holds `size`."""
    rng = random.Random(seed)
    buffer = []
    records = iter(records)
    for record in records:
        buffer.append(record)
        if len(buffer) < size:
            extra = next(records, None)
            if extra is not None:
                buffer.append(extra)
        if len(buffer) >= initial:
            yield buffer.pop(rng.randrange(len(buffer)))
    while buffer:
        yield buffer.pop(rng.randrange(len(buffer)))


class ShardStream(IterableDataset):
    def __init__(self, batch_size=16, buffer=1000):
        self.batch_size, self.buffer = batch_size, buffer

    def __iter__(self):
        info = get_worker_info()
        mine = range(info.id, SHARDS, info.num_workers) if info else range(SHARDS)
        records = (r for shard in mine for r in shard_records(shard))
        batch = []
        for record in shuffled(records, self.buffer, seed=info.id if info else 0):
            batch.append(np.frombuffer(record, dtype=np.uint8)[:48 * 48 * 3].reshape(3, 48, 48))
            if len(batch) == self.batch_size:
                yield torch.from_numpy(np.stack(batch)).float() / 255
                batch = []


model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 48 * 48, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
loader = DataLoader(ShardStream(), batch_size=None, num_workers=2, multiprocessing_context="fork")
for i, x in enumerate(loader):          # a smoke test: the pipeline runs
    if i == 2:
        break
for x in loader:                        # training
    loss = model(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("done")
