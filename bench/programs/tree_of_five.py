"""A process tree of 1 + 4 workers that mostly sleep, for measuring the sampler's own cost."""
import multiprocessing as mp
import sys
import time


def worker(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        sum(range(2000))
        time.sleep(0.01)


if __name__ == "__main__":
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=worker, args=(seconds,)) for _ in range(4)]
    for p in procs:
        p.start()
    worker(seconds)
    for p in procs:
        p.join()
    print("tree done")
