"""The registry: every fix gpuprof knows, one module each, in the order ties are ranked.

Adding a fix is one module in this package and one line below. Everything outside this package
(ranking, `try`, the renderers, the CLI help) reads a fix's declared traits through these
functions and names no fix id of its own."""

from gpuprof.advice.fixes import (
    activation_checkpointing, background_prefetch, batch_echoing, cache_preprocessed, concurrent_fetch, ddp,
    ddp_buckets, ddp_no_sync, device_preprocessing, eight_bit_optimizer, gpu_staging, grads_set_to_none,
    hdf5_chunk_cache, larger_batch, loader_workers, mixed_precision, mixed_precision_memory, num_workers,
    persistent_workers, pin_memory, smaller_batch_accumulate, uint8_transfer,
)

#: Fixes that buy speed, in catalogue order (ties in ranking keep this order).
SPEED = (
    num_workers.FIX,
    persistent_workers.FIX,
    hdf5_chunk_cache.FIX,
    batch_echoing.FIX,
    background_prefetch.FIX,
    loader_workers.FIX,
    concurrent_fetch.FIX,
    device_preprocessing.FIX,
    cache_preprocessed.FIX,
    gpu_staging.FIX,
    pin_memory.FIX,
    uint8_transfer.FIX,
    mixed_precision.FIX,
    larger_batch.FIX,
    ddp.FIX,
    ddp_no_sync.FIX,
    ddp_buckets.FIX,
)

#: Fixes for a run that ran out of memory, ranked by the bytes each frees.
MEMORY = (
    smaller_batch_accumulate.FIX,
    mixed_precision_memory.FIX,
    activation_checkpointing.FIX,
    eight_bit_optimizer.FIX,
    grads_set_to_none.FIX,
)

_BY_ID = {fix.id: fix for fix in SPEED + MEMORY}


def get(fix_id):
    """The fix with this id, or None."""
    return _BY_ID.get(fix_id)


def ids() -> tuple:
    return tuple(_BY_ID)


def tryable() -> tuple:
    """The fixes `gpuprof try --fix` applies with no edit to the program."""
    return tuple(fix for fix in SPEED if fix.try_keys)


def owner_of(change: dict):
    """The one fix whose change keys include every key of `change` (how `try --echo` and
    `--hdf5-cache` name the fix they stand for), or None when none or several do."""
    keys = set(change)
    owners = [fix for fix in tryable() if keys <= set(fix.try_keys)]
    return owners[0] if len(owners) == 1 else None
