"""The baseline run's report read as the facts the search starts from: the cores the job may use,
whether it has a GPU and a DataLoader, the settings in force today (the defaults torch applies where
the program passed none), whether its verdict is input-bound, and the advice's changes as seeds."""

from typing import NamedTuple, Optional

from gpuprof.record.lines import same_line
from gpuprof.commands.tune import knobs

#: What torch does with an argument the program did not pass (prefetch_factor: with workers).
DEFAULTS = {"num_workers": 0, "pin_memory": False, "prefetch_factor": 2, "persistent_workers": False,
            "cudnn_benchmark": False, "allow_tf32": False, "autocast": False, "echo": 1}


class ProgramFacts(NamedTuple):
    cores: int
    gpu: bool
    loader: Optional[dict]       # the report's dataloaders[0], or None
    threads: int                 # today's intra-op threads in the training process
    input_bound: bool            # the verdict names the input pipeline
    batch_size: Optional[int]

    @property
    def has_loader(self) -> bool:
        return self.loader is not None

    def current(self, key: str):
        """The value `key` has in the program as it is."""
        if key == "torch_threads":
            return self.threads
        if key == "batch_size":
            return self.batch_size
        value = (self.loader or {}).get(key)
        if key == "prefetch_factor" and not self.current("num_workers"):
            return None
        return DEFAULTS.get(key) if value is None else value


def facts_of(report: dict, target: str = None) -> ProgramFacts:
    """The facts, about the DataLoader built at `target` (`--loader FILE:LINE`) where given, else
    the one the report names first."""
    report = report or {}
    system = report.get("system") or {}
    loaders = [row for row in report.get("dataloaders") or [] if isinstance(row, dict)]
    chosen = [row for row in loaders if same_line(row.get("where"), target)] if target else []
    loader = (chosen or loaders or [None])[0]
    cores = int(system.get("cpu_count") or 1)
    threads = (loader or {}).get("torch_threads") or ((report.get("model") or {}).get("torch_threads")) or cores
    gpu = bool(report.get("cuda_devices")) or bool(system.get("gpus"))
    verdict = ((report.get("verdict") or {}).get("bottleneck") or "")
    size = (report.get("steps") or {}).get("batch_size") or (loader or {}).get("batch_size")
    return ProgramFacts(cores=max(1, cores), gpu=gpu, loader=loader, threads=int(threads),
                        input_bound=verdict.startswith("input."), batch_size=size)


def seeds_of(report: dict, searched: frozenset) -> list:
    """The advice's changes (in the report's order) made only of keys the search may set."""
    out = []
    for item in (report or {}).get("advice") or []:
        change = item.get("change") if isinstance(item, dict) else None
        if isinstance(change, dict) and change and set(change) <= searched:
            out.append(dict(change))
    return out


def searched_keys(facts: ProgramFacts, allowed: frozenset, only: frozenset = frozenset()) -> frozenset:
    """The keys this program's search may set: the safe knobs it can use, and the allowed ones (of
    `only`, where the user limited the search)."""
    out = set()
    for knob in knobs.SAFE + knobs.ALLOWABLE:
        if (not knob.safe and knob.key not in allowed) or (only and knob.key not in only):
            continue
        if (knob.needs_gpu and not facts.gpu) or (knob.needs_loader and not facts.has_loader):
            continue
        out.add(knob.key)
    return frozenset(out)


def left_out(facts: ProgramFacts, allowed: frozenset, only: frozenset = frozenset()) -> list:
    """Why a knob the user might expect is not searched here, one line each."""
    out = []
    for knob in knobs.SAFE + knobs.ALLOWABLE:
        if (not knob.safe and knob.key not in allowed) or (only and knob.key not in only):
            continue
        if knob.needs_gpu and not facts.gpu:
            out.append(f"{knob.key}: not searched, the run used no GPU")
        elif knob.needs_loader and not facts.has_loader:
            out.append(f"{knob.key}: not searched, the program built no DataLoader")
    return out
