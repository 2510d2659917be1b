"""What `gpuprof try` can change, and how each change reads on its command line and in its table.

A Variant is a label, the settings the probes apply (gpuprof.capture.probes.variants), and what it means for
the user: the fix it stands for, and whether it changes the data order, the random numbers drawn or
what the model trains on. The keys and their checks come from gpuprof.record.changes; which fixes
`try` can apply, and how each is labelled, from the fixes themselves (gpuprof.advise.fixes)."""

from gpuprof.advise import fixes
from gpuprof.errors import UsageProblem
from gpuprof.record import changes


class Variant:
    def __init__(self, label: str, settings: dict, fix_id: str = None, caution: str = None):
        self.label = label
        self.settings = dict(settings)
        self.fix_id = fix_id
        self.caution = caution        # what it changes besides speed (randomness, the data), or None

    @property
    def loader_settings(self) -> dict:
        """The settings given to a DataLoader (the process-wide thread count needs none)."""
        return {k: v for k, v in self.settings.items()
                if k in changes.SETTABLE and changes.KEYS[k].applies_to == changes.LOADER}

    def for_probes(self, loader: str) -> dict:
        """The settings the probes apply, aimed at the loader built at `loader` (file:line)."""
        return dict(self.settings, loader=loader)

    def to_dict(self) -> dict:
        return {"label": self.label, "settings": self.settings, "fix": self.fix_id, "caution": self.caution}

    def __repr__(self) -> str:
        return f"Variant({self.label!r}, {self.settings!r})"


def parse_set(items) -> list:
    """`--set num_workers=0,2,4 --set pin_memory=true` -> one Variant per value of each key (a sweep
    of one key at a time against the same baseline)."""
    variants = []
    for item in items or ():
        key, sep, values = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not values.strip():
            raise UsageProblem(f"--set {item!r}: write KEY=VALUE (or KEY=V1,V2,... for a sweep)")
        if key not in changes.SETTABLE:
            raise UsageProblem(f"--set {key}: not a setting try can change; choose one of {', '.join(changes.SETTABLE)}")
        declared = changes.KEYS[key]
        for text in values.split(","):
            try:
                value = declared.parse(text)
            except ValueError as exc:
                raise UsageProblem(f"--set {key}: {exc}")
            variants.append(Variant(f"{key}={declared.shown_value(value)}", {key: value}, caution=declared.caution))
    return variants


def input_ceiling() -> Variant:
    return Variant("input ceiling", {"ceiling": True},
                   caution="an experiment, not a fix: after the warm-up the model trains on the last 8 batches "
                           "again and again, so it learns something else; only its speed counts")


def _for_fix(fix, change: dict, label: str = None) -> Variant:
    """The variant that makes `change` for `fix`, labelled and cautioned as the fix declares."""
    if label is None:
        label = fix.variant_label(change) if fix.variant_label else f"{fix.id}: {changes.label(change)}"
    caution = fix.variant_caution(change) if fix.variant_caution else None
    return Variant(label, change, fix_id=fix.id, caution=caution)


def echo(factor: int) -> Variant:
    if factor < 2:
        raise UsageProblem(f"--echo must be 2 or more, not {factor}")
    change = {"echo": factor}
    return _for_fix(fixes.owner_of(change), change)


def hdf5_cache(nbytes: int) -> Variant:
    if nbytes < 1:
        raise UsageProblem(f"--hdf5-cache must be a positive number of bytes, not {nbytes}")
    change = {"hdf5_cache_bytes": nbytes, "hdf5_keep_handles": True}
    return _for_fix(fixes.owner_of(change), change, label=f"hdf5 cache {nbytes} B")


def unadvised(fix_id: str, report: dict):
    """The variant for a fix the user names that the baseline did not advise, where the fix can be
    tried without the advice's figures; else None."""
    fix = fixes.get(fix_id)
    change = fix.unadvised(report) if fix is not None and fix.unadvised is not None else None
    return _for_fix(fix, change) if change else None


def from_advice(item: dict) -> Variant:
    """The variant that makes exactly the change an advice item describes; UsageProblem when that
    change needs an edit try cannot make."""
    fix = fixes.get(item.get("id"))
    change = item.get("change")
    if fix is None or not fix.try_keys or not change:
        raise UsageProblem(f"fix {item.get('id')} cannot be tried without editing the program; try can apply "
                           f"{', '.join(f.id for f in fixes.tryable())}")
    return _for_fix(fix, change)

