"""What gpuprof should say about each example: shared by bench/accuracy.py and the example tests."""

EXPECTED = {
    "cpu_starved.py": ("input.cpu", lambda ids: ids[:1] == ["num-workers"], "num-workers first"),
    "disk_random_reads.py": ("input.disk", lambda ids: "num-workers" in ids[:2], "num-workers in the top two"),
    "hdf5_tiny_cache.py": ("input.cpu", lambda ids: "hdf5-chunk-cache" in ids[:3], "hdf5-chunk-cache in the top three"),
    "remote_source.py": ("input.latency", lambda ids: ids[:1] == ["num-workers"], "num-workers first"),
    "compute_heavy.py": ("compute", lambda ids: not ids or ids[0] not in ("num-workers", "uint8-transfer"),
                         "not led by num-workers or uint8-transfer"),
    "tuned.py": ("compute", lambda ids: not ids or ids[0] not in ("num-workers", "uint8-transfer"),
                 "not led by num-workers or uint8-transfer"),
    "sparse_to_dense.py": ("input.cpu", lambda ids: bool({"device-preprocessing", "gpu-staging"} & set(ids[:3])),
                           "device-preprocessing or gpu-staging in the top three"),
    "saturated_workers.py": ("input.cpu", lambda ids: not ids or ids[0] != "num-workers", "num-workers not first"),
}
