"""The fix catalogue. Each entry says when it applies, estimates its speed-up from the measured
shares (gpuprof.advice.model), names the user's file:line when known, and gives the exact change.

An entry is a function `(ev, verdict) -> dict | None`, registered with its id, title, the
bottlenecks it addresses and its effort (1 a setting, 2 a few lines, 3 a redesign)."""

import math

from gpuprof.analysis.evidence import HANDWRITTEN
from gpuprof.advice.model import cheaper_producer, cheaper_share, cpu_budget, more_capacity, next_prime

CATALOGUE = []
INPUT = ("input.cpu", "input.disk", "input.latency")
MIN_GAIN = 1.05


def fix(fix_id: str, title: str, targets, effort: int):
    def register(func):
        CATALOGUE.append({"id": fix_id, "title": title, "targets": tuple(targets), "effort": effort, "build": func})
        return func
    return register


def _input_kind(ev, verdict):
    """The input bottleneck this run has (verdict or notable finding), else None."""
    if verdict.get("bottleneck") in INPUT:
        return verdict["bottleneck"]
    for finding in verdict.get("_findings", []):
        if finding["bottleneck"] in INPUT:
            return finding["bottleneck"]
    return None


def _contended(verdict):
    """The input finding when it is the contended kind (workers and training share the CPU), else None."""
    for finding in [verdict] + list(verdict.get("_findings", [])):
        if (finding.get("evidence") or {}).get("contended"):
            return finding
    return None


def cheaper_input(ev, verdict, k: float) -> float:
    """Speed-up from making each batch k times cheaper. When workers and training share the CPU,
    the input's cost is its share of the CPU, not a wait: saving (1 - 1/k) of that share."""
    contended = _contended(verdict)
    if contended is not None:
        return cheaper_share(contended.get("share") or 0.0, 1.0 - 1.0 / k)
    return cheaper_producer(ev, k)


def input_cost(ev, verdict) -> str:
    """What the input costs, in the terms the verdict measured it: a wait, or a share of the CPU."""
    contended = _contended(verdict)
    if contended is not None:
        return f"making batches takes {_pct(contended.get('share') or 0)} of the job's CPU, which training needs"
    return f"{_pct(ev.wait_share)} of each step waits for data"


def _where(ev):
    return (ev.loader or {}).get("where")


def _pct(x):
    return f"{x:.0%}"


#: DataLoader arguments as Hugging Face's TrainingArguments names them.
HF_ARGUMENTS = {"num_workers": "dataloader_num_workers", "persistent_workers": "dataloader_persistent_workers",
                "pin_memory": "dataloader_pin_memory", "prefetch_factor": "dataloader_prefetch_factor",
                "batch_size": "per_device_train_batch_size"}


def loader_snippet(ev, settings: dict) -> str:
    """The change to the DataLoader's arguments, in the terms of whatever builds it: the user's own
    DataLoader call, TrainingArguments under a Hugging Face Trainer, the DataLoader in the
    LightningDataModule, or the DataLoader handed to accelerate's prepare()."""
    loader = ev.loader or {}
    framework = loader.get("framework")
    text = ", ".join(f"{k}={v}" for k, v in settings.items())
    if framework == "transformers":
        hf = ", ".join(f"{HF_ARGUMENTS.get(k, k)}={v}" for k, v in settings.items())
        return f"TrainingArguments(..., {hf})   # the Trainer builds the DataLoader from these"
    if framework == "lightning":
        return f"def train_dataloader(self):   # in your LightningDataModule / LightningModule\n" \
               f"    return DataLoader(dataset, batch_size={loader.get('batch_size')}, {text}, ...)"
    if framework == "accelerate":
        return f"loader = DataLoader(dataset, batch_size={loader.get('batch_size')}, {text}, ...)\n" \
               "loader = accelerator.prepare(loader)   # accelerate rebuilds it with these settings"
    return f"DataLoader(dataset, batch_size={loader.get('batch_size')}, {text}, ...)"


def loader_detail(ev, text: str) -> str:
    """`text` (the change), with who builds the DataLoader when it is not the user's own call."""
    loader = ev.loader or {}
    framework, built_in = loader.get("framework"), loader.get("built_in")
    if framework == "transformers":
        return f"{text} through TrainingArguments (the Trainer builds the DataLoader" + \
            (f" at {built_in})" if built_in else ")")
    if built_in:
        return f"{text} where you configure {framework or 'the library'} (it builds the DataLoader at {built_in})"
    return text


