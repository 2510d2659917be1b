"""A run whose DataLoader workers ran out of shared memory: its verdict and the fixes, which are
about where batches travel between processes, not about the model's memory.

Workers hand each batch to the training process through /dev/shm; a container's default of 64 MB
holds a few batches at most. The fixes: a larger /dev/shm (or the host's), torch's file-system
sharing strategy, or fewer batches in flight (workers x prefetch_factor)."""

FIXES = (
    ("shm-size", "Give the job a larger /dev/shm", 1,
     "run the container with --shm-size=8g (or --ipc=host); on Kubernetes mount an emptyDir with medium: Memory "
     "at /dev/shm",
     "docker run --shm-size=8g ...   # or --ipc=host"),
    ("sharing-strategy", "Share batches through files instead of shared-memory handles", 1,
     "torch.multiprocessing.set_sharing_strategy('file_system') before the DataLoader is built",
     "import torch.multiprocessing\ntorch.multiprocessing.set_sharing_strategy('file_system')"),
    ("fewer-batches-in-flight", "Keep fewer batches in flight", 1,
     "fewer workers or a smaller prefetch_factor: workers x prefetch_factor batches sit in /dev/shm at once",
     "DataLoader(dataset, num_workers=2, prefetch_factor=1, ...)"),
)


def in_flight_bytes(loader: dict):
    """Bytes of batches the DataLoader keeps in shared memory at once, or None."""
    batch = (loader or {}).get("batch") or {}
    workers = (loader or {}).get("num_workers") or 0
    if not batch.get("bytes") or not workers:
        return None
    return batch["bytes"] * workers * ((loader.get("prefetch_factor") or 2))


def shm_advice(shm: dict, loader: dict = None) -> list:
    need = in_flight_bytes(loader)
    why = "the batches in flight do not fit in /dev/shm"
    if need and shm.get("shm_bytes"):
        why = (f"about {need / 2**20:.0f} MiB of batches sit in shared memory at once and /dev/shm holds "
               f"{shm['shm_bytes'] / 2**20:.0f} MiB")
    return [{"id": fix_id, "title": title, "estimated_speedup": None, "where": (loader or {}).get("where"),
             "detail": detail, "snippet": snippet, "effort": effort, "addresses": ["memory.shm"], "change": None,
             "why": why} for fix_id, title, effort, detail, snippet in FIXES]


def shm_verdict(shm: dict, previous: dict) -> dict:
    return {"bottleneck": "memory.shm", "share": None, "confidence": 0.9, "basis": "probes", "reason": shm["how"],
            "evidence": {"shm": shm, "before": (previous or {}).get("summary")},
            "summary": f"Out of shared memory: {shm['how']}. DataLoader workers hand batches to the training "
                       "process through /dev/shm."}


def shm_note(system: dict, loaders: list):
    """A warning when the batches a DataLoader keeps in flight come near the size of /dev/shm, or None."""
    limit = (system or {}).get("cpu_limit") or {}
    size = limit.get("shm_bytes")
    need = in_flight_bytes((loaders or [None])[0])
    if not size or not need or need < 0.5 * size:
        return None
    return (f"shared memory is tight: about {need / 2**20:.0f} MiB of batches are in flight at once (workers x "
            f"prefetch_factor) and /dev/shm holds {size / 2**20:.0f} MiB; a larger batch or more workers will fail "
            "with 'unable to allocate shared memory' (raise --shm-size, or use the 'file_system' sharing strategy)")
