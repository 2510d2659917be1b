"""Expected: input.disk, fix num-workers in the top two.

Each sample gathers 8 random 32 KiB records from a 128 MiB file with os.pread; every record is
dropped from the page cache (posix_fadvise DONTNEED) before it is read, as with a file far larger
than memory, so each read goes to the disk and the loop waits on its latency."""
import os
import sys
import tempfile

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

RECORD = 32 * 1024
RECORDS = 4096
PER_SAMPLE = 8
SAMPLES = 16 * 60


def make_file(folder):
    path = os.path.join(folder, "records.bin")
    block = os.urandom(RECORD * 64)
    with open(path, "wb") as handle:
        for _ in range(RECORDS // 64):
            handle.write(block)
        handle.flush()
        os.fsync(handle.fileno())
    return path


class Records(Dataset):
    def __init__(self, path):
        self.path = path
        self.fd = None

    def __len__(self):
        return SAMPLES

    def __getitem__(self, i):
        if self.fd is None:
            self.fd = os.open(self.path, os.O_RDONLY)
        parts = []
        for j in range(PER_SAMPLE):
            offset = ((i * 7919 + j * 104729) % RECORDS) * RECORD
            os.posix_fadvise(self.fd, offset, RECORD, os.POSIX_FADV_DONTNEED)
            parts.append(os.pread(self.fd, RECORD, offset)[:512])
        x = torch.frombuffer(bytearray(b"".join(parts)), dtype=torch.uint8).float() / 255
        return x, i % 10


if __name__ == "__main__":
    folder = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="gpuprof-disk-")
    path = make_file(folder)
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)   # start cold
    os.close(fd)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(512 * PER_SAMPLE, 64), nn.ReLU(), nn.Linear(64, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(Records(path), batch_size=16, shuffle=True, num_workers=0)
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    os.unlink(path)
    print(f"disk_random_reads: final loss {loss.item():.4f}")