# -- input pipeline ---------------------------------------------------------------------------
CPU_ONLY_WORKER_EFFICIENCY = 0.6
DISK_PARALLELISM = 2.0           # reads in parallel assumed to go at most this much faster (a disk's queue depth is unknown)
LATENCY_WORKERS_PER_CORE = 4     # waiting workers need no CPU, but each one's batches are unpickled by the main process
FDS_PER_WORKER = 8                # queue pipes, a semaphore, shared-memory handles, the dataset's own files
WORKER_MEMORY_SHARE = 0.5         # workers may take at most half the memory the machine had available


def worker_limit(ev):
    """(the most workers this machine holds, why), or (None, None) without the figures."""
    limits = []
    if ev.process_rss and ev.memory_available:
        limits.append((int(WORKER_MEMORY_SHARE * ev.memory_available // ev.process_rss),
                       f"memory: {ev.memory_available / 2**30:.1f} GiB available and up to "
                       f"{ev.process_rss / 2**20:.0f} MiB per process of the job"))
    if ev.open_files_limit:
        limits.append((max((ev.open_files_limit - 64) // FDS_PER_WORKER, 1),
                       f"open files: the limit is {ev.open_files_limit} and each worker holds about {FDS_PER_WORKER}"))
    return min(limits) if limits else (None, None)


@fix("num-workers", "Make batches in more DataLoader worker processes", INPUT, 1)
def num_workers(ev, verdict):
    kind = _input_kind(ev, verdict)
    if kind is None or not ev.loader or ev.wait_source != "dataloader" or _contended(verdict):
        return None         # contended: more workers take more of the cores training needs
    n = ev.loader.get("num_workers") or 0
    w = ev.wait_share
    need = (w / max(1 - w, 0.05)) if ev.inline_producer else max(n, 1) / max(1 - w, 0.05)
    producer_cores = ev.producer_cores or (ev.producer_cpu_ratio or 1.0) * max(n, 1)
    if kind == "input.cpu":
        suggested = max(n + 1, min(max(ev.cpu_count, 2), max(2, math.ceil(need) + 1)))
        if ev.inline_producer:
            # Workers free the training thread: they may use every core the compute phase leaves
            # (at most all cores for 1 - w of the time) and other programs do not take.
            other = max((1 - (ev.machine_idle if ev.machine_idle is not None else 0.0)) * ev.cpu_count
                        - (ev.cores_busy or 0.0), 0.0)
            available = max(ev.cpu_count - other - (1 - w) * ev.cpu_count, 1.0)
        else:
            available = producer_cores + ev.cores_free
        headroom = available / producer_cores if producer_cores > 0.05 else suggested
        limit = f"{available:.1f} of {ev.cpu_count} cores free for producers"
    elif kind == "input.disk":
        suggested = min(max(4, 2 * n), 16)
        limit = "parallel reads keep the disk's queue full"
    else:
        cap = LATENCY_WORKERS_PER_CORE * ev.cpu_count
        suggested = min(cap, max(4, 2 * n, math.ceil(need) + 1))
        limit = (f"waiting workers need little CPU, but at most {LATENCY_WORKERS_PER_CORE} per core "
                 f"({cap} here): beyond that, starting them and unpickling their batches eat the gain")
    most, why_most = worker_limit(ev)
    if most is not None and suggested > most:
        suggested, limit = max(most, 1), f"{limit}; the machine holds at most {most} ({why_most})"
    if suggested <= n:
        return None         # never propose a change from X to X
    k = suggested / max(n, 1)
    if kind == "input.cpu":
        k = min(k, headroom)
    elif kind == "input.disk":
        k = min(k, DISK_PARALLELISM)
    if not ev.gpu and kind != "input.latency":
        # On a CPU-only machine the workers share the cores with the training's own intra-op threads,
        # and every batch is pickled and shipped: measured with `gpuprof try`, workers made batches at
        # about 0.6 of the rate their count promises (docs/advice.md).
        k = max(1.0, k * CPU_ONLY_WORKER_EFFICIENCY) if n == 0 else k * CPU_ONLY_WORKER_EFFICIENCY
    gain = more_capacity(ev, k)
    budget = cpu_budget(ev)      # readers spend CPU too (kernel time, copies): every kind is bounded
    bounded = ""
    if budget < gain:
        gain = budget
        bounded = (f"; bounded by the CPU: producers need {ev.producer_cores or 0:.1f} cores per step and compute "
                   f"{1 - w:.0%} of a step on {'one core' if ev.gpu else 'every core'}, which {ev.cpu_count} cores "
                   f"fit at most {budget:.2f}x faster")
    if gain < MIN_GAIN:
        return None
    change = {"num_workers": suggested, "persistent_workers": True}
    snippet = loader_snippet(ev, change)
    detail = f"num_workers {n} -> {suggested}" + (" (batches then overlap with compute)" if n == 0 else "")
    threads = _threads_beside_workers(ev, suggested) if kind != "input.latency" else None  # waiting workers need no core
    oversubscribed = ""
    if threads is not None:
        change["torch_threads"] = threads
        snippet = f"torch.set_num_threads({threads})   # in the training process: leave the workers their cores\n" + snippet
        detail += f", and torch.set_num_threads({threads}) in the training process"
        oversubscribed = (f"; the training's {ev.loader.get('torch_threads') or ev.cpu_count} intra-op threads and "
                          f"{suggested} workers would share {ev.cpu_count} cores, and idle intra-op threads spin on "
                          f"theirs")
    return {
        "estimated_speedup": gain,
        "where": _where(ev),
        "detail": loader_detail(ev, detail),
        "snippet": snippet,
        "why": f"{_pct(w)} of each step waits for data; producers run at {_pct(ev.producer_cpu_ratio or 0)} CPU; "
               f"{limit}; {suggested} workers make batches at most {k:.1f}x as fast as now, so a step is up to "
               f"{math.floor(gain * 100) / 100:.2f}x faster{bounded}{oversubscribed}",
        "change": change,
    }


def _threads_beside_workers(ev, workers: int):
    """On a CPU-only machine the training process's intra-op threads and the workers share the
    cores; when together they outnumber them, the training keeps fewer threads (None: no change).
    torch's default is one thread per core, so an unknown count is taken as that."""
    if ev.gpu:
        return None
    threads = (ev.loader or {}).get("torch_threads") or ev.cpu_count
    if threads + workers <= ev.cpu_count:
        return None
    return max(1, ev.cpu_count - workers)


@fix("persistent-workers", "Keep DataLoader workers alive between epochs", INPUT, 1)
def persistent_workers(ev, verdict):
    loader = ev.loader or {}
    epochs = loader.get("epochs") or 0
    if not loader.get("num_workers") or loader.get("persistent_workers") or epochs < 2 or not ev.window_s:
        return None
    restart_s = (loader.get("epoch_start_wait_s") or 0.0) * (epochs - 1) / epochs
    gain = ev.window_s / max(ev.window_s - restart_s, 1e-9)
    if gain < 1.02:
        return None
    return {
        "estimated_speedup": gain, "where": _where(ev),
        "detail": loader_detail(ev, "persistent_workers False -> True (and prefetch_factor 4)"),
        "snippet": loader_snippet(ev, {"num_workers": loader.get("num_workers"), "persistent_workers": True,
                                       "prefetch_factor": 4}),
        "why": f"{epochs} epochs each waited {loader.get('epoch_start_wait_s', 0) / epochs:.2f} s for workers "
               "to start and fetch their first batch",
        "change": {"persistent_workers": True, "prefetch_factor": 4},
    }


@fix("hdf5-chunk-cache", "Size the HDF5 chunk cache (and chunk shape) for how the data is read", ("input.cpu", "input.disk"), 1)
def hdf5_chunk_cache(ev, verdict):
    if _input_kind(ev, verdict) not in ("input.cpu", "input.disk"):
        return None
    bad = [d for d in ev.hdf5 if (d.get("read_amplification") or 0) >= 2 and d.get("chunk_bytes")]
    if not bad:
        return None
    worst = max(bad, key=lambda d: d["read_amplification"])
    amplification = worst["read_amplification"]
    chunk = worst["chunk_bytes"]
    batch = (ev.loader or {}).get("batch_size") or 1
    random_order = (ev.loader or {}).get("sampler") == "RandomSampler"
    per_read = max(1, round((worst.get("chunks_touched") or 1) / max(worst.get("reads") or 1, 1)))
    in_use = per_read * (batch if random_order else 1)
    nbytes = min(max(chunk * in_use, 2 * chunk), 1 << 30)
    nbytes = int(math.ceil(nbytes / (1 << 20)) * (1 << 20))
    nslots = max(next_prime(100 * max(1, nbytes // chunk)), worst.get("rdcc_nslots") or 0)
    current = worst.get("rdcc_nbytes")
    resize = current is None or current < nbytes
    keep_handle = bool(worst.get("reopened_per_read"))
    if not resize and not keep_handle:
        return None         # the cache is already this size: nothing to change
    gain = cheaper_input(ev, verdict, min(amplification, 20.0))
    if gain < MIN_GAIN:
        return None
    name = worst["dataset"].strip("/")
    changes, snippet = [], []
    if keep_handle:
        changes.append(f"open the data set once per worker and keep its handle (it was opened {worst.get('opens')} "
                       f"times for {worst.get('reads')} reads; each new handle starts with an empty chunk cache, so "
                       "no cache size helps until the handle is kept)")
    if resize:
        changes.append(f"chunk cache {current} B -> {nbytes} B ({nbytes // chunk} chunks of {chunk} B, chunk shape "
                       f"{worst.get('chunks')}), rdcc_nslots {worst.get('rdcc_nslots')} -> {nslots}")
    chunks = worst.get("chunks")
    if random_order and chunks and chunks[0] > 1:
        changes.append(f"reading samples in random order, chunks of 1 along the first axis ({[1] + list(chunks[1:])}) "
                       f"avoid decompressing {chunks[0]} samples per sample")
    opened = f'h5py.File(path, "r", rdcc_nbytes={max(nbytes, current or 0)}, rdcc_nslots={nslots})'
    snippet.append("def __getitem__(self, i):")
    snippet.append("    if self.data is None:          # once per worker: the handle keeps its chunk cache")
    snippet.append(f"        self.data = {opened}[\"{name}\"]")
    snippet.append("    return self.data[i]")
    return {
        "estimated_speedup": gain, "where": f"{worst['file']}:{worst['dataset']}",
        "detail": "; ".join(changes),
        "snippet": "\n".join(snippet),
        "why": f"each read decompresses {amplification:.0f}x the bytes it returns: "
               + ("the data set is opened again for each read, which throws its cache away"
                  if keep_handle and not resize else
                  f"the cache ({current} B) {'cannot hold one' if not worst.get('cache_holds_a_chunk') else 'holds too few'} "
                  f"{chunk} B chunk{'s' if worst.get('cache_holds_a_chunk') else ''}"),
        "change": {"hdf5_cache_bytes": max(nbytes, current or 0), "hdf5_keep_handles": True},
    }


@fix("batch-echoing", "Echo each batch: train on it twice before fetching the next", INPUT, 2)
def batch_echoing(ev, verdict):
    if _input_kind(ev, verdict) is None:
        return None
    factor = 2
    gain = cheaper_input(ev, verdict, factor)
    if gain < MIN_GAIN:
        return None
    return {
        "estimated_speedup": gain, "where": _where(ev),
        "detail": f"echo factor 1 -> {factor}: input time per step / {factor}. Randomness: each batch is seen "
                  f"{factor} times in a row, so a step sees half as many fresh samples and the order of data and "
                  "augmentation draws changes; echo before augmentation (or reshuffle within the echoed batch) "
                  "and check convergence per fresh sample, not per step",
        "snippet": "for x, y in loader:\n    for _ in range(2):   # batch echoing\n        loss = loss_fn(model(x), y)\n"
                   "        optimizer.zero_grad(); loss.backward(); optimizer.step()",
        "why": f"{input_cost(ev, verdict)}; echoing halves the batches made per step",
        "change": {"echo": factor},
    }


@fix("background-prefetch", "Prepare the next batches in background threads while the model trains", ("input.latency", "input.disk"), 2)
def background_prefetch(ev, verdict):
    """A hand-written loop (no DataLoader) that waits on reads or a remote store: threads wait in
    parallel with compute (waiting releases the GIL), so the step becomes max(compute, wait / n)."""
    if _input_kind(ev, verdict) not in ("input.latency", "input.disk") or ev.wait_source not in HANDWRITTEN:
        return None
    w = ev.wait_share or 0.0
    threads = min(8, max(2, math.ceil(w / max(1 - w, 0.05))))
    gain = 1.0 / max(1 - w, w / threads, 1e-9)
    if gain < MIN_GAIN:
        return None
    return {
        "estimated_speedup": gain, "where": None,
        "detail": f"a pool of {threads} threads makes the next {threads} batches while the current one trains "
                  "(the same batches in the same order; the function that makes a batch must be thread-safe)",
        "snippet": ("from concurrent.futures import ThreadPoolExecutor\n"
                    f"pool = ThreadPoolExecutor(max_workers={threads})\n"
                    f"pending = [pool.submit(get_batch, i) for i in range({threads})]\n"
                    "for step in range(steps):\n"
                    f"    x, y = pending.pop(0).result(); pending.append(pool.submit(get_batch, step + {threads}))"),
        "why": f"{_pct(w)} of each step is spent making the batch before the forward, "
               f"{_pct(1 - (ev.producer_cpu_ratio or 0))} of it waiting (not computing): "
               f"{threads} threads can wait side by side",
    }


@fix("loader-workers", "Make the batches in DataLoader workers instead of the training loop", ("input.cpu",), 2)
def loader_workers(ev, verdict):
    """A hand-written loop that builds its batches on the CPU in the training thread: worker
    processes build them alongside compute, as far as the cores allow (the CPU bound)."""
    if _input_kind(ev, verdict) != "input.cpu" or ev.wait_source not in HANDWRITTEN:
        return None
    workers = max(2, min(ev.cpu_count, 4))
    k = min(workers, max(ev.cpu_count - 1, 1))
    gain = min(more_capacity(ev, k), cpu_budget(ev))
    if gain < MIN_GAIN:
        return None
    function = (ev.data_where or "get_batch").split(" (", 1)[0]
    return {
        "estimated_speedup": gain, "where": None,
        "detail": f"wrap {function} in an IterableDataset and iterate a DataLoader with {workers} workers, so the "
                  "next batches are built while the model trains. Randomness: each worker draws from its own "
                  "random stream, so the batches differ from today's (seed each worker for repeatable runs)",
        "snippet": ("class Batches(torch.utils.data.IterableDataset):\n"
                    "    def __iter__(self):\n"
                    "        while True:\n"
                    f"            yield {function}()\n"
                    f"batches = iter(DataLoader(Batches(), batch_size=None, num_workers={workers}, "
                    "persistent_workers=True))\n"
                    "x, y = next(batches)          # in place of the call in the loop"),
        "why": f"{input_cost(ev, verdict)}, built in the training thread; {workers} workers overlap it with compute, "
               f"bounded by the CPU: producers and compute must fit on {ev.cpu_count} cores",
    }


@fix("concurrent-fetch", "Fetch the samples of a batch concurrently inside the Dataset", ("input.latency",), 2)
def concurrent_fetch(ev, verdict):
    """A DataLoader whose producers wait on a remote store: one request at a time per worker. A
    `__getitems__` that sends a batch's requests together cuts the wait per batch by up to the
    number of requests in flight."""
    if _input_kind(ev, verdict) != "input.latency" or not ev.loader or ev.wait_source != "dataloader":
        return None
    batch = ev.loader.get("batch_size") or 1
    in_flight = min(batch, 8)
    if in_flight < 2:
        return None
    gain = cheaper_producer(ev, in_flight)
    if gain < MIN_GAIN:
        return None
    return {
        "estimated_speedup": gain, "where": _where(ev),
        "detail": f"define __getitems__(self, indices) and fetch a batch's {batch} samples with {in_flight} requests "
                  "in flight (threads or async I/O); torch calls it once per batch",
        "snippet": ("def __getitems__(self, indices):      # in the Dataset class\n"
                    f"    with ThreadPoolExecutor({in_flight}) as pool:\n"
                    "        return list(pool.map(self.__getitem__, indices))"),
        "why": f"producers are idle {_pct(1 - (ev.producer_cpu_ratio or 0))} of the time they fetch: they wait, one "
               "request after another",
    }


@fix("device-preprocessing", "Do the preprocessing as batched tensor ops on the training device", ("input.cpu",), 3)
def device_preprocessing(ev, verdict):
    if _input_kind(ev, verdict) != "input.cpu":
        return None
    handwritten = ev.wait_source in HANDWRITTEN
    k = 10.0 if ev.gpu else (5.0 if handwritten else 2.0)
    gain = cheaper_input(ev, verdict, k)
    if gain < MIN_GAIN:
        return None
    if ev.wait_source == "sampled":
        detail = (f"build each batch in {ev.data_where or 'the batch function'} with whole-batch tensor ops (one "
                  "index or gather for all rows, vectorised clean-up) instead of per-row Python work")
        snippet = ("rows = data[idx]             # one fancy index for the whole batch, not a slice per row\n"
                   "batch = torch.as_tensor(rows).to(device, non_blocking=True)")
        where = None
    elif handwritten:
        detail = ("build each batch with one vectorised op on the device (index_put_/scatter_ or a sparse "
                  "tensor's to_dense()) instead of per-row Python loops on the host")
        snippet = ("rows = torch.repeat_interleave(torch.arange(B), lengths)        # row of every nonzero\n"
                   "dense = torch.zeros(B, D, device=device)\n"
                   "dense.index_put_((rows.to(device), cols.to(device)), values.to(device), accumulate=True)")
        where = None
    else:
        detail = ("return raw samples (uint8 where possible) from __getitem__ and run the transforms on whole "
                  "batches on the device after the copy")
        snippet = ("x = x.to(device, non_blocking=True).float().div_(255)\n"
                   "x = augment(x)          # batched: e.g. torchvision.transforms.v2 on device tensors")
        where = _where(ev)
    return {"estimated_speedup": gain, "where": where, "detail": detail, "snippet": snippet,
            "why": f"batch preparation is CPU-bound ({_pct(ev.producer_cpu_ratio or 0)} CPU); {input_cost(ev, verdict)}"
                   + ("" if ev.gpu else "; on this CPU-only machine the "
                   "gain comes from vectorising, on a GPU it is larger")}


@fix("cache-preprocessed", "Cache the deterministic part of preprocessing (or the raw data in memory)", ("input.cpu", "input.disk"), 2)
def cache_preprocessed(ev, verdict):
    kind = _input_kind(ev, verdict)
    if kind not in ("input.cpu", "input.disk"):
        return None
    gain = cheaper_input(ev, verdict, 2.0)
    if gain < MIN_GAIN:
        return None
    if kind == "input.disk":
        detail = "read the data once into memory (or onto local fast storage) and serve later epochs from there"
        snippet = "data = np.load(path, mmap_mode=None)   # or copy to local NVMe / RAM disk before training"
    else:
        detail = ("save decoded/resized samples once (e.g. a .npy memmap) and keep only random augmentations "
                  "online, so the random numbers they draw are unchanged")
        snippet = "cache = np.lib.format.open_memmap('cache.npy', mode='w+', dtype=np.uint8, shape=(N, C, H, W))"
    return {"estimated_speedup": gain, "where": _where(ev), "detail": detail, "snippet": snippet,
            "why": f"the same preparation is repeated every epoch; {input_cost(ev, verdict)}"}


@fix("gpu-staging", "Stage large chunks of the data on the GPU and slice batches there", INPUT + ("transfer.h2d",), 3)
def gpu_staging(ev, verdict):
    if not ev.gpu or (_input_kind(ev, verdict) is None and verdict.get("bottleneck") != "transfer.h2d"):
        return None
    if ev.gpu_mem_free_share is not None and ev.gpu_mem_free_share < 0.3:
        return None
    if verdict.get("bottleneck") == "transfer.h2d":
        gain = cheaper_share(ev.copy_share or 0.0, 0.9)
    else:
        gain = cheaper_producer(ev, 10.0)
    if gain < MIN_GAIN:
        return None
    return {"estimated_speedup": gain, "where": _where(ev),
            "detail": "copy the dataset (or large shards of it, as uint8) to the GPU once and index batches there",
            "snippet": "staged = torch.from_numpy(shard).to(device)      # once per shard\n"
                       "batch = staged[torch.randint(len(staged), (B,), device=device)].float().div_(255)",
            "why": f"the GPU has {_pct(ev.gpu_mem_free_share or 0)} of its memory free and input or copies take "
                   f"{_pct(max(ev.wait_share or 0, ev.copy_share or 0))} of each step"}


# -- transfers ----------------------------------------------------------------------------------
def _pageable_share(ev):
    copies = ev.copies
    return copies.get("pageable_bytes", 0) / copies["bytes"] if copies.get("bytes") else 0.0


@fix("pin-memory", "Pin host memory and copy asynchronously", ("transfer.h2d",), 1)
def pin_memory(ev, verdict):
    if not ev.copy_share or _pageable_share(ev) < 0.5:
        return None
    gain = cheaper_share(ev.copy_share, 0.6)
    if gain < MIN_GAIN:
        return None
    loader = ev.loader or {}
    return {"estimated_speedup": gain, "where": _where(ev),
            "detail": loader_detail(ev, "pin_memory " + ("False -> True" if loader and not loader.get("pin_memory")
                                                          else "on") + ", and .to(device, non_blocking=True) so copies "
                                    "overlap compute"),
            "snippet": loader_snippet(ev, {"pin_memory": True}) + "\nx = x.to(device, non_blocking=True)",
            "change": {"pin_memory": True},
            "why": f"{_pct(_pageable_share(ev))} of {ev.copies.get('bytes', 0) / 1e6:.0f} MB copied came from pageable "
                   f"memory; copies take {_pct(ev.copy_share)} of the time"}


@fix("uint8-transfer", "Ship uint8 to the device and normalise there", ("transfer.h2d", "input.cpu"), 2)
def uint8_transfer(ev, verdict):
    batch = (ev.loader or {}).get("batch") or {}
    if not batch.get("uint8_candidate") or not ev.copy_share:
        return None
    gain = cheaper_share(ev.copy_share, 0.75)
    if gain < MIN_GAIN:
        return None
    normalise = {"0..255": "", "k/255": ".div_(255)", "affine": ".div_(255).sub_(mean).div_(std)"}.get(batch.get("uint8_form"), "")
    return {"estimated_speedup": gain, "where": _where(ev),
            "detail": f"batches of {batch.get('dtype')} {batch.get('shape')} hold uint8 values ({batch.get('uint8_form')}): "
                      "send uint8 (4x fewer bytes) and convert on the device",
            "snippet": f"x = x.to(device, non_blocking=True).float(){normalise}   # dataset returns uint8",
            "why": f"copies take {_pct(ev.copy_share)} of the time and every sampled value fits in a byte"}


# -- compute ----------------------------------------------------------------------------------
@fix("mixed-precision", "Train in mixed precision (bf16 autocast)", ("compute",), 1)
def mixed_precision(ev, verdict):
    if verdict.get("bottleneck") != "compute" or not ev.gpu:
        return None
    return {"estimated_speedup": 1.5, "where": None,
            "detail": "run forward and loss under torch.autocast('cuda', dtype=torch.bfloat16): tensor cores, half the memory traffic",
            "snippet": "with torch.autocast('cuda', dtype=torch.bfloat16):\n    loss = loss_fn(model(x), y)",
            "why": f"the GPU is the limit ({_pct(ev.gpu_util or 0)} busy); float32 matmuls run well below bf16 peak"}


@fix("larger-batch", "Use a larger batch (the GPU has memory to spare)", ("compute", "host.overhead"), 1)
def larger_batch(ev, verdict):
    if not ev.gpu or verdict.get("bottleneck") not in ("compute", "host.overhead"):
        return None
    if ev.gpu_mem_free_share is None or ev.gpu_mem_free_share < 0.4:
        return None
    share = verdict.get("share") or 0.0
    gain = cheaper_share(share, 0.5) if verdict["bottleneck"] == "host.overhead" else 1.1
    batch = (ev.loader or {}).get("batch_size")
    target = batch * 2 if batch else None
    fits = ""
    if batch and ev.largest_batch:
        if ev.largest_batch <= batch:
            return None         # the memory holds no larger batch
        target = min(batch * 2, ev.largest_batch)
        fits = f"; the largest batch that fits is about {ev.largest_batch} (from how the peak grows with the batch)"
    return {"estimated_speedup": gain, "where": _where(ev),
            "detail": f"batch_size {batch} -> {target}" if batch else "double the batch size",
            "snippet": f"DataLoader(dataset, batch_size={target or '2 * B'}, ...)   # scale the learning rate accordingly",
            "why": f"{_pct(ev.gpu_mem_free_share)} of GPU memory is free; per-step overheads are amortised over more "
                   f"samples{fits}"}


def _gpu0_load(figures) -> str:
    """GPU 0 against the others (DataParallel gathers there): utilisation and memory, when measured."""
    first = [f for f in figures if f[0] == 0]
    rest = [f for f in figures if f[0] != 0]
    if not first or not rest:
        return ""
    _, util0, mem0 = first[0]
    utils = [u for _, u, _ in rest if u is not None]
    mems = [m for _, _, m in rest if m]
    parts = []
    if util0 is not None and utils:
        parts.append(f"GPU 0 busy {util0:.0%} against {sum(utils) / len(utils):.0%} on the others")
    if mem0 and mems:
        parts.append(f"GPU 0 holds {mem0 / 1e9:.1f} GB against {sum(mems) / len(mems) / 1e9:.1f} GB")
    return " (" + "; ".join(parts) + ")" if parts else ""


@fix("ddp", "Use DistributedDataParallel: one process per GPU", ("compute", "input.cpu", "input.disk",
                                                                   "input.latency", "transfer.h2d", "host.overhead"), 3)
def ddp(ev, verdict):
    """nn.DataParallel drives every GPU from one process: one Python thread per GPU under one GIL,
    inputs scattered from and outputs gathered on GPU 0 each step, the model copied to every GPU each
    step. DDP runs a process per GPU with its own loader and overlaps the gradient all-reduce with
    the backward pass. Where DataParallel is used it leads the fixes: the others are measured
    through it."""
    launch = "torchrun --nproc-per-node=NGPU train.py"
    snippet = ("torch.distributed.init_process_group('nccl'); local_rank = int(os.environ['LOCAL_RANK'])\n"
               "torch.cuda.set_device(local_rank)\n"
               "model = torch.nn.parallel.DistributedDataParallel(model.to(local_rank), device_ids=[local_rank])\n"
               "loader = DataLoader(dataset, sampler=DistributedSampler(dataset), ...)   # each rank its shard\n"
               f"# launch: {launch}")
    if ev.data_parallel:
        where = ev.data_parallel_where
        if ev.gpu_count > 1:
            gain = 1.3
            why = (f"nn.DataParallel drives the {ev.gpu_count} GPUs from one process: one thread per GPU under one "
                   "GIL, scatter and gather on GPU 0 every step" + _gpu0_load(ev.gpu_figures or [])
                   + "; DDP commonly runs such jobs 1.3x faster or more")
        else:
            gain = None
            why = ("nn.DataParallel is in use; " + ("with one GPU it only adds a model copy per step" if ev.gpu else
                   "without a GPU here it runs the module as is, so its cost cannot be measured on this machine")
                   + "; on several GPUs DDP avoids the single process's GIL and the gather on GPU 0")
        return {"estimated_speedup": gain, "where": where,
                "detail": f"replace nn.DataParallel with DistributedDataParallel and launch one process per GPU: {launch}",
                "snippet": snippet, "why": why,
                "first": "first: nn.DataParallel is in use, and the other estimates are measured through it"}
    if not ev.gpu or verdict.get("bottleneck") != "compute" or ev.gpu_count <= 1:
        return None
    return {"estimated_speedup": 0.9 * ev.gpu_count, "where": None,
            "detail": f"{launch} with model = DDP(model, device_ids=[local_rank])", "snippet": snippet,
            "why": f"{ev.gpu_count} GPUs are present and the job used one"}


ACCUMULATE = 4      # micro-batches per optimizer step that the accumulation fix proposes


@fix("ddp-no-sync", "Accumulate gradients over several micro-batches with DDP's no_sync()", ("comm",), 2)
def ddp_no_sync(ev, verdict):
    """The gradient all-reduce runs once per optimizer step instead of once per batch: with k
    micro-batches per step, k-1 of every k all-reduces go."""
    if verdict.get("bottleneck") != "comm" or not verdict.get("share"):
        return None
    share = verdict["share"]
    k = ACCUMULATE
    gain = 1.0 / (1.0 - share * (k - 1) / k)
    return {"estimated_speedup": gain, "where": None,
            "detail": f"all-reduce once every {k} batches: wrap the backward of the first {k - 1} in model.no_sync() "
                      f"and step the optimizer on the {k}th (the loss divided by {k}); the batch per update grows {k}x",
            "snippet": (f"sync = (i + 1) % {k} == 0\n"
                        "with (contextlib.nullcontext() if sync else model.no_sync()):\n"
                        f"    (loss_fn(model(x), y) / {k}).backward()\n"
                        "if sync:\n"
                        "    optimizer.step(); optimizer.zero_grad()"),
            "why": f"{share:.0%} of each step waits in collectives; {k - 1} of every {k} all-reduces go, so a step is "
                   f"up to {gain:.2f}x faster"}


@fix("ddp-buckets", "Fewer, larger gradient buckets in DDP (bucket_cap_mb)", ("comm",), 1)
def ddp_buckets(ev, verdict):
    """Larger buckets mean fewer all-reduce calls, each started as soon as its gradients are ready,
    so more of the communication overlaps the rest of the backward pass. The gain depends on the
    network and the model's layer sizes: it is not estimated; `gpuprof try` can measure it."""
    if verdict.get("bottleneck") != "comm":
        return None
    return {"estimated_speedup": None, "where": None,
            "detail": "DistributedDataParallel(model, bucket_cap_mb=100, gradient_as_bucket_view=True) "
                      "(the default bucket is 25 MB); with static graphs also static_graph=True",
            "snippet": "model = DistributedDataParallel(model, device_ids=[local_rank], bucket_cap_mb=100, "
                       "gradient_as_bucket_view=True)",
            "why": f"{verdict['share']:.0%} of each step waits in collectives; fewer, larger all-reduces overlap "
                   "better with the backward pass"}
