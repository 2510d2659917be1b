"""How much faster random reads from this machine's disk go when several are in flight: the bound
behind `num-workers.parallel-reads` (gpuprof/priors/input_fixes.py), which caps what more workers
can buy a disk-bound input.

A 256 MiB file of random bytes is written and synced; then READS random 32 KiB records are read
with os.pread by 1, 2, 4 and 8 threads at once (pread lets go of the GIL, as a DataLoader worker's
read does of its process), each record dropped from the page cache (posix_fadvise DONTNEED) just
before it is read, so every read goes to the disk. The figure for each count is the read rate
against one reader's, the median of ROUNDS rounds taken in turns.

    python bench/disk_queue.py [--rounds R] [--dir FOLDER]
"""

import argparse
import os
import random
import statistics
import tempfile
import threading
import time

RECORD, RECORDS, READS, ROUNDS = 32 * 1024, 8192, 1600, 3
COUNTS = (1, 2, 4, 8)


def make_file(folder: str) -> str:
    path = os.path.join(folder, "records.bin")
    block = os.urandom(RECORD * 64)
    with open(path, "wb") as handle:
        for _ in range(RECORDS // 64):
            handle.write(block)
        handle.flush()
        os.fsync(handle.fileno())
    return path


def rate(path: str, readers: int, seed: int) -> float:
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    offsets = [random.Random(seed).randrange(RECORDS) * RECORD for _ in range(READS)]
    chunks = [offsets[i::readers] for i in range(readers)]

    def read(mine):
        for offset in mine:
            os.posix_fadvise(fd, offset, RECORD, os.POSIX_FADV_DONTNEED)
            os.pread(fd, RECORD, offset)

    threads = [threading.Thread(target=read, args=(c,)) for c in chunks]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - started
    os.close(fd)
    return READS / seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--dir", default=None, help="where the file is written (default: the temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        path = make_file(folder)
        rates = {n: [] for n in COUNTS}
        for r in range(args.rounds):
            for n in COUNTS:
                rates[n].append(rate(path, n, seed=r * 10 + n))
    one = statistics.median(rates[1])
    print(f"one reader: {one:.0f} reads/s ({one * RECORD / 2**20:.1f} MiB/s)")
    for n in COUNTS[1:]:
        print(f"{n} readers: {statistics.median(rates[n]) / one:.2f}x one reader's rate "
              f"(rounds {', '.join(f'{x / one:.2f}' for x in rates[n])})")


if __name__ == "__main__":
    main()
