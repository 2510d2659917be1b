"""One run (or several, where a fix has more than one way to answer) for each speed fix, shaped so
that its build applies: each fix's answer is then checked for a range or a reason it has none
(tests/unit/fixes/test_every_fix_has_a_range.py)."""

from gpuprof.record import startup_parts as parts
from tests.unit.fixes.cases import LOADER, evidence, gpu, model, on_cuda, situation
from tests.unit.fixes.env_cases import env_evidence, env_verdict, sb3_evidence

COMPUTE = situation("compute", 0.95)
CONTENDED = situation(findings=[{"bottleneck": "input.cpu", "share": 0.5, "evidence": {"contended": True}}])
HDF5 = {"file": "data.h5", "dataset": "/images", "chunks": [64, 32, 32], "chunk_bytes": 65536, "rdcc_nbytes": 1024,
        "rdcc_nslots": 521, "read_amplification": 64.0, "chunks_touched": 100, "reads": 100, "opens": 1,
        "reopened_per_read": False, "cache_holds_a_chunk": False}
#: Photos decoded at 500x375 for a 64-pixel model: 4 ms of a 5 ms sample decoding, 0.5 ms resizing.
PHOTOS = dict(LOADER, num_workers=2, images={"decoded": [500, 375], "target": [64, 64], "format": "JPEG",
                                             "decode_s": 0.004, "resize_s": 0.0005},
              producer={"cpu_s": 0.005 * 10 * 32, "batches": 10})
#: Text batches (16 x 128 token ids) whose collate tokenizes: 15 ms of each 16 ms batch.
TOKENIZING = dict(LOADER, batch={"dtype": "int64", "shape": [16, 128]},
                  batch_parts={"samples_s": 0.001, "collate_s": 0.015, "collate_share": 0.9375, "rest_s": 0.0001,
                               "collate": {"name": "Collator.__call__", "where": "train.py:30"}, "notable": True})
#: The float32 GPT whose step an H200 counted (tests/unit/test_math_modes.py).
GPT_STEP = {"by_op": {"mm": 3991098359808, "addmm": 1391569403904}, "dtype": "float32", "ops": None,
            "device": "cuda:0", "step_s": 0.1319}
PHASES = {"collection": {"share": 0.6}, "learning": {"share": 0.4}, "inference_calls": 1000,
          "inference_per_call_s": 0.0001}


def cpu_model_run(**fields):
    return evidence(wait_share=0.02, model=model(**fields), cpu_flags=("avx512_bf16",), optimizer_share=0.2)


def gpu_model_run(counted=False, **fields):
    step = dict(counted_step=GPT_STEP, gpu_name="NVIDIA H200") if counted else {}
    return evidence(**gpu(gpu_util=0.97), wait_share=0.02, model=on_cuda((9, 0), **fields), **step)


def startup(part):
    """A 20 s run whose 10 s start-up is half `part`."""
    return evidence(startup={"seconds": 10.0, "share": 0.5, "notable": True,
                             "parts": [{"part": part, "seconds": 5.0, "share": 0.5},
                                       {"part": parts.IMPORTS, "seconds": 5.0, "share": 0.5}]})


def rollout(largest):
    parts_ = {"env": 0.05, "inference": 0.1, "conversions": 0.1, "rest": 0.05, largest: 0.35}
    return env_evidence(0.05, phases=dict(PHASES, parts=parts_, largest=largest))


def restarted(**loader):
    return evidence(loader=dict(LOADER, num_workers=2, epochs=4, epoch_start_wait_s=8.0, **loader))


