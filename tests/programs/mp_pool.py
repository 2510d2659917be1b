"""multiprocessing Pool with a class defined in __main__, under the start method given as argv[1]."""
import multiprocessing as mp
import sys


class Item:
    def __init__(self, value):
        self.value = value


def double(item):
    return Item(item.value * 2)


if __name__ == "__main__":
    ctx = mp.get_context(sys.argv[1])
    with ctx.Pool(2) as pool:
        print(sys.argv[1], [i.value for i in pool.map(double, [Item(v) for v in range(6)])])
