"""A run whose DataLoader workers ran out of shared memory: its fixes (gpuprof.advise.fixes,
SHARED_MEMORY), which are about where batches travel between processes, not about the model's
memory; and a warning when the batches in flight come near the size of /dev/shm.

Workers hand each batch to the training process through /dev/shm; a container's default of 64 MB
holds a few batches at most. The fixes: a larger /dev/shm (or the host's), torch's file-system
sharing strategy, or fewer batches in flight (workers x prefetch_factor)."""

from typing import Optional

from gpuprof.advise import fixes
from gpuprof.judge.verdict import bottlenecks
from gpuprof.stats.sizes import MIB

#: Batches in flight from this share of /dev/shm on are worth a warning.
NEAR_FULL = 0.5


def in_flight_bytes(loader: Optional[dict]):
    """Bytes of batches the DataLoader keeps in shared memory at once, or None."""
    loader = loader or {}
    batch = loader.get("batch") or {}
    workers = loader.get("num_workers") or 0
    if not batch.get("bytes") or not workers:
        return None
    return batch["bytes"] * workers * ((loader.get("prefetch_factor") or 2))


def shm_advice(shm: dict, loader: dict = None) -> list:
    need = in_flight_bytes(loader)
    why = "the batches in flight do not fit in /dev/shm"
    if need and shm.get("shm_bytes"):
        why = (f"about {need / MIB:.0f} MiB of batches sit in shared memory at once and /dev/shm holds "
               f"{shm['shm_bytes'] / MIB:.0f} MiB")
    out = []
    for fix in fixes.SHARED_MEMORY:
        built = fix.build(shm, loader)
        out.append({"id": fix.id, "title": fix.title, "estimated_speedup": None, "where": (loader or {}).get("where"),
                    "detail": built["detail"], "snippet": built["snippet"], "effort": fix.effort,
                    "addresses": [bottlenecks.MEMORY_SHM.id], "change": None, "why": why})
    return out


def shm_note(system: dict, loaders: list):
    """A warning when the batches a DataLoader keeps in flight come near the size of /dev/shm, or None."""
    limit = (system or {}).get("cpu_limit") or {}
    size = limit.get("shm_bytes")
    need = in_flight_bytes((loaders or [None])[0])
    if not size or not need or need < NEAR_FULL * size:
        return None
    return (f"shared memory is tight: about {need / MIB:.0f} MiB of batches are in flight at once (workers x "
            f"prefetch_factor) and /dev/shm holds {size / MIB:.0f} MiB; a larger batch or more workers will fail "
            "with 'unable to allocate shared memory' (raise --shm-size, or use the 'file_system' sharing strategy)")
