"""What the golden test compares: every output format of every saved run in tests/golden/runs, and
the advice for a set of evidence scenarios (GPU, transfer, host-overhead, comm) that the CPU-only
runs cannot produce. `python -m tests.golden.outputs --write` rewrites the expected files after a
deliberate change of the reports; the golden test fails on any other change, byte for byte."""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RUNS = os.path.join(HERE, "runs")
EXPECTED = os.path.join(HERE, "expected")
RUN_DIR = "/home/user/runs/RUN"      # stands for the folder the run is read from


def run_names() -> list:
    return sorted(os.listdir(RUNS))


def run_outputs(name: str) -> dict:
    """file name -> text, for one saved run."""
    from gpuprof.record.reader import load_run
    from gpuprof.present.render import formats
    from gpuprof.present.reporting.build import build_report

    record = load_run(os.path.join(RUNS, name))
    report = build_report(record, run_dir=RUN_DIR)
    out = {}
    for fmt, file_name, options in (("json", "report.json", {}), ("console", "console.txt", {}),
                                    ("console", "console-terminal.txt", {"terminal": True, "width": 100}),
                                    ("markdown", "report.md", {}), ("html", "report.html", {}),
                                    ("trace", "trace.json", {})):
        out[file_name] = formats.render(fmt, report, record=record, **options)
    return out


def scenarios() -> dict:
    """name -> the sections classify reads, for runs with a GPU or ranks."""
    def sections(wait=0.05, gpus=None, copies=None, batch=None, workers=0, cpu=0.95, source="dataloader",
                 epochs=1, start_wait=0.0):
        wall = 10.0
        loader = {"where": "train.py:42", "batch_size": 32, "num_workers": workers, "sampler": "RandomSampler",
                  "producer": {"batches": 100, "wall_s": wall, "cpu_s": cpu * wall, "system_cpu_s": 0.0,
                               "read_bytes": 0.0, "read_chars": 0.0},
                  "batch": batch, "epochs": epochs, "epoch_start_wait_s": start_wait}
        return {
            "steps": {"count": 51, "measured": 50, "data_wait_share": wait, "data_wait_source": source,
                      "window_s": 12.0,
                      "data_wait_cpu_share": cpu if source == "before-first-forward" else None},
            "dataloaders": [loader] if source == "dataloader" else [],
            "system": {"cpu_count": 8, "job": {"cores_busy": 1.0}, "cpu": {"idle": 0.5, "iowait": 0.0},
                       "pressure": {"io_some": 0.0, "cpu_some": 0.0}, "disk": {"busy": 0.1}, "gpus": gpus or []},
            "copies": copies or {"count": 0}, "hdf5": [], "duration_s": 14.0, "probes": True,
        }

    busy = [{"util_gpu": 0.97, "mem_used_max_bytes": 20e9, "mem_total_bytes": 80e9}]
    idle = [{"util_gpu": 0.2, "mem_used_max_bytes": 5e9, "mem_total_bytes": 80e9}]
    two = [dict(busy[0], index=0), dict(busy[0], index=1)]
    copies = {"count": 100, "bytes": 4e9, "pageable_bytes": 4e9, "seconds": 6.0, "timed": 100}
    candidate = {"dtype": "float32", "shape": [256, 3, 128, 128], "uint8_candidate": True, "uint8_form": "k/255"}
    return {
        "gpu-compute": sections(gpus=busy),
        "gpu-two-compute": sections(gpus=two),
        "gpu-host-overhead": sections(wait=0.02, gpus=idle),
        "gpu-transfer": sections(gpus=idle, copies=copies, batch=candidate),
        "gpu-input-cpu": sections(wait=0.6, gpus=idle, workers=2),
        "gpu-handwritten": sections(wait=0.5, gpus=idle, source="before-first-forward"),
        "handwritten-latency": sections(wait=0.6, source="before-first-forward", cpu=0.05),
        "restarted-workers": sections(wait=0.4, gpus=idle, workers=2, epochs=4, start_wait=3.0),
    }


def comm_verdict() -> dict:
    return {"bottleneck": "comm", "share": 0.45, "confidence": 0.8, "basis": "probes",
            "reason": "waits for rank 1", "summary": "Rank 0 waits for rank 1 45% of each step."}


def advice_outputs() -> dict:
    from gpuprof.judge.verdict.classify import classify
    from gpuprof.advise.rank import advise

    out = {}
    for name, data in scenarios().items():
        judged = classify(data)
        out[name] = {"verdict": judged["verdict"],
                     "advice": advise(judged["evidence"], judged["verdict"], judged["findings"])}
        if name == "gpu-compute":
            out["comm"] = {"advice": advise(judged["evidence"], comm_verdict(), [])}
    return {"advice.json": json.dumps(out, indent=1, sort_keys=True, default=str) + "\n"}


TRY_RECORD = os.path.join(HERE, "try", "try.json")


def try_outputs() -> dict:
    """The renderings of a saved `gpuprof try` record."""
    from gpuprof.present.render import formats

    with open(TRY_RECORD, "r", encoding="utf-8") as handle:
        record = json.load(handle)
    return {os.path.join("try", "console.txt"): formats.render("try-console", record),
            os.path.join("try", "console-terminal.txt"): formats.render("try-console", record, terminal=True,
                                                                        width=100),
            os.path.join("try", "try.md"): formats.render("try-markdown", record)}


def all_outputs() -> dict:
    """relative path -> text."""
    out = {}
    for name in run_names():
        for file_name, text in run_outputs(name).items():
            out[os.path.join(name, file_name)] = text
    out.update(advice_outputs())
    out.update(try_outputs())
    return out


def write() -> None:
    for path, text in all_outputs().items():
        target = os.path.join(EXPECTED, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(text)


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python -m tests.golden.outputs --write")
    write()
