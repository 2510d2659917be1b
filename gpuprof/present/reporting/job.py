"""One report for a job that ran on several machines: one run folder per node (each written by its
own `gpuprof run`), merged into per-node and per-rank rows and one verdict for the job.

Clocks of different machines are not compared: every figure is a duration measured on one machine
(a rank's steps, its data wait), so the folders need no common time base."""

import os

from gpuprof.advise.rank import advise
from gpuprof.record.reader import RecordError, load_run
from gpuprof.present.reporting.build import build_report, cap_by_next_rank, judge_ranks
from gpuprof.present.reporting.one_job import check_one_job
from gpuprof.record.schema import RUN_FILE
from gpuprof.record import kinds


def run_folders(paths: list) -> list:
    """The run folders named: each path is a run folder, or a folder holding run folders (one level
    down, as `srun gpuprof run --out DIR` writes them), in a stable order. Raises RecordError."""
    found = []
    for path in paths:
        if os.path.isfile(os.path.join(path, RUN_FILE)):
            found.append(path)
            continue
        if not os.path.isdir(path):
            raise RecordError(f"{path}: no such run folder or report JSON" if not os.path.exists(path) else
                              f"{path} is not a run folder nor a report JSON")
        inside = sorted(os.path.join(path, name) for name in os.listdir(path)
                        if os.path.isfile(os.path.join(path, name, RUN_FILE)))
        if not inside:
            raise RecordError(f"{path}/{RUN_FILE} is missing: not a gpuprof run folder, nor a folder of run folders")
        found.extend(inside)
    unique: list = []
    for path in found:
        if os.path.realpath(path) not in {os.path.realpath(p) for p in unique}:
            unique.append(path)
    return unique


def build_job_report(run_dirs: list) -> dict:
    """The job's report from several run folders (one per node). Raises RecordError for folders that
    are not one job's nodes (gpuprof.present.reporting.one_job)."""
    records = [load_run(path) for path in run_dirs]
    check_one_job(run_dirs, records)
    reports = [build_report(record, run_dir=path) for record, path in zip(records, run_dirs)]
    hosts = [record["meta"].get("host") or f"node{i}" for i, record in enumerate(records)]
    groups = []
    for record, host in zip(records, hosts):
        for events in record.get("processes") or []:
            if events and events[0].get("k") == kinds.PROCESS and not events[0].get("host"):
                events[0] = dict(events[0], host=host)      # runs of an older gpuprof name no host
            groups.append(events)
    contexts = {host: {"system": report["system"], "memory": report.get("memory"), "probes": True,
                       "duration_s": report.get("duration_s")} for host, report in zip(hosts, reports)}
    first_meta = records[0]["meta"]
    ranks = judge_ranks(groups, first_meta, lambda trainer: contexts.get(trainer.get("host"), contexts[hosts[0]]))
    nodes = [_node_row(host, path, report) for host, path, report in zip(hosts, run_dirs, reports)]
    if ranks is None:
        base = dict(reports[0])
    else:
        headline_host = next((row["host"] for row in ranks["rows"] if row["rank"] == ranks["job"]["headline_rank"]),
                             hosts[0])
        base = dict(reports[hosts.index(headline_host)] if headline_host in hosts else reports[0])
        judged = ranks["judged"]
        base.update(ranks["sections"])
        base["verdict"], base["findings"] = judged["verdict"], judged["findings"]
        advice = advise(judged["evidence"], judged["verdict"], judged["findings"]) \
            if judged["verdict"].get("bottleneck") else []
        base["advice"] = cap_by_next_rank(advice, ranks["job"])
        base["ranks"], base["job"] = ranks["rows"], ranks["job"]
        for node in nodes:
            node["ranks"] = [row["rank"] for row in ranks["rows"] if row.get("host") == node["host"]]
    failed = [r["exit_code"] for r in reports if r.get("exit_code")]
    base["exit_code"] = failed[0] if failed else 0
    base["run_dir"] = run_dirs[0]
    base["run_dirs"] = list(run_dirs)
    base["nodes"] = nodes
    base["outcome"] = "; ".join(f"{node['host']}: {node['outcome']}" for node in nodes)
    base["duration_s"] = max((r.get("duration_s") or 0.0) for r in reports)
    base["notes"] = [f"{host}: {note}" for host, report in zip(hosts, reports) for note in report.get("notes") or []]
    return base


def _node_row(host: str, path: str, report: dict) -> dict:
    system = report.get("system") or {}
    job = system.get("job") or {}
    return {"host": host, "run_dir": path, "outcome": report.get("outcome"), "exit_code": report.get("exit_code"),
            "duration_s": report.get("duration_s"), "cpu_count": system.get("cpu_count"),
            "cores_busy": job.get("cores_busy"), "read_mb_s": (system.get("disk") or {}).get("read_mb_s"),
            "gpus": len(system.get("gpus") or []), "ranks": []}
