"""The system samplers of a profiled notebook cell, in a helper process: `python -m
gpuprof.commands.notebook.sampler PID RUN_DIR INTERVAL GPU`. Outside the kernel, so no sampler thread holds
the kernel's GIL while the cell runs; detached from the kernel's tree (a double fork), so its own
CPU is not counted as the job's. It says "ready" once sampling, and on the end of its stdin (the
cell is over, or the kernel is gone) saves system.json and gpu.json and says "saved"."""

import os
import sys


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    pid, run_dir, interval, gpu = int(args[0]), args[1], float(args[2]), args[3] == "1"
    if os.fork() > 0:
        os._exit(0)                # the kernel reaps this one; the sampler lives on outside its tree
    import time
    from gpuprof.capture.launch.supervisor import step_aside
    step_aside()                   # the cell's work comes first
    from gpuprof.capture.launch.samplers import JobSamplers
    from gpuprof.capture.launch.session import load_nvml

    samplers = JobSamplers(interval, gpu, load_nvml, time.monotonic)
    samplers.start(pid)
    _say("ready")
    try:
        sys.stdin.read()
    except (OSError, KeyboardInterrupt):
        pass
    samplers.stop()
    samplers.save(run_dir)
    _say("saved")
    return 0


def _say(word: str) -> None:
    try:
        sys.stdout.write(word + "\n")
        sys.stdout.flush()
    except OSError:
        pass


if __name__ == "__main__":
    sys.exit(main())