#: fix id -> [(what the case is, evidence, situation)].
CASES = {
    "num-workers": [("inline batches, CPU-bound", evidence(), situation())],
    "training-threads": [("two threads beside two workers on two cores",
                          evidence(loader=dict(LOADER, num_workers=2, torch_threads=2), cpu_count=2, wait_share=0.11,
                                   producer_cores=0.78, training_cpu_wait=0.44, training_cores=0.71, cores_busy=1.83,
                                   cores_free=0.17, machine_idle=0.1), CONTENDED)],
    "persistent-workers": [("workers started each epoch", restarted(), situation())],
    "hdf5-chunk-cache": [("a cache smaller than a chunk", evidence(hdf5=[HDF5]), situation())],
    "batch-echoing": [("an input wait", evidence(), situation())],
    "background-prefetch": [("a hand-written loop waiting on reads",
                             evidence(wait_source="before-first-forward", loader=None, producer_cpu_ratio=0.05),
                             situation("input.latency"))],
    "loader-workers": [("a batch function in the training thread",
                        evidence(wait_source="sampled", loader=None, data_where="get_batch (train.py:12)",
                                 producer_cores=0.5), situation())],
    "concurrent-fetch": [("a DataLoader waiting on a remote store", evidence(producer_cpu_ratio=0.05),
                          situation("input.latency"))],
    "device-preprocessing": [("per-sample transforms on a CPU", evidence(), situation())],
    "cache-preprocessed": [("deterministic preparation", evidence(), situation()),
                           ("random augmentation in the per-sample path",
                            evidence(loader=dict(LOADER, augmentation={"random": ["RandomHorizontalFlip"]})),
                            situation())],
    "collate-once": [("a tokenizing collate making most of each batch",
                      evidence(loader=TOKENIZING), situation())],
    "decode-reduced-size": [("photos decoded far larger than the model's input",
                             evidence(loader=PHOTOS, producer_cores=1.0), situation())],
    "gpu-staging": [("an input wait on a GPU with memory to spare", evidence(**gpu()), situation())],
    "pin-memory": [("pageable copies", evidence(copies={"count": 100, "bytes": 4e9, "pageable_bytes": 4e9},
                                                copy_share=0.3, **gpu()), situation("transfer.h2d", 0.3))],
    "uint8-transfer": [("float batches of byte values",
                        evidence(loader=dict(LOADER, batch={"dtype": "float32", "shape": [256, 3, 64, 64],
                                                            "uint8_candidate": True, "uint8_form": "k/255"}),
                                 copy_share=0.4, **gpu()), situation("transfer.h2d", 0.4))],
    "mixed-precision": [("a CPU with bf16 instructions", cpu_model_run(), COMPUTE),
                        ("a counted step on an H200", gpu_model_run(counted=True), COMPUTE)],
    "compile": [("a model not compiled", cpu_model_run(), COMPUTE)],
    "channels-last": [("convolutions fed NCHW", cpu_model_run(convs=3, input_layout="nchw"), COMPUTE)],
    "fused-optimizer": [("Adam one tensor at a time", cpu_model_run(), COMPUTE)],
    "tf32": [("a step not counted", gpu_model_run(), COMPUTE),
             ("a counted step on an H200", gpu_model_run(counted=True), COMPUTE)],
    "cudnn-benchmark": [("convolutions on a GPU", gpu_model_run(convs=4), COMPUTE)],
    "larger-batch": [("a host-bound GPU", evidence(largest_batch=48, **gpu()), situation("host.overhead", 0.5)),
                     ("a compute-bound GPU", evidence(**gpu()), COMPUTE)],
    "ddp": [("DataParallel on two GPUs", evidence(data_parallel=True, **gpu(gpu_count=2)), situation()),
            ("DataParallel without a GPU", evidence(data_parallel=True), situation()),
            ("one of four GPUs used", evidence(**gpu(gpu_count=4)), COMPUTE)],
    "ddp-no-sync": [("waiting in collectives", evidence(), situation("comm", 0.4))],
    "ddp-buckets": [("waiting in collectives", evidence(), situation("comm", 0.4))],
    "cache-tokenised-dataset": [("building the dataset", startup(parts.DATASET), COMPUTE)],
    "lazy-dataset-indexing": [("indexing the files", startup(parts.INDEXING), COMPUTE)],
    "compile-cache": [("compiling", startup(parts.COMPILATION), COMPUTE)],
    "spawned-worker-imports": [("spawned workers restarted each epoch", restarted(context="spawn"), COMPUTE)],
    "async-vector-env": [("a SyncVectorEnv of 4", env_evidence(0.6), env_verdict())],
    "subproc-vec-env": [("an SB3 DummyVecEnv of 4 made with make_vec_env", sb3_evidence(0.6), env_verdict())],
    "vectorised-env": [("env steps 60% of the time", env_evidence(0.6), env_verdict())],
    "more-envs-per-call": [("no measured phases", env_evidence(0.6), env_verdict()),
                           ("policy inference the rollout's largest part", rollout("inference"), COMPUTE)],
    "rollout-inference": [("policy inference the rollout's largest part", rollout("inference"), COMPUTE)],
    "rollout-buffers": [("conversions the rollout's largest part", rollout("conversions"), COMPUTE)],
    "eval-loader-workers": [("evaluation batches made in the training process",
                             evidence(evaluation={"passes": 8, "seconds": 2.2, "share": 0.22, "wait_s": 2.0,
                                                  "input": {"wait_share": 0.9, "bottleneck": "input.cpu",
                                                            "where": "train.py:50", "num_workers": 0}}),
                             situation("compute", 0.99, findings=({"bottleneck": "evaluation.loop", "share": 0.22},)))],
}
