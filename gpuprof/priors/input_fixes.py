"""Priors of the fixes for an input bottleneck: how much faster more workers make batches on a
CPU-only machine and from a disk, and how much cheaper a cache, batched device work, staging on the
GPU, a sized HDF5 chunk cache and draft-mode decoding make a batch."""

from gpuprof.priors.prior import Prior

TITLE = "Fixes for the input"

CPU_ONLY_WORKER_RATE = Prior(
    id="num-workers.cpu-only-worker-rate", kind="efficiency", low=0.45, value=0.6, high=1.0,
    unit="of the rate their count promises",
    source="`gpuprof try` on the 2-core x86-64 VM (Python 3.11, torch 2.13 CPU), 2026-11-22: two workers made "
           "batches at about 0.5-0.7 of twice the inline rate, sometimes slower than inline (docs/advice.md, "
           "'Workers on a CPU-only machine'; docs/benchmarks.md); the ends 0.45-1.0 set 2026-11-25",
    programs=("examples/cpu_starved.py", "examples/disk_random_reads.py", "examples/cold_decode.py",
              "gpuprof/examples/demo_train.py"),
    used_for="num-workers on a CPU-only machine (CPU or disk producers): the producer capacity more workers "
             "promise is scaled by it; workers share the cores with the training's intra-op threads and every "
             "batch is pickled",
    without_it="workers count at their full rate: cold_decode's two workers estimated 1.63x and measured 0.78x "
               "before it")

PARALLEL_READS = Prior(
    id="num-workers.parallel-reads", kind="bound", low=1.3, value=2.0, high=4.0, unit="x",
    source="`gpuprof try` on the 2-core x86-64 VM, 2026-11-22: disk_random_reads' four readers measured 1.12x "
           "against 1.93x, so parallel reads were capped at 2x (docs/benchmarks.md; 1.83x in a later sitting); "
           "checked 2026-12-02 with bench/disk_queue.py (random 32 KiB preads, each dropped from the page cache "
           "first): 4 readers 1.35x one reader's rate, 8 readers 1.31x, so the low end is 1.3x (it was 1.5x); the "
           "high end (4x, an SSD's queue) is reasoned, not measured here",
    programs=("examples/disk_random_reads.py", "bench/disk_queue.py"),
    used_for="num-workers for a disk-bound input: the most times faster parallel reads go (a disk's useful queue "
             "depth is not measured)",
    without_it="readers scale with their count: four readers estimated 1.93x where they measured 1.12x")

WAITING_WORKERS_PER_CORE = Prior(
    id="num-workers.waiting-workers-per-core", kind="bound", value=4, unit="workers a core",
    source="set 2026-11-22 (docs/advice.md, 'Worker counts the machine holds') as the most waiting workers a "
           "core the advice proposes; remote_source's 8 workers on the 2-core VM measured 10.4-10.8x "
           "(docs/benchmarks.md). Checked 2026-12-02 with bench/latency_workers.py (2 ms of waiting and a 20 KB "
           "JSON parse per sample, batches of 32): 4 workers a core gave 7.86x, about their count's 8x, so the "
           "capacity estimated at the bound holds; past it the gain went on (6 a core 12.7x, 8 a core 20.8x), so "
           "the bound is a cautious policy (each worker's memory and start), not where the gain ends",
    programs=("examples/remote_source.py", "bench/latency_workers.py"),
    used_for="num-workers for a latency-bound input: the most workers it proposes, which sets the capacity "
             "it estimates",
    without_it="a waiting producer gets as many workers as its wait asks for, and an estimate that grows with "
               "them")

CACHED_SAMPLE_COST = Prior(
    id="cache-preprocessed.times-cheaper", kind="assumed saving", low=3.0, value=6.0, high=40.0, unit="x",
    source="fitted on the benchmark corpus's calibrating half (bench/corpus/, 2-core x86-64 VM, torch 2.13 CPU, "
           "2026-11-27): the edit that computes each sample once measured 1.69x (audio_mel_features, 49% wait), "
           "2.54x (single_process_loop, 73%), 4.15x (tabular_csv_rows, 78%) and 1.44x (lightning_autoencoder, 21%): "
           "a cached sample 6.0, 6.0, 42 and more than 100 times cheaper than one made from scratch; the central 6 "
           "is the lower pair, the ends 3 (half of it) and 40. It replaced an assumed 2 (docs/advice.md: 'producers "
           "made 2x cheaper'), under which every measured gain lay above the estimate",
    programs=("bench/corpus/audio_mel_features", "bench/corpus/single_process_loop", "bench/corpus/tabular_csv_rows",
              "bench/corpus/lightning_autoencoder"),
    used_for="cache-preprocessed: how many times cheaper a cached sample (an index into prepared arrays, or raw "
             "data held in memory) is than one made from scratch; its ends are the estimate's",
    without_it="caching has no estimate and ranks by a prior only, behind every estimated fix")

