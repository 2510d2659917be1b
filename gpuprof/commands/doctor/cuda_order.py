"""The GPUs a CUDA program started here may use, and the numbers CUDA gives them, worked out from
NVML's list and the environment when torch cannot be asked (no torch, or a torch without CUDA).

Follows the CUDA Programming Guide, "CUDA Environment Variables" (CUDA_VISIBLE_DEVICES,
CUDA_DEVICE_ORDER): unset, every device is visible; empty, none is; otherwise a comma-separated list
of indices, GPU UUIDs or unique UUID prefixes ("GPU-8932f937"), and MIG devices by their "MIG-"
UUID, enumerated in the list's order, where the first entry that names no device ends the list.
Indices follow CUDA_DEVICE_ORDER: PCI_BUS_ID is nvidia-smi's (and NVML's) order; the default,
FASTEST_FIRST, puts faster devices first, which is NVML's order only where the GPUs are alike."""


def cuda_devices(gpus: list, visible=None, order=None) -> tuple:
    """([{"cuda_index", "uuid", "name", "nvml_index", "mig"}], [notes]) for NVML's `gpus` (as
    nvml_facts.read_nvml lists them), CUDA_VISIBLE_DEVICES `visible` (None: unset) and
    CUDA_DEVICE_ORDER `order`. A GPU in MIG mode offers its MIG devices in its place."""
    notes = []
    candidates = enumerable(gpus)
    if (order or "FASTEST_FIRST").upper() != "PCI_BUS_ID" and len({g.get("name") for g in gpus}) > 1:
        notes.append("the GPUs differ and CUDA_DEVICE_ORDER is FASTEST_FIRST: CUDA may number them unlike "
                     "nvidia-smi (set CUDA_DEVICE_ORDER=PCI_BUS_ID for nvidia-smi's numbering)")
    if visible is None:
        chosen = candidates
    else:
        chosen, stop = select(candidates, gpus, visible)
        if stop is not None:
            notes.append(f"CUDA_VISIBLE_DEVICES entry {stop!r} names no device here: CUDA ignores it and every "
                         "entry after it")
    return [dict(device, cuda_index=i) for i, device in enumerate(chosen)], notes


def enumerable(gpus: list) -> list:
    """The devices CUDA can enumerate, in NVML's order: each GPU, or each MIG device of a GPU in MIG mode."""
    out = []
    for gpu in gpus:
        if gpu.get("mig") and gpu.get("mig_instances"):
            out.extend({"uuid": m.get("uuid"), "name": f"{gpu.get('name')} MIG {m.get('gpu_instance_id')}",
                        "nvml_index": gpu["index"], "mig": True} for m in gpu["mig_instances"])
        elif not gpu.get("mig"):
            out.append({"uuid": gpu.get("uuid"), "name": gpu.get("name"), "nvml_index": gpu["index"], "mig": False})
    return out


def select(candidates: list, gpus: list, visible: str) -> tuple:
    """(the devices CUDA_VISIBLE_DEVICES names, in its order; the entry that ended the list or None)."""
    chosen = []
    for entry in (part.strip() for part in visible.split(",")) if visible.strip() else ():
        found = _lookup(entry, candidates, gpus)
        if found is None:
            return chosen, entry
        if found not in chosen:
            chosen.append(found)
    return chosen, None


def _lookup(entry: str, candidates: list, gpus: list):
    if entry.lstrip("+").isdigit():
        index = int(entry)
        by_gpu = [c for c in candidates if c["nvml_index"] == index and not c["mig"]]
        return by_gpu[0] if by_gpu else None
    if entry.upper().startswith("MIG-"):
        return _mig_entry(entry, candidates, gpus)
    if entry.upper().startswith("GPU-"):
        matches = [c for c in candidates if not c["mig"] and (c.get("uuid") or "").lower().startswith(entry.lower())]
        return matches[0] if len(matches) == 1 else None
    return None


def _mig_entry(entry: str, candidates: list, gpus: list):
    """A MIG device by its UUID (or a unique prefix), or in the older form MIG-GPU-<uuid>/<gi>/<ci>."""
    if entry.upper().startswith("MIG-GPU-") and "/" in entry:
        parent, _, rest = entry[4:].partition("/")
        instance = rest.split("/")[0]
        for gpu in gpus:
            if (gpu.get("uuid") or "").lower() == parent.lower():
                for m in gpu.get("mig_instances") or []:
                    if str(m.get("gpu_instance_id")) == instance:
                        return next((c for c in candidates if c.get("uuid") == m.get("uuid")), None)
        return None
    matches = [c for c in candidates if c["mig"] and (c.get("uuid") or "").lower().startswith(entry.lower())]
    return matches[0] if len(matches) == 1 else None


def same_device(uuid_a, uuid_b) -> bool:
    """Whether two UUIDs name one device, whatever their spelling: torch prints a device's UUID without
    NVML's "GPU-"/"MIG-" prefix."""
    return bool(uuid_a) and bool(uuid_b) and bare(uuid_a) == bare(uuid_b)


def bare(uuid: str) -> str:
    text = str(uuid).strip().lower()
    for prefix in ("gpu-", "mig-"):
        if text.startswith(prefix):
            return text[len(prefix):]
    return text
