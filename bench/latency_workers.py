"""How many waiting DataLoader workers a core holds before more stop paying: the bound behind
`num-workers.waiting-workers-per-core` (gpuprof/priors/input_fixes.py), which caps the workers
num-workers proposes for a latency-bound input.

The program differs from examples/remote_source.py (4 ms of waiting per sample, batches of 16):
each sample waits WAIT seconds (a request to a store, no CPU) and then parses a JSON record of
about 20 KB (some CPU), batches of 32, and a small MLP trains on them. It runs STEPS steps with 0,
2, 4, 8, 12 and 16 workers (torch.set_num_threads(1) beside workers, as the advice's change does),
in turns, ROUNDS times; the figure per count is the steps' rate against the inline one.

    python bench/latency_workers.py [--rounds R]
"""

import argparse
import os
import statistics
import subprocess
import sys

STEPS, WARM_UP, ROUNDS, WAIT = 30, 4, 3, 0.002
COUNTS = (0, 2, 4, 8, 12, 16)

CHILD = r"""
import json, sys, time
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

WAIT, STEPS, WARM_UP, workers = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
RECORD = json.dumps({"id": 0, "values": [i * 0.5 for i in range(1500)], "label": 3})

class Store(Dataset):
    def __len__(self):
        return 32 * (STEPS + WARM_UP + 2)

    def __getitem__(self, i):
        time.sleep(WAIT)
        row = json.loads(RECORD)
        return torch.tensor(row["values"][:256]), row["label"]

if workers:
    torch.set_num_threads(1)
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loader = DataLoader(Store(), batch_size=32, num_workers=workers)
for step, (x, y) in enumerate(loader):
    if step == WARM_UP:
        started = time.perf_counter()
    if step == WARM_UP + STEPS:
        break
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("steps_per_s", STEPS / (time.perf_counter() - started))
"""


def steps_per_second(workers: int) -> float:
    done = subprocess.run([sys.executable, "-c", CHILD, str(WAIT), str(STEPS), str(WARM_UP), str(workers)],
                          capture_output=True, text=True, timeout=600, check=True)
    return float(next(x for x in done.stdout.splitlines() if x.startswith("steps_per_s")).split()[1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    args = parser.parse_args()
    rates = {n: [] for n in COUNTS}
    for _ in range(args.rounds):
        for n in COUNTS:
            rates[n].append(steps_per_second(n))
    inline = statistics.median(rates[0])
    cores = os.cpu_count() or 1
    print(f"inline: {inline:.2f} steps/s on {cores} cores")
    for n in COUNTS[1:]:
        print(f"{n:>2} workers ({n / cores:.0f} a core): {statistics.median(rates[n]) / inline:.2f}x "
              f"(rounds {', '.join(f'{r / inline:.2f}' for r in rates[n])})")


if __name__ == "__main__":
    main()
