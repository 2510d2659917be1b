"""multiprocessing Pool with a class defined in __main__, under the start method given as argv[1].

Maps again until both workers have run a task: a worker the pool terminates while it is still
starting never ran any Python code of its own, so only workers that worked are expected to register."""
import multiprocessing as mp
import os
import sys
import time


class Item:
    def __init__(self, value):
        self.value = value


def double(item):
    time.sleep(0.02)
    return Item(item.value * 2), os.getpid()


if __name__ == "__main__":
    ctx = mp.get_context(sys.argv[1])
    items = [Item(v) for v in range(6)]
    with ctx.Pool(2) as pool:
        results = pool.map(double, items, chunksize=1)
        workers = {pid for _, pid in results}
        while len(workers) < 2:
            workers |= {pid for _, pid in pool.map(double, items, chunksize=1)}
        print(sys.argv[1], [item.value for item, _ in results])
