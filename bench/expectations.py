"""What gpuprof should say about each example: shared by bench/accuracy.py and the example tests.

Each entry: (verdict, or several joined by '|' where the machine decides between them, a check of
the ranked fix ids, what the check means)."""

EXPECTED = {
    "cpu_starved.py": ("input.cpu", lambda ids: "num-workers" in ids[:3], "num-workers in the top three"),
    "disk_random_reads.py": ("input.disk", lambda ids: "num-workers" in ids[:2], "num-workers in the top two"),
    "hdf5_tiny_cache.py": ("input.cpu", lambda ids: "hdf5-chunk-cache" in ids[:3], "hdf5-chunk-cache in the top three"),
    "remote_source.py": ("input.latency", lambda ids: ids[:1] == ["num-workers"], "num-workers first"),
    "compute_heavy.py": ("compute", lambda ids: not ids or ids[0] not in ("num-workers", "uint8-transfer"),
                         "not led by num-workers or uint8-transfer"),
    "tuned.py": ("compute", lambda ids: not ids or ids[0] not in ("num-workers", "uint8-transfer"),
                 "not led by num-workers or uint8-transfer"),
    "sparse_to_dense.py": ("input.cpu", lambda ids: bool({"device-preprocessing", "gpu-staging"} & set(ids[:3])),
                           "device-preprocessing or gpu-staging in the top three"),
    "contended_workers.py": ("input.cpu", lambda ids: bool(ids) and ids[0] != "num-workers",
                             "a cheaper producer first, not num-workers"),
    "memmap_batcher.py": ("input.cpu", lambda ids: bool({"device-preprocessing", "loader-workers"} & set(ids[:3])),
                          "vectorise or build in workers, in the top three"),
    "cold_decode.py": ("input.cpu|input.disk", lambda ids: "cache-preprocessed" in ids[:4],
                       "cache-preprocessed in the top four"),
    "saturated_workers.py": ("input.cpu", lambda ids: not ids or ids[0] != "num-workers", "num-workers not first"),
    "comprehension_batcher.py": ("input.cpu", lambda ids: bool({"device-preprocessing", "loader-workers"} & set(ids[:3])),
                                 "vectorise or build in workers, in the top three"),
    "oversubscribed_workers.py": ("input.cpu", lambda ids: bool(ids) and ids[0] != "num-workers",
                                  "a cheaper producer first, not more workers"),
    "compute_cnn.py": ("compute", lambda ids: "channels-last" in ids and "compile" in ids,
                       "channels-last and compile offered"),
    "compute_transformer.py": ("compute", lambda ids: bool(ids) and ids[0] in ("mixed-precision", "compile"),
                               "a model-side fix first (mixed precision where the CPU has bf16, else compile)"),
    "photo_decode.py": ("compute|input.cpu", lambda ids: "decode-reduced-size" in ids and "num-workers" not in ids,
                        "decode-reduced-size offered, never more workers"),
    "short_steps_tabular.py": ("input.cpu", lambda ids: "num-workers" not in ids[:1],
                               "not led by num-workers: shipping batches costs more than a short step saves"),
}

#: Where another program keeps at least LOADED_CORES of the machine's cores busy during the run, these
#: examples' truth moves, and this is what gpuprof should say instead (measured under a busy loop on one
#: of two cores): tuned.py's two workers then take the one core the training has (input.cpu,
#: contended, is right: the input costs the training CPU); disk_random_reads.py's reader waits for a
#: core as much as for the disk; cpu_starved.py's workers would only take turns with the training on
#: the one core left, so more workers are no fix there.
LOADED_CORES = 0.5
LOADED = {
    "tuned.py": ("compute|input.cpu", lambda ids: not ids or ids[0] not in ("num-workers", "uint8-transfer"),
                 "not led by num-workers or uint8-transfer"),
    "cpu_starved.py": ("input.cpu", lambda ids: bool(ids) and ids[0] != "num-workers",
                       "a cheaper producer first, not more workers"),
    "disk_random_reads.py": ("input.disk|input.cpu", lambda ids: bool(ids) and ids[0] in (
        "num-workers", "cache-preprocessed", "device-preprocessing"), "a fix for the input first"),
}


def other_programs_cores(report: dict) -> float:
    """Cores other programs kept busy during the run: the machine's busy cores less the job's."""
    system = report.get("system") or {}
    idle = (system.get("cpu") or {}).get("idle")
    limit = system.get("cpu_limit") or {}
    host = limit.get("host_cpus") or system.get("cpu_count") or 1
    if idle is None:
        return 0.0
    return max((1 - idle) * host - ((system.get("job") or {}).get("cores_busy") or 0.0), 0.0)


#: Examples whose lesson is the training's own intra-op threads competing with the workers for the
#: cores: the tests run them with torch's default threads (every other example with one).
THREADED = ("oversubscribed_workers.py", "photo_decode.py")


def expected_for(example: str, report: dict) -> tuple:
    """(verdicts, check, what the check means) for this example on the machine the report shows."""
    if example in LOADED and other_programs_cores(report) >= LOADED_CORES:
        return LOADED[example]
    return EXPECTED[example]
