"""The settings `gpuprof tune` searches, and why each may be kept without changing what the program
computes. Safe knobs are searched always (those that need a GPU or a DataLoader only where there is
one); the others change numerics or the schedule and are searched only when `--allow` names them,
and every output says what they change. The keys are `try`'s (gpuprof.record.changes): the probes
apply them inside the program, so no file is edited while searching."""

from typing import NamedTuple

from gpuprof.errors import UsageProblem
from gpuprof.record import changes


class Knob(NamedTuple):
    key: str
    safe: bool              # keeps what is computed: searched without --allow
    why: str                # why it is safe, or what it changes
    needs_gpu: bool = False
    needs_loader: bool = False


SAFE = (
    Knob("num_workers", True, "the same samples in the same order, made in worker processes (random numbers a "
                              "Dataset draws itself come from each worker's seed)", needs_loader=True),
    Knob("pin_memory", True, "batches land in page-locked memory, so copies to the GPU can overlap; the same values",
         needs_gpu=True, needs_loader=True),
    Knob("prefetch_factor", True, "more batches made ahead per worker; the same batches", needs_loader=True),
    Knob("persistent_workers", True, "workers kept between epochs instead of started again; the same batches",
         needs_loader=True),
    Knob("torch_threads", True, "the training process's intra-op threads: the same operations (a sum split over "
                                "fewer threads may round its last bit differently)"),
    Knob("cudnn_benchmark", True, "cuDNN times its convolution algorithms once and keeps the fastest; the same "
                                  "model up to float rounding", needs_gpu=True),
)
ALLOWABLE = (
    Knob("allow_tf32", False, changes.KEYS["allow_tf32"].caution, needs_gpu=True),
    Knob("autocast", False, "mixed precision: " + changes.KEYS["autocast"].caution),
    Knob("echo", False, "batch echoing: each batch is trained on twice in a row, so fewer fresh samples per step",
         needs_loader=True),
    Knob("batch_size", False, changes.KEYS["batch_size"].caution + "; compared per sample, not per step",
         needs_loader=True),
)
BY_KEY = {knob.key: knob for knob in SAFE + ALLOWABLE}


def _key(name: str) -> str:
    """A setting's key from its name, or from the id of the fix that sets it alone (`mixed-precision`)."""
    from gpuprof.advise import fixes
    name = name.strip().lower()
    fix = fixes.get(name)
    if fix is not None and len(fix.try_keys) == 1:
        return fix.try_keys[0]
    return name.replace("-", "_")


def parse_allow(items) -> frozenset:
    """`--allow autocast,echo --allow batch_size` -> the keys; UsageProblem for a name not allowable."""
    allowed = set()
    for item in items or ():
        for name in item.split(","):
            key = _key(name)
            if not key:
                continue
            if key in BY_KEY and BY_KEY[key].safe:
                raise UsageProblem(f"--allow {name.strip()}: {key} keeps what is computed and is searched anyway; "
                                   f"--allow takes {', '.join(k.key for k in ALLOWABLE)}")
            if key not in BY_KEY:
                raise UsageProblem(f"--allow {name.strip()}: not a setting tune can change; "
                                   f"--allow takes {', '.join(k.key for k in ALLOWABLE)}")
            allowed.add(key)
    return frozenset(allowed)


def parse_only(items, allowed: frozenset) -> frozenset:
    """`--only num_workers,torch_threads` -> the keys the search is limited to (empty: no limit)."""
    keys = set()
    for item in items or ():
        for name in item.split(","):
            key = _key(name)
            if not key:
                continue
            if key not in BY_KEY:
                raise UsageProblem(f"--only {name.strip()}: not a setting tune can change; choose from "
                                   f"{', '.join(BY_KEY)}")
            if not BY_KEY[key].safe and key not in allowed:
                raise UsageProblem(f"--only {key}: it changes numerics or the schedule; name it with --allow too")
            keys.add(key)
    return frozenset(keys)


def unsafe_in(combination: dict) -> list:
    """The knobs of a combination that change numerics or the schedule, for the output's words."""
    return [BY_KEY[key] for key in combination if key in BY_KEY and not BY_KEY[key].safe]
