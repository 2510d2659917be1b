"""The registry: every bottleneck gpuprof can name, one module each, in the order they are tried.

Adding a bottleneck is one module in this package and one line below (docs/contributing.md,
"Adding a bottleneck"). Everything outside this package refers to a bottleneck through these
constants (`bottlenecks.INPUT_CPU.id`), never by its id string."""

import importlib

from gpuprof.judge.verdict.bottleneck import FALLBACK, Bottleneck

_DECLARED: list[Bottleneck] = []


def _declare(module: str):
    """The bottleneck the module (named relative to this package) declares, registered in turn."""
    bottleneck = importlib.import_module(module, __name__).BOTTLENECK
    _DECLARED.append(bottleneck)
    return bottleneck


#: One module a line, in the order they are tried (leading ones first; ties keep this order).
MEMORY_OOM = _declare(".memory_oom")
MEMORY_SHM = _declare(".memory_shm")
COMM = _declare(".comm")
INPUT_ENV = _declare(".input_env")
INPUT_CPU = _declare(".input_cpu")
INPUT_DISK = _declare(".input_disk")
INPUT_LATENCY = _declare(".input_latency")
TRANSFER_H2D = _declare(".transfer_h2d")
HOST_OVERHEAD = _declare(".host_overhead")
COMPUTE = _declare(".compute")
EVALUATION = _declare(".evaluation_loop")
SETUP = _declare(".setup")

ALL = tuple(_DECLARED)
_BY_ID = {bottleneck.id: bottleneck for bottleneck in ALL}

#: The bottlenecks of the input pipeline: whatever makes the loop wait for its next batch.
INPUT = (INPUT_CPU, INPUT_DISK, INPUT_LATENCY)
INPUT_IDS = tuple(bottleneck.id for bottleneck in INPUT)


def get(bottleneck_id):
    """The bottleneck with this id, or None."""
    return _BY_ID.get(bottleneck_id)


def ids() -> tuple:
    return tuple(_BY_ID)


def in_tier(tier: str) -> tuple:
    return tuple(bottleneck for bottleneck in ALL if bottleneck.tier == tier)


def rules() -> tuple:
    """Every rule of the step verdict, in registry order."""
    return tuple(rule for bottleneck in ALL for rule in bottleneck.rules)


def says_nothing_else(bottleneck_id) -> bool:
    """A verdict that only states that nothing else is the limit (or no verdict at all)."""
    found = get(bottleneck_id)
    return bottleneck_id is None or (found is not None and found.tier == FALLBACK)

