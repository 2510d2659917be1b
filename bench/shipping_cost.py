"""What a batch costs the training process when a DataLoader worker made it: the queue read, the
unpickling and the rebuilding of its tensors from shared memory, for batches of a few shapes.

Each shape is loaded with one persistent worker that is always ahead (the dataset only indexes a
prepared tensor and the loop spends --compute seconds of pure-Python work a step), and the time the
training process spends in `next()` is the cost shipping adds to its step; the same loop with
`num_workers=0` gives what making the batch in process costs, for comparison. Figures are medians
over STEPS steps, and over ROUNDS rounds in turns. `--tabular` loads examples/short_steps_tabular.py's
own rows (batches of 128 rows built from Python dicts) instead of the prepared shapes; `--strategy`
sets torch's sharing strategy (file_descriptor is Linux's default: each tensor's descriptor is fetched
from the worker in a round trip; file_system names a shared file instead).

The prior `shipping.per-batch` (gpuprof/priors/step_model.py) is checked against this script: the
cost grows as steps shorten, so measure it at 8 ms steps and at 4 ms.

    python bench/shipping_cost.py [--rounds R] [--compute S] [--strategy NAME] [--tabular]
"""

import argparse
import os
import statistics
import sys
import time

STEPS, WARM_UP, ROUNDS, COMPUTE = 300, 20, 3, 0.004
SHAPES = {  # name: (batch size, one sample's shape, dtype name), each batch an (x, y) pair
    "tabular 64 x 8 float32 (2 KB)": (64, (8,), "float32"),
    "tabular 512 x 16 float32 (32 KB)": (512, (16,), "float32"),
    "tokens 32 x 128 int64 (32 KB)": (32, (128,), "int64"),
    "images 16 x 3 x 32 x 32 float32 (196 KB)": (16, (3, 32, 32), "float32"),
}


def busy(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def prepared(shape):
    """(a dataset that only indexes a prepared tensor, its batch size)."""
    import torch
    from torch.utils.data import Dataset

    batch, sample, dtype = shape

    class Prepared(Dataset):
        def __init__(self):
            self.rows = torch.zeros((batch * 8,) + sample, dtype=getattr(torch, dtype))

        def __len__(self):
            return batch * (STEPS + WARM_UP + 8)

        def __getitem__(self, i):
            return self.rows[i % len(self.rows)], i % 10

    return Prepared(), batch


def tabular_rows():
    """(examples/short_steps_tabular.py's own dataset, its batch size)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples"))
    from short_steps_tabular import Rows
    return Rows(n=128 * (STEPS + WARM_UP + 8)), 128


def per_batch(dataset, batch: int, workers: int, compute: float) -> float:
    from torch.utils.data import DataLoader

    loader = DataLoader(dataset, batch_size=batch, num_workers=workers,
                        persistent_workers=workers > 0, prefetch_factor=4 if workers else None)
    it = iter(loader)
    times = []
    for step in range(STEPS + WARM_UP):
        started = time.perf_counter()
        next(it)
        if step >= WARM_UP:
            times.append(time.perf_counter() - started)
        busy(compute)
    del it, loader
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--compute", type=float, default=COMPUTE, help="seconds of work a step (default 0.004)")
    parser.add_argument("--strategy", choices=("file_descriptor", "file_system"), default=None,
                        help="torch's sharing strategy (default: torch's own)")
    parser.add_argument("--tabular", action="store_true", help="examples/short_steps_tabular.py's rows")
    args = parser.parse_args()
    import torch.multiprocessing
    if args.strategy:
        torch.multiprocessing.set_sharing_strategy(args.strategy)
    print(f"steps of {args.compute * 1e3:g} ms, sharing strategy {torch.multiprocessing.get_sharing_strategy()}")
    cases = {"short_steps_tabular's rows, 128 x 48 float32 (24 KB)": tabular_rows} if args.tabular else \
        {name: (lambda shape=shape: prepared(shape)) for name, shape in SHAPES.items()}
    for name, make in cases.items():
        dataset, batch = make()
        shipped, made = [], []
        for _ in range(args.rounds):
            shipped.append(per_batch(dataset, batch, 1, args.compute))
            made.append(per_batch(dataset, batch, 0, args.compute))
        print(f"{name}: from a worker {statistics.median(shipped) * 1e6:.0f} µs a batch "
              f"(rounds {', '.join(f'{s * 1e6:.0f}' for s in shipped)}), made in process "
              f"{statistics.median(made) * 1e6:.0f} µs")


if __name__ == "__main__":
    main()
