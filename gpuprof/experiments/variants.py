"""What `gpuprof try` can change, and how each change reads on its command line and in its table.

A Variant is a label, the settings the probes apply (gpuprof.probes.variants), and what it means for
the user: the line they would change, and whether it changes the data order, the random numbers
drawn or what the model trains on."""

from gpuprof.launch.errors import UsageProblem

#: `--set` keys: how to read a value, and what each changes beyond speed.
SETTABLE = {
    "num_workers": (int, None),
    "pin_memory": ("bool", None),
    "persistent_workers": ("bool", None),
    "prefetch_factor": (int, None),
    "torch_threads": (int, None),
    "batch_size": (int, "changes the optimisation (fewer, larger steps; scale the learning rate) and the "
                        "batches' contents"),
}

#: Fix ids `try` can apply exactly as the advice describes, from the advice's `change`.
APPLICABLE_FIXES = ("num-workers", "pin-memory", "persistent-workers", "batch-echoing", "hdf5-chunk-cache")


class Variant:
    def __init__(self, label: str, settings: dict, fix_id: str = None, caution: str = None):
        self.label = label
        self.settings = dict(settings)
        self.fix_id = fix_id
        self.caution = caution        # what it changes besides speed (randomness, the data), or None

    @property
    def loader_settings(self) -> dict:
        return {k: v for k, v in self.settings.items() if k in SETTABLE}

    def for_probes(self, loader: str) -> dict:
        """The settings the probes apply, aimed at the loader built at `loader` (file:line)."""
        return dict(self.settings, loader=loader)

    def to_dict(self) -> dict:
        return {"label": self.label, "settings": self.settings, "fix": self.fix_id, "caution": self.caution}

    def __repr__(self) -> str:
        return f"Variant({self.label!r}, {self.settings!r})"


def _value(key: str, text: str):
    kind = SETTABLE[key][0]
    text = text.strip()
    if kind == "bool":
        lowered = text.lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
        raise UsageProblem(f"--set {key}: {text!r} is not true or false")
    try:
        value = int(text)
    except ValueError:
        raise UsageProblem(f"--set {key}: {text!r} is not a whole number")
    low = 0 if key == "num_workers" else 1
    if value < low:
        raise UsageProblem(f"--set {key}: must be at least {low}, not {value}")
    return value


def parse_set(items) -> list:
    """`--set num_workers=0,2,4 --set pin_memory=true` -> one Variant per value of each key (a sweep
    of one key at a time against the same baseline)."""
    variants = []
    for item in items or ():
        key, sep, values = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not values.strip():
            raise UsageProblem(f"--set {item!r}: write KEY=VALUE (or KEY=V1,V2,... for a sweep)")
        if key not in SETTABLE:
            raise UsageProblem(f"--set {key}: not a setting try can change; choose one of {', '.join(SETTABLE)}")
        for text in values.split(","):
            value = _value(key, text)
            shown = str(value).lower() if isinstance(value, bool) else value
            variants.append(Variant(f"{key}={shown}", {key: value}, caution=SETTABLE[key][1]))
    return variants


def input_ceiling() -> Variant:
    return Variant("input ceiling", {"ceiling": True},
                   caution="an experiment, not a fix: after the warm-up the model trains on the last 8 batches "
                           "again and again, so it learns something else; only its speed counts")


def echo(factor: int) -> Variant:
    if factor < 2:
        raise UsageProblem(f"--echo must be 2 or more, not {factor}")
    return Variant(f"echo x{factor}", {"echo": factor}, fix_id="batch-echoing",
                   caution=f"each batch is trained on {factor} times in a row: fewer fresh samples per step, and "
                           "the data order and the random numbers drawn change")


def hdf5_cache(nbytes: int) -> Variant:
    if nbytes < 1:
        raise UsageProblem(f"--hdf5-cache must be a positive number of bytes, not {nbytes}")
    return Variant(f"hdf5 cache {nbytes} B", {"hdf5_cache_bytes": nbytes, "hdf5_keep_handles": True},
                   fix_id="hdf5-chunk-cache")


def from_advice(item: dict) -> Variant:
    """The variant that makes exactly the change an advice item describes; UsageProblem when that
    change needs an edit try cannot make."""
    fix_id = item.get("id")
    change = item.get("change")
    if fix_id not in APPLICABLE_FIXES or not change:
        raise UsageProblem(f"fix {fix_id} cannot be tried without editing the program; try can apply "
                           f"{', '.join(APPLICABLE_FIXES)}")
    if fix_id == "batch-echoing":
        variant = echo(int(change.get("echo", 2)))
    else:
        parts = ", ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in change.items()
                          if k != "hdf5_keep_handles")
        variant = Variant(f"{fix_id}: {parts}", change, fix_id=fix_id, caution=None)
    variant.fix_id = fix_id
    return variant
