"""Scale: a synthetic run of 10^6 steps and a 24-hour sample stream through the record, the
analysis and the report. Prints the event-file, report, trace and HTML sizes, the report time,
peak memory, and checks that downsampling keeps the verdict.

    python bench/scale.py [--steps 1000000] [--hours 24]
"""

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from gpuprof.capture.probes.dataloader import FETCH_FIELDS  # noqa: E402
from gpuprof.capture.probes.stream import Stream  # noqa: E402
from gpuprof.record.atomic import write_json_atomic  # noqa: E402
from gpuprof.record.events import EventWriter  # noqa: E402
from gpuprof.record.reader import load_run  # noqa: E402
from gpuprof.record.schema import EVENTS_DIR, GPU_FILE, RUN_FILE, RUN_FORMAT, SYSTEM_FILE  # noqa: E402
from gpuprof.present.reporting.build import build_report  # noqa: E402
from gpuprof.capture.samplers.columns import ColumnStore  # noqa: E402
from gpuprof.capture.samplers.system import SYSTEM_COLUMNS  # noqa: E402

STEP, WAIT, FETCH_WALL, FETCH_CPU, COLLATE = 0.010, 0.007, 0.0068, 0.0065, 0.0002


def write_events(folder: str, steps: int, full: int) -> None:
    """Events as an input-bound single-process training loop's probes would write them."""
    writer = EventWriter(folder, flush_interval=3600, max_buffer=4096)
    writer.emit({"k": "process", "pid": 1, "ppid": 0, "argv": ["train.py"], "origin": "exec", "t": 0.0})
    writer.emit({"k": "loader", "l": "1:1", "t": 0.0, "where": "train.py:42", "batch_size": 32, "num_workers": 0,
                 "pin_memory": False, "prefetch_factor": None, "persistent_workers": False, "drop_last": False,
                 "context": None, "dataset": "Images", "sampler": "RandomSampler", "batch_sampler": "BatchSampler",
                 "iterable": False})
    step = Stream("step", ("f", "fc"), full=full, sink=writer)
    batch = Stream("batch", ("w",), {"l": "1:1"}, full=full, sink=writer)
    fetch = Stream("fetch", FETCH_FIELDS, {"l": "1:1", "w": None, "ds": "Images"}, full=full, sink=writer)
    for i in range(steps):
        t = 10.0 + i * STEP
        fetch.add(t + WAIT - 0.0001, FETCH_WALL, FETCH_CPU, 0.0001, None, 0, 0, FETCH_CPU, COLLATE, COLLATE)
        batch.add(t + WAIT, WAIT)
        step.add(t + STEP, None, None)
    for stream in (step, batch, fetch):
        stream.flush()
    writer.close()


def write_samples(folder: str, hours: float, interval: float = 0.1) -> int:
    store = ColumnStore(SYSTEM_COLUMNS)
    ticks = int(hours * 3600 / interval)
    for i in range(ticks):
        store.append({"t": i * interval, "dt": interval, "cpu_user": 0.5, "cpu_system": 0.05, "cpu_iowait": 0.0,
                      "cpu_steal": 0.0, "cpu_idle": 0.45, "job_user_s": 0.1, "job_system_s": 0.005,
                      "job_read_bytes": 0, "job_read_chars": 4096, "job_rss": 2 << 30, "job_procs": 1,
                      "disk_read_bytes": 0, "disk_write_bytes": 0, "disk_busy": 0.0})
    data = store.to_dict()
    data.update(interval_s=interval, cpu_count=2, has_pressure=False, processes=[])
    write_json_atomic(os.path.join(folder, SYSTEM_FILE), data)
    return ticks


def make_run(folder: str, steps: int, hours: float, full: int) -> dict:
    os.makedirs(os.path.join(folder, EVENTS_DIR))
    start = time.perf_counter()
    write_events(os.path.join(folder, EVENTS_DIR), steps, full)
    ticks = write_samples(folder, hours)
    write_json_atomic(os.path.join(folder, GPU_FILE), {"available": False, "reason": "synthetic", "gpus": []})
    write_json_atomic(os.path.join(folder, RUN_FILE), {
        "format": RUN_FORMAT, "status": "finished", "command": ["python", "train.py"], "kind": "script",
        "target": "train.py", "duration_s": steps * STEP, "exit_code": 0, "returncode": 0, "signal": None,
        "interrupted": False, "settings": {"interval_s": 0.1, "probes": True, "warmup_steps": 0}})
    return {"write_s": time.perf_counter() - start, "ticks": ticks}


