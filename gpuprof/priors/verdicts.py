"""Priors of the verdict's own figures (gpuprof/judge): what the input costs when no step waits
for it, and the cost from which a contended input is the verdict."""

from gpuprof.priors.prior import Prior

TITLE = "The verdict's figures"

INPUT_FREE_CPU_ONLY = Prior(
    id="input-cost.efficiency-cpu-only", kind="efficiency", low=0.4, value=0.6, high=1.0,
    unit="of the producers' share of the CPU",
    source="held-out image trainers (two workers decoding JPEGs beside the training on 2 cores, waits under 1%) "
           "ran 1.15-1.22x faster with their input free, a saving of 13-18% of each step, which these ends hold "
           "for producer shares of 25-35%; the central 0.6 is the step model's guess, not a fit (2026-11-25, "
           "docs/advice.md, 'The input's cost when no step waits'); the high end's held-up time holds "
           "photo_decode's 1.58x measured on the 2-core VM (2026-11-25, docs/benchmarks.md)",
    programs=("held-out image trainers (not in this repository)", "examples/photo_decode.py"),
    used_for="a compute verdict whose workers take cores the training needs: the share of each step the input "
             "made free saves, and so the cap on every input fix there",
    without_it="the input's cost under a compute verdict is its producers' share of the CPU, as if the "
               "training turned every freed core into speed")

INPUT_FREE_GPU = Prior(
    id="input-cost.efficiency-gpu", kind="efficiency", low=0.25, value=0.5, high=1.0,
    unit="of the launching thread's wait for a core",
    source="assumed, 2026-11-25 (docs/advice.md, 'The input's cost when no step waits'); not measured on a GPU",
    used_for="a compute verdict on a GPU machine with no idle core: the share of the launching thread's wait "
             "for a core that stalls the device",
    without_it="every wait of the launching thread counts as device time lost")

CONTENDED_VERDICT_FROM = Prior(
    id="input.cpu.contended-bound", kind="threshold", value=0.25, unit="of each step",
    source="set 2026-11-24 from an 8-worker gzip HDF5 trainer on the 2-core VM: it waited 11-13% for data, its "
           "training threads waited for a core 19-23%, cost 0.29-0.32 in 3 of 3 runs; the input made free "
           "measured 1.45x (1.18-1.84), a saving of 31% (docs/advice.md); agreed by examples/contended_workers.py "
           "(two JPEG-decoding workers and two intra-op threads on the same VM): a 10% wait, cost 0.33, verdict "
           "input.cpu, and `gpuprof try`'s input ceiling measured the input made free at 1.77-2.03x, batch-echoing "
           "1.23-1.47x (docs/benchmarks.md)",
    programs=("tests/programs/hdf5_eight_workers.py", "examples/contended_workers.py"),
    used_for="the contended input's cost from which input.cpu is the verdict and its fixes lead (a visible "
             "wait needs 30%)",
    without_it="a contended input needs a visible wait's 30%: that trainer read compute, not input-bound")

UNCONTENDED_QUANTILE = Prior(
    id="input.env.uncontended-quantile", kind="threshold", value=0.1, unit="of a part's calls",
    source="reasoned, 2026-11-26: beside a process spinning on one of 2 cores, torch's two intra-op threads "
           "stretched SB3's policy calls from 0.9 to 5.4 ms on the mean while their fastest tenth stayed near the "
           "quiet pace (0.6-1.2 ms), and env steps rendering frames ran 1.1-1.4x slower; checked on the 2-core VM "
           "(tests/programs/sb3_ppo_render.py, docs/benchmarks.md): env stepping 78% quiet; beside the spinner 33% "
           "as measured and 79% at this pace with two threads, 79% and 84% with one; checked 2026-12-02 on a "
           "second program, gymnasium's PPO on CartPole (tests/programs/ppo_rollout.py, one torch thread, "
           "bench/busy_env_share.py, 3 rounds in turns): env stepping 12.3-12.8% quiet and 12.4-12.7% beside the "
           "spinner (one core taken), the verdict compute in all six",
    programs=("tests/programs/sb3_ppo_render.py", "tests/programs/ppo_rollout.py"),
    used_for="input.env on a busy machine: each rollout part and the update at the pace of their fastest calls, "
             "so env stepping's share is the job's alone; the rollout fixes read the same parts",
    without_it="beside a busy process env stepping's share is the measured one, which the other process's fight "
               "with torch's threads shrinks (78% read as 33%)")
