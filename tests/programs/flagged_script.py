"""A model-zoo-style training script: its own command line chooses mixed precision, compilation,
the memory layout and the DataLoader's workers. Each sample waits on a slow source (input-bound by
latency), so more workers are advised, through the script's own -j/--workers option."""
import argparse
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

parser = argparse.ArgumentParser(description="train a small classifier")
parser.add_argument("--epochs", type=int, default=1)
parser.add_argument("-b", "--batch-size", type=int, default=8, help="mini-batch size")
parser.add_argument("-j", "--workers", type=int, default=0, metavar="N", help="number of data loading workers")
parser.add_argument("--amp", action="store_true", help="use automatic mixed precision")
parser.add_argument("--amp-dtype", default="float16", choices=["float16", "bfloat16"], help="lower precision AMP dtype")
parser.add_argument("--torchcompile", action="store_true", help="compile the model with torch.compile")
parser.add_argument("--channels-last", action="store_true", help="use the channels_last memory layout")
args = parser.parse_args()


class Slow(Dataset):
    def __len__(self):
        return 8 * 24

    def __getitem__(self, i):
        time.sleep(0.012)
        return torch.rand(3, 16, 16, generator=torch.Generator().manual_seed(i)), i % 10


torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 16 * 16, 10))
if args.channels_last:
    model = model.to(memory_format=torch.channels_last)
if args.torchcompile:
    model = torch.compile(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
loader = DataLoader(Slow(), batch_size=args.batch_size, num_workers=args.workers)
dtype = torch.bfloat16 if args.amp_dtype == "bfloat16" else torch.float16
for _ in range(args.epochs):
    for x, y in loader:
        with torch.autocast("cpu", dtype=dtype, enabled=args.amp):
            loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
print("loss", round(loss.item(), 4))