def big_event_file(folder: str, megabytes: int) -> None:
    """A run whose one event file holds `megabytes` of single-item events (no columnar rows, no
    blocks): the worst case for `gpuprof report`."""
    make_run(folder, 10, 0.01, full=5000)
    path = os.path.join(folder, EVENTS_DIR, "big.jsonl")
    line_count = 0
    with open(path, "w") as handle:
        handle.write('{"k":"process","pid":7,"ppid":1,"argv":["train.py"],"origin":"exec","t":0.0}\n')
        written = 0
        while written < megabytes * 1e6:
            lines = "".join(f'{{"k":"batch","l":"7:1","t":{10 + i * 0.01:.4f},"w":0.007}}\n'
                            f'{{"k":"step","t":{10.01 + i * 0.01:.4f}}}\n' for i in range(line_count, line_count + 50000))
            handle.write(lines)
            written += len(lines)
            line_count += 50000


def report_peak_rss(folder: str) -> tuple:
    """(seconds, peak RSS in MB) of `gpuprof report FOLDER --format json` in a fresh process."""
    import subprocess
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", "import resource, sys; from gpuprof.commands.cli import main\n"
                           "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
                           "sys.stderr.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))",
                           "report", folder, "--format", "json"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          env=dict(os.environ, PYTHONPATH=os.path.dirname(HERE)))
    return time.perf_counter() - start, int(done.stderr.strip().splitlines()[-1]) / 1024


def folder_bytes(folder: str) -> int:
    return sum(os.path.getsize(os.path.join(root, f)) for root, _, files in os.walk(folder) for f in files)


def pictures_for(folder: str, report: dict) -> dict:
    """Sizes (bytes) and build times of the trace and the HTML page of a run."""
    from gpuprof.present.reporting.pictures import report_text
    out = {}
    for fmt in ("trace", "html"):
        start = time.perf_counter()
        text = report_text(folder, report, fmt)
        out[fmt] = (len(text.encode()), time.perf_counter() - start)
    return out


def report_for(folder: str) -> tuple:
    start = time.perf_counter()
    report = build_report(load_run(folder), run_dir=folder)
    return report, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--hours", type=float, default=24.0)
    parser.add_argument("--compare-steps", type=int, default=100_000,
                        help="steps for the full-resolution against downsampled verdict check")
    parser.add_argument("--big-file-mb", type=int, default=300,
                        help="size of a single-item event file for the report's memory bound (0: skip)")
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="gpuprof-scale-")
    try:
        big = os.path.join(root, "big")
        made = make_run(big, args.steps, args.hours, full=5000)
        report, seconds = report_for(big)
        text = json.dumps(report)
        print(f"{args.steps} steps, {made['ticks']} sampler ticks ({args.hours:g} h at 100 ms)")
        print(f"  run folder {folder_bytes(big) / 1e6:.1f} MB (events {folder_bytes(os.path.join(big, EVENTS_DIR)) / 1e6:.1f} MB), "
              f"report {len(text) / 1e3:.1f} KB, report built in {seconds:.2f} s")
        pictures = pictures_for(big, report)
        print(f"  trace {pictures['trace'][0] / 1e6:.1f} MB in {pictures['trace'][1]:.1f} s, "
              f"HTML {pictures['html'][0] / 1e6:.2f} MB in {pictures['html'][1]:.1f} s")
        print(f"  system series stored {len(json.load(open(os.path.join(big, SYSTEM_FILE)))['columns']['t'])} rows")
        print(f"  verdict {report['verdict']['bottleneck']} share {report['verdict']['share']:.3f}, "
              f"steps counted {report['steps']['count']}, median step {report['steps']['median_step_s'] * 1e3:.2f} ms")
        full, down = os.path.join(root, "full"), os.path.join(root, "down")
        make_run(full, args.compare_steps, 1.0, full=10 ** 9)
        make_run(down, args.compare_steps, 1.0, full=5000)
        a, _ = report_for(full)
        b, _ = report_for(down)
        same = (a["verdict"]["bottleneck"] == b["verdict"]["bottleneck"]
                and abs(a["verdict"]["share"] - b["verdict"]["share"]) < 0.01
                and [x["id"] for x in a["advice"]] == [x["id"] for x in b["advice"]])
        print(f"  {args.compare_steps} steps full resolution vs downsampled: verdict {a['verdict']['bottleneck']} "
              f"{a['verdict']['share']:.3f} vs {b['verdict']['bottleneck']} {b['verdict']['share']:.3f}, "
              f"events {folder_bytes(os.path.join(full, EVENTS_DIR)) / 1e6:.1f} MB vs "
              f"{folder_bytes(os.path.join(down, EVENTS_DIR)) / 1e6:.1f} MB: {'same' if same else 'DIFFERENT'}")
        print(f"  peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
        if args.big_file_mb:
            huge = os.path.join(root, "huge")
            big_event_file(huge, args.big_file_mb)
            seconds, peak = report_peak_rss(huge)
            print(f"  gpuprof report on a {folder_bytes(os.path.join(huge, EVENTS_DIR)) / 1e6:.0f} MB event file "
                  f"of single items: {seconds:.1f} s, peak RSS {peak:.0f} MB")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
