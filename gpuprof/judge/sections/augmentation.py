"""Each DataLoader's random augmentation, as the probe read it from the dataset's source when the
loader was built (gpuprof.capture.probes.augmentation): the fixes that cache preprocessed samples read it
to keep random work online."""


def with_augmentation(dataloaders: list, events: list) -> list:
    """`dataloaders` with `augmentation` ({random, deterministic, checked}) on each loader the probe
    read, matched by loader id, else by dataset class. Loaders it did not read are left as they are."""
    by_id = {e.get("l"): e for e in events if e.get("l") is not None}
    by_class = {e.get("ds"): e for e in events if e.get("ds")}
    out = []
    for loader in dataloaders:
        event = by_id.get(loader.get("id")) or by_class.get(loader.get("dataset"))
        if event is None:
            out.append(loader)
            continue
        found = {"random": list(event.get("random") or []), "deterministic": list(event.get("deterministic") or []),
                 "checked": bool(event.get("checked"))}
        out.append(dict(loader, augmentation=found))
    return out


def random_parts(loader) -> list:
    """The random calls and transforms in a loader's per-sample path ([] when none or not read)."""
    return list(((loader or {}).get("augmentation") or {}).get("random") or [])
