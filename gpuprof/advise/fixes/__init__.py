"""The registry: every fix gpuprof knows, one module each, in the order ties are ranked.

Adding a fix is one module in this package and one line below. Everything outside this package
(ranking, `try`, the renderers, the CLI help) reads a fix's declared traits through these
functions and names no fix id of its own."""

import importlib


def _fixes(*modules) -> tuple:
    return tuple(importlib.import_module(f"{__name__}.{module}").FIX for module in modules)


#: Fixes that buy speed, one module a line, in catalogue order (ties in ranking keep this order).
SPEED = _fixes(
    "num_workers",
    "training_threads",
    "persistent_workers",
    "hdf5_chunk_cache",
    "batch_echoing",
    "background_prefetch",
    "loader_workers",
    "concurrent_fetch",
    "device_preprocessing",
    "cache_preprocessed",
    "collate_once",
    "decode_reduced_size",
    "gpu_staging",
    "pin_memory",
    "uint8_transfer",
    "mixed_precision",
    "compile",
    "channels_last",
    "fused_optimizer",
    "tf32",
    "cudnn_benchmark",
    "larger_batch",
    "ddp",
    "ddp_no_sync",
    "ddp_buckets",
    "cache_tokenised_dataset",
    "lazy_dataset_indexing",
    "compile_cache",
    "spawned_worker_imports",
    "subproc_vec_env",
    "async_vector_env",
    "vectorised_env",
    "more_envs_per_call",
    "rollout_inference",
    "rollout_buffers",
    "eval_loader_workers",
)

#: Fixes for a run that ran out of memory, ranked by the bytes each frees.
MEMORY = _fixes(
    "smaller_batch_accumulate",
    "mixed_precision_memory",
    "activation_checkpointing",
    "eight_bit_optimizer",
    "grads_set_to_none",
)

#: Fixes for DataLoader workers that ran out of shared memory, in the order they are shown.
SHARED_MEMORY = _fixes(
    "shm_size",
    "sharing_strategy",
    "fewer_batches_in_flight",
)

_BY_ID = {fix.id: fix for fix in SPEED + MEMORY + SHARED_MEMORY}


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
