"""The user's line for a DataLoader a framework rebuilt from theirs.

Lightning (under DDP, to add a distributed sampler) and accelerate (`prepare`) build a new DataLoader
from the one the user wrote, inside their own code: the new loader's first user frame is then
`trainer.fit(...)` or `accelerator.prepare(...)`, not the `DataLoader(...)` call (or the
`train_dataloader` method) where the user's arguments are, and where a fix goes. A loader built in a
library over a dataset an earlier loader of the user's own code already served is that loader
rebuilt: it keeps the user's line, and the framework's call is noted beside it; the framework that
rebuilt it is the loader's framework, whose terms its advice speaks, and the role its user's method
gave the first (a DataModule's `val_dataloader`) stays its role."""

import weakref

_by_dataset = weakref.WeakKeyDictionary()     # dataset -> where its first loader was built


def origin(loader, found: dict) -> dict:
    """`found` (gpuprof.capture.probes.where.locate's answer for this loader) with the user's own line of
    the loader it was rebuilt from, when a library rebuilt one; as it was otherwise."""
    try:
        dataset = loader.dataset
        known = _by_dataset.get(dataset)
        if known is None:
            if not found.get("built_in") or found.get("role_by_user"):
                _by_dataset[dataset] = dict(found)
            return found
        if found.get("built_in") and found.get("where") != known.get("where"):
            rebuilt = dict(found, where=known.get("where"), rebuilt_at=found.get("where"),
                           rebuilt_by=found.get("framework"), framework=found.get("framework"), built_in=None)
            if known.get("role") and not found.get("role"):     # rebuilt where no role method is on the stack
                rebuilt.update(role=known["role"], built_by=known.get("built_by"))
            return rebuilt
    except TypeError:           # a dataset that takes no weak reference
        pass
    return found