BATCHED_ON_DEVICE = Prior(
    id="device-preprocessing.times-cheaper", kind="assumed saving", unit="x",
    value={"on a GPU": 10.0, "hand-written batcher, CPU": 5.0, "per-sample transforms, CPU": 2.0},
    source="assumed since the fix was written, 2026-11-21 (its docstring); not measured: its examples "
           "(sparse_to_dense.py, memmap_batcher.py) need a code change `gpuprof try` cannot apply",
    used_for="device-preprocessing: how many times cheaper a batch gets made with batched tensor ops on the "
             "GPU; on a CPU-only machine, a hand-written per-row batcher vectorised, or a DataLoader's "
             "per-sample transforms run on whole batches",
    without_it="the fix has no estimate and ranks by a prior only")

STAGED_ON_GPU = Prior(
    id="gpu-staging.times-cheaper", kind="assumed saving", value=10.0, unit="x",
    source="assumed since the fix was written, 2026-11-21; not measured",
    used_for="gpu-staging for an input bottleneck: a batch indexed from data already on the GPU",
    without_it="staging has no estimate for an input bottleneck")

CHUNK_CACHE_MOST = Prior(
    id="hdf5-chunk-cache.most-times-cheaper", kind="bound", value=20.0, unit="x",
    source="a cap set with the hit-rate model, 2026-11-23; checked on the 2-core VM: hdf5_tiny_cache estimated "
           "9.6-13.9x against 13.3-14.4x measured by `gpuprof try` (2026-11-22/23), hdf5_per_sample 2.8x against "
           "3.9x keeping the handle by hand (docs/benchmarks.md)",
    programs=("examples/hdf5_tiny_cache.py", "tests/programs/hdf5_per_sample.py"),
    used_for="hdf5-chunk-cache: the most times cheaper a batch gets, however large the read amplification",
    without_it="the estimate grows with the amplification without bound, though copies and the rest of the "
               "batch's making stay")

DRAFT_MODE_DECODE_SAVED = Prior(
    id="decode-reduced-size.decode-saved", kind="assumed saving",
    unit="of the decode's time, by draft reduction 2, 4 or 8",
    value={2: (0.05, 0.15, 0.35), 4: (0.1, 0.25, 0.5), 8: (0.15, 0.3, 0.6)},
    source="measured on the 2-core x86-64 VM, 2026-11-25: 500x375 JPEGs at quality 90 reduced 4x saved 17-23% "
           "of their decode for grainy pictures, 18% for noise; scales 2 and 8 and the ends are not measured "
           "(entropy decoding, the part draft mode leaves, is a smaller share of smoother photos); checked "
           "2026-12-01 on the corpus's calibrating half (bench/corpus, truths by editing, 2026-11-27): tar_shards' "
           "draft-mode edit measured 1.36x inside the estimate's 1.19-3.14x; image_folder_decode's 1.06x fell "
           "just under its 1.11-2.36x (load average 3.4-5.3 from another session's tests)",
    programs=("examples/photo_decode.py", "bench/corpus/tar_shards"),
    used_for="decode-reduced-size: the share of the decode JPEG draft mode saves at each reduction, its ends the "
             "estimate's (photo_decode: estimated 1.08-1.75x, measured 1.30x)",
    without_it="only the resize's saving is counted, and the fix reads smaller than it measured")

DRAFT_MODE_MOST_SAVED = Prior(
    id="decode-reduced-size.most-saved", kind="bound", value=0.9, unit="of a sample's making (CPU)",
    source="chosen with the fix, 2026-11-25: whatever share the probe timed for decoding and resizing, a sample's "
           "making keeps at least a tenth (reading the file, the program's other transforms); not measured",
    used_for="decode-reduced-size: the most of a sample's CPU time the reduced decode and resize save, at every "
             "end of the estimate (a sample at most 10x cheaper)",
    without_it="where the timed decode and resize are nearly all of a sample's making, the sample looks nearly "
               "free to make and the estimate has no bound")

COLLATE_RESIDUAL = Prior(
    id="collate-once.residual", kind="assumed saving", low=0.03, value=0.13, high=0.3,
    unit="of the collate's time left once its work is done ahead",
    source="measured on the 2-core x86-64 VM (Python 3.11, transformers 5.24, fast WordLevel tokenizers), "
           "2026-11-27: tests/programs/hf_trainer_eval.py's 16 texts of 40-120 words tokenized and padded to 128 took "
           "8.1 ms a batch under other load, DataCollatorWithPadding over them tokenized ahead 0.79 ms (0.10); "
           "bench/corpus/hf_trainer_text's collator (a normalizer and punctuation split, 40-160 words, padded to "
           "128) 3.13 ms against 0.56 ms padding alone on an idle machine (0.18); the central 0.13 is their "
           "geometric middle, the ends by reasoning: a slow (Python) tokenizer leaves less, short texts and "
           "dynamic padding more",
    programs=("tests/programs/hf_trainer_eval.py", "bench/corpus/hf_trainer_text"),
    used_for="collate-once: the share of today's collate a batch still pays for (padding, stacking what was "
             "prepared ahead)",
    without_it="the collate's whole time counts as saved, and the estimate's high end is the only end")
