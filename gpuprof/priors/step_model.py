"""Priors of the step model every input estimate shares (gpuprof/advise/model.py): what shipping a
batch between processes costs, and how far an estimate's range reaches."""

from gpuprof.priors.prior import Prior

TITLE = "The step model"

#: The CPU-only examples whose `gpuprof try` measurements set and check the range (docs/benchmarks.md).
TRIED_EXAMPLES = ("examples/cpu_starved.py", "examples/disk_random_reads.py", "examples/hdf5_tiny_cache.py",
                  "examples/remote_source.py", "examples/contended_workers.py")

SHIPPING_PER_BATCH = Prior(
    id="shipping.per-batch", kind="measured cost", value=1.5e-3, low=0.9e-3, high=3.5e-3, unit="s",
    source="measured on the 2-core x86-64 VM (Python 3.11, torch 2.13 CPU, torch's default file_descriptor "
           "sharing): first on examples/short_steps_tabular.py, 2026-11-23, about 1 ms for a batch of a few KB "
           "pickled into shared memory by a worker, queued, and unpickled by the woken training process "
           "(docs/advice.md, 'Shipping batches between processes'); then with bench/shipping_cost.py (one worker "
           "always ahead, the training process's time in next()), 2026-12-02, in three sittings: beside 8 ms "
           "steps 0.9-1.6 ms for four prepared shapes of 2-196 KB and 0.9-1.8 ms for short_steps_tabular's own "
           "rows (24 KB); beside 4 ms steps 1.3-3.0 ms and 0.9-3.3 ms (the worker and the training process then "
           "share the cores more often). The two programs agree within a sitting; the sittings differ 1.5x. "
           "The value is the middle of the 8 ms figures, the ends the least and the most measured. Most of the "
           "cost is the sharing strategy (a round trip to the worker for each tensor's descriptor): with "
           "file_system a batch took 0.45-0.85 ms for 1-8 tensors against 1.3-4.5 ms",
    programs=("examples/short_steps_tabular.py", "bench/shipping_cost.py", "bench/shipping_cost.py --tabular"),
    used_for="what moving batch making into workers adds to each step (num-workers from 0, loader-workers): "
             "joins compute, and twice over the CPU bound's work; num-workers' pessimistic end takes the high end",
    without_it="workers look free to feed: on 2 ms steps num-workers estimated 1.39x where `gpuprof try` "
               "measured 0.58x")

SHIPPING_RATE = Prior(
    id="shipping.bytes-per-second", kind="measured cost", value=1.4e9, unit="B/s",
    source="measured on the 2-core x86-64 VM, 2026-11-23: 6.3 MB batches took 4.4 ms more to ship than "
           "batches of a few KB (docs/advice.md, 'Shipping batches between processes')",
    used_for="the part of shipping a batch that grows with its bytes",
    without_it="large batches ship at the cost of small ones, and workers are advised for steps their "
               "batches' copies alone would fill")

STEP_SPREAD_BOUNDS = Prior(
    id="range.step-spread", kind="bound", low=0.05, value=0.1, high=0.3, unit="of the step time",
    source="set with the ranges, 2026-11-25 (docs/advice.md, 'The estimate is a range'); checked by "
           "tests/unit/test_estimate_range.py against every `gpuprof try` measurement in docs/benchmarks.md's "
           "three estimate-against-measured tables (2-core VM, 2026-11-22/23): 20 of 20 inside",
    programs=TRIED_EXAMPLES,
    used_for="how well the shares of a step are known: the measured steps' p90 over median, taken within "
             "5-30% (10% where the run has no spread); every range widens by it at both ends",
    without_it="steady steps give a range narrower than the run-to-run noise (±25% on the 2-core VM), "
               "jittery ones a range with no bound")

CPU_ONLY_COMPUTE_RELIEF = Prior(
    id="range.compute-relief-cpu-only", kind="efficiency", value=0.5, unit="of the compute part",
    source="`gpuprof try`'s input ceiling on this project's CPU-only examples, 2-core VM, 2026-11-22/23 "
           "(docs/benchmarks.md): the compute part of a step measured 0.04-1.07 of its size once producers "
           "left, median 0.56",
    programs=TRIED_EXAMPLES + ("examples/cold_decode.py", "examples/saturated_workers.py"),
    used_for="the optimistic end of an input fix's range on a CPU-only machine: the compute part of the step, "
             "slowed while producers share its cores, taken at half its size (never shedding more than the fix "
             "saves)",
    without_it="the high end ignores that compute speeds up once producers leave its cores: on the input-bound "
               "examples the input ceiling measured above its estimate 1/(1-w)")

GPU_COMPUTE_RELIEF = Prior(
    id="range.compute-relief-gpu", kind="efficiency", value=0.85, unit="of the compute part",
    source="assumed with the ranges, 2026-11-25: with a GPU the host only launches work, so producers slow a "
           "step's compute part less than on a CPU-only machine; not measured",
    used_for="the optimistic end of an input fix's range on a GPU machine, as the CPU-only relief above",
    without_it="a GPU run's high end takes the CPU-only relief (too generous where the host only launches "
               "kernels) or none")

ONE_NUMBER_SAVING_ENDS = Prior(
    id="range.assumed-saving-ends", kind="bound", low=0.75, high=1.15,
    source="docs/benchmarks.md's estimate-against-measured tables (2-core VM, 2026-11-22/23): measured over "
           "estimated ranged 0.78-1.36 for fixes that state one number, beyond the measurement noise; set "
           "2026-11-25",
    programs=TRIED_EXAMPLES,
    used_for="a fix that states one number and no ends of its own: the pessimistic end takes its saving (or its "
             "speed-up, where nearer) at 0.75, the optimistic end the rest of its step beside compute at 1/1.15",
    without_it="such a fix's range comes from the step's spread alone, narrower than the 0.78-1.36 its "
               "measurements showed")
