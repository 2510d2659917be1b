"""The terminal report's evidence: the training loop, the ranks and nodes of a job, each DataLoader,
copies and files, memory, the machine and the GPUs, and the notes. Each section is a function over
the Report that returns a renderable or None."""

from typing import Mapping, Optional

from rich.console import Group
from rich.table import Table
from rich.text import Text

from gpuprof.judge.sections.batch_parts import NOTABLE_SHARE, collate_words
from gpuprof.judge.sections.gpus import slowdown_words
from gpuprof.record.report_format import Report
from gpuprof.present.render.console_layout import hanging
from gpuprof.present.render.copies_text import copies_rows
from gpuprof.present.render.gpu_text import gpu_name, gpu_phrases, job_gpus_line, rank_gpus_text
from gpuprof.present.render.units import pct, plural, producing_cpu, rate, seconds, size, spread_text, workers_words


def loop_table(report: Report):
    steps = report.get("steps") or {}
    if not steps.get("count"):
        return None
    table = Table(title="\nTraining loop", title_justify="left", show_header=False, box=None, padding=(0, 2))
    table.add_column(style="dim")
    table.add_column()
    source = {"optimizer": "optimizer steps", "dataloader": "DataLoader batches, taken as steps (no optimizer step "
              "was seen)", "backward": "backward passes, taken as steps (parameters updated without an optimizer)"
              }.get(steps.get("source") or "", "steps")
    table.add_row("steps", f"{steps['count']} {source}; {steps.get('measured', 0)} measured after "
                  f"{plural(steps.get('warmup', 0), 'warm-up step')}")
    table.add_row("step time", f"median {seconds(steps.get('median_step_s'))}, mean {seconds(steps.get('mean_step_s'))}{spread_text(steps)}")
    wait_from = {"dataloader": "blocked in the DataLoader",
                 "before-first-forward": "between a step's end and the next forward",
                 "sampled": f"making batches inside the step, in {steps.get('data_wait_where') or 'host code'} (sampled)"
                 }.get(steps.get("data_wait_source") or "", "")
    table.add_row("data wait", f"{pct(steps.get('data_wait_share'))} of step time {wait_from}"
                  if steps.get("data_wait_share") is not None else "n/a")
    evaluation = steps.get("evaluation")
    if evaluation:
        over = "with the model in eval mode" if evaluation.get("loaders") == [] else "over other loaders"
        table.add_row("evaluation", f"{plural(evaluation['passes'], 'pass', 'passes')} {over}, "
                      f"{seconds(evaluation['seconds'])} ({pct(evaluation['share'])} of the window"
                      + (f", {pct(evaluation['wall_share'])} of the run" if evaluation.get("wall_share") is not None
                         else "") + "): left out of step time and data wait")
        if (evaluation.get("input") or {}).get("summary"):
            table.add_row("", f"its input: {evaluation['input']['summary']}")
    if steps.get("samples_per_second"):
        table.add_row("throughput", f"{steps['samples_per_second']:.1f} samples/s "
                      f"({steps['steps_per_second']:.1f} steps/s x batch {steps.get('batch_size')})")
    rank = (report.get("verdict") or {}).get("rank")
    if report.get("ranks") and rank is not None:
        table.add_row("rank", f"these figures are rank {rank}'s, the rank that sets the job's pace")
    return table


def ranks_table(report: Report):
    """One row per rank: its step, its own work, its data wait, its waiting on the others, its verdict."""
    rows = report.get("ranks") or []
    if not rows:
        return None
    job = report.get("job") or {}
    straggler = (job.get("straggler") or {}).get("rank")
    hosts = job.get("hosts") or []
    table = Table(title=f"\nRanks ({len(rows)} on {plural(len(hosts) or 1, 'host')})", title_justify="left",
                  box=None, padding=(0, 2), header_style="dim")
    with_gpus = any(row.get("gpus") for row in rows)
    for name in ("rank", "host") + (("GPU",) if with_gpus else ()) + (
            "steps", "step time", "own work", "data wait", "waiting on others", "verdict"):
        table.add_column(name, overflow="fold")       # a narrow line folds a cell, never cuts it
    for row in rows:
        verdict = (row.get("verdict") or {}).get("bottleneck") or "none"
        if row.get("rank") == straggler:
            verdict += "  <- straggler"
        gpu = (rank_gpus_text(row),) if with_gpus else ()
        table.add_row(str(row.get("rank")), str(row.get("host") or "?"), *gpu, str(row.get("steps") or 0),
                      seconds(row.get("mean_step_s")), seconds(row.get("own_step_s")), pct(row.get("data_wait_share")),
                      pct(row.get("waiting_share")), verdict)
    evidence = straggler_evidence(job)
    return Group(table, hanging("  ", evidence, "dim", "dim")) if evidence else table


def nodes_table(report: Report):
    """One row per machine of a job merged from several run folders."""
    nodes = report.get("nodes") or []
    if len(nodes) < 2:
        return None
    table = Table(title=f"\nNodes ({len(nodes)})", title_justify="left", box=None, padding=(0, 2), header_style="dim")
    for name in ("host", "ranks", "outcome", "CPU busy", "disk read", "GPUs", "run folder"):
        table.add_column(name, overflow="fold")
    for node in nodes:
        cores = node.get("cores_busy")
        table.add_row(str(node.get("host")), ", ".join(str(r) for r in node.get("ranks") or []) or "-",
                      str(node.get("outcome")), "n/a" if cores is None else f"{cores:.2f} of {node.get('cpu_count')}",
                      rate(node.get("read_mb_s")), str(node.get("gpus") or 0), str(node.get("run_dir")))
    return table


def straggler_evidence(job: Mapping) -> Optional[str]:
    """The numbers that name the straggler, in one sentence (None without a straggler)."""
    s = job.get("straggler")
    if not s:
        return None
    return (f"rank {s['rank']}{' on ' + s['host'] if s.get('host') else ''}: own work {seconds(s.get('own_step_s'))} "
            f"per step against {seconds(s.get('others_own_step_s'))} on the others; data wait "
            f"{pct(s.get('data_wait_share'))} against {pct(s.get('others_data_wait_share'))}; "
            + (f"its DataLoader producers used {seconds(s.get('producers_cpu_s'))} of CPU against "
               f"{seconds(s.get('others_producers_cpu_s'))}; " if s.get("producers_cpu_s") or s.get("others_producers_cpu_s")
               else "")
            + f"the others wait for it {pct(s.get('others_waiting_share'))} of their step"
            + (f"; {slowdown_words(s['gpu_slowdown'])}: the likely cause" if s.get("gpu_slowdown") else ""))


def loader_tables(report: Report):
    parts = []
    split = (((report.get("verdict") or {}).get("evidence") or {}).get("producer_time_split"))
    for index, loader in enumerate(report.get("dataloaders") or []):
        attached = loader.get("basis") == "attached"
        at = "iterated at" if attached else "at"
        role = f" ({loader['role']})" if loader.get("role") else ""
        table = Table(title=f"\nDataLoader{role} {at} {loader.get('where') or '?'}", title_justify="left",
                      show_header=False, box=None, padding=(0, 2))
        table.add_column(style="dim")
        table.add_column()
        if attached:
            table.add_row("settings", f"num_workers={loader.get('num_workers')} (attached: the other settings are not seen)")
        else:
            table.add_row("settings", f"batch_size={loader.get('batch_size')} num_workers={loader.get('num_workers')} "
                          f"pin_memory={loader.get('pin_memory')} prefetch_factor={loader.get('prefetch_factor')} "
                          f"persistent_workers={loader.get('persistent_workers')}"
                          + (f" context={loader['context']}" if loader.get("context") else ""))
        producer = loader.get("producer") or {}
        who = "main process" if producer.get("in_main_process") else workers_words(loader)
        ratio = producing_cpu(producer.get("cpu_per_wall"), (report.get("system") or {}).get("cpu_count"))
        if attached:
            table.add_row("producers", f"{who}; busy {seconds(producer.get('wall_s'))} (sampled), CPU {ratio} of "
                          f"that time; {size(producer.get('read_bytes'))} read from disk")
        else:
            table.add_row("producers", f"{who}; {seconds(producer.get('wall_per_batch_s'))} per batch, "
                          f"CPU {ratio} of that time; {size(producer.get('read_bytes'))} read from disk")
        if index == 0 and split:
            table.add_row("their time", "  ".join(f"{name.replace('_', ' ')} {pct(share)}" for name, share in split.items()
                                                  if share is not None))
        assembly = loader.get("batch_parts")
        if assembly and (assembly.get("collate") or assembly["collate_share"] >= NOTABLE_SHARE):
            rest = f", the rest of the wait {seconds(assembly['rest_s'])}" if assembly.get("rest_s") else ""
            table.add_row("per batch", f"samples {seconds(assembly['samples_s'])}, {collate_words(assembly)} "
                          f"{seconds(assembly['collate_s'])} ({pct(assembly['collate_share'])} of making it){rest}")
        if loader.get("built_in"):
            by = f"{loader['built_by']} in " if loader.get("built_by") else ""
            table.add_row("built by", f"{by}{loader.get('framework') or 'a library'} at {loader['built_in']}")
        elif loader.get("built_by"):
            table.add_row("built by", f"{loader['built_by']}")
        if attached:
            table.add_row("waited", f"{seconds(loader.get('wait_s'))} (sampled)")
        else:
            table.add_row("waited", f"{seconds(loader.get('wait_s'))} over {plural(loader.get('batches'), 'batch', 'batches')}")
        if loader.get("num_workers") and loader.get("epochs"):
            epochs = loader["epochs"]
            table.add_row("worker start", f"{seconds((loader.get('epoch_start_wait_s') or 0) / epochs)} per "
                          f"{'start' if loader.get('persistent_workers') else 'epoch'} to start the workers and get "
                          f"the first batch ({plural(epochs, 'start')})")
        if (loader.get("instances") or 1) > 1:
            table.add_row("built", f"{loader['instances']} times at this line (one pipeline, figures summed)")
        batch = loader.get("batch")
        if batch:
            uint8 = {"0..255": ", float values are integers 0..255: could ship as uint8",
                     "k/255": ", float values are k/255: could ship as uint8",
                     "affine": ", at most 256 values per channel: could ship as uint8"}.get(batch.get("uint8_form"), "")
            table.add_row("batch", f"{batch.get('dtype')} {batch.get('shape')}, {size(batch.get('bytes'))}{uint8}")
        parts.append(table)
    return Group(*parts) if parts else None


def copies_and_files(report: Report):
    rows = []
    rows.extend(copies_rows(report.get("copies")))
    for entry in report.get("hdf5") or []:
        rows.append((f"HDF5 {entry.get('file')}:{entry.get('dataset')}",
                     f"chunks {entry.get('chunks')} ({size(entry.get('chunk_bytes'))}, {entry.get('compression') or 'uncompressed'}), "
                     f"chunk cache {size(entry.get('rdcc_nbytes'))}; {entry.get('reads')} reads touched "
                     f"{entry.get('chunks_touched')} chunks"))
    if not rows:
        return None
    table = Table(title="\nTransfers and files", title_justify="left", show_header=False, box=None, padding=(0, 2))
    table.add_column(style="dim")
    table.add_column()
    for row in rows:
        table.add_row(*row)
    return table


def memory_table(report: Report):
    memory = report.get("memory") or {}
    anatomy = memory.get("anatomy")
    if not anatomy and not memory.get("peak_bytes"):
        return None
    table = Table(title="\nMemory", title_justify="left", show_header=False, box=None, padding=(0, 2))
    table.add_column(style="dim")
    table.add_column()
    if anatomy:
        dtypes = ", ".join(f"{size(n)} {d}" for d, n in anatomy["param_bytes_by_dtype"].items())
        table.add_row("parameters", f"{anatomy['params']:,} ({dtypes})")
        table.add_row("gradients", size(anatomy["grad_bytes"]))
        table.add_row("optimizer", f"{size(anatomy['state_bytes'])} of state ({', '.join(anatomy['state']) or 'none'}; "
                      f"{anatomy['state_bytes_per_param']} bytes per parameter; {', '.join(anatomy['optimizers'])})")
    if memory.get("peak_bytes"):
        table.add_row("peak", f"{size(memory['peak_bytes'])} ({memory.get('basis')})")
    if memory.get("rest_bytes") is not None:
        table.add_row("the rest", f"{size(memory['rest_bytes'])}: {memory.get('rest_is')}")
    trend = memory.get("growth")
    if trend:
        table.add_row("over the steps", f"{size(trend['first_bytes'])} -> {size(trend['last_bytes'])} "
                      f"({trend['slope_bytes_per_step'] / 2**20:+.2f} MiB per step, r={trend['r']:.2f})")
    return table


def system_table(report: Report):
    system = report.get("system", {})
    job = system.get("job", {})
    cpu = system.get("cpu", {})
    disk = system.get("disk", {})
    table = Table(title="\nSystem", title_justify="left", show_header=False, box=None, padding=(0, 2))
    table.add_column(style="dim")
    table.add_column()
    cores = job.get("cores_busy")
    table.add_row("job CPU", f"{cores:.2f} of {system.get('cpu_count')} cores busy "
                  f"({seconds(job.get('cpu_user_s'))} user, {seconds(job.get('cpu_system_s'))} system)"
                  if cores is not None else "n/a")
    table.add_row("machine CPU", f"user {pct(cpu.get('user'))}  system {pct(cpu.get('system'))}  "
                  f"iowait {pct(cpu.get('iowait'))}  steal {pct(cpu.get('steal'))}  idle {pct(cpu.get('idle'))}")
    batches_read = sum(((loader.get("producer") or {}).get("read_bytes") or 0) for loader in report.get("dataloaders") or [])
    table.add_row("disk", f"read {rate(disk.get('read_mb_s'))} (busy {pct(disk.get('busy'))}); the job read "
                  f"{size(job.get('read_bytes'))} from disk, {size(batches_read)} of it while making batches "
                  f"(the rest: start-up, libraries, checkpoints and other files)")
    pressure = system.get("pressure")
    if pressure:
        table.add_row("pressure", f"cpu {pct(pressure.get('cpu_some'))}  io {pct(pressure.get('io_some'))}  "
                      f"memory {pct(pressure.get('memory_some'))} of the time stalled")
    table.add_row("memory", f"peak RSS {size(job.get('rss_peak_bytes'))} over "
                  f"{plural(job.get('processes_seen', 0), 'process', 'processes')}")
    table.add_row("samples", f"{system.get('samples', 0)} every {seconds(system.get('interval_s'))}")
    return table


def gpu_table(report: Report):
    system = report.get("system", {})
    status = system.get("gpu_status", {})
    gpus = system.get("gpus", [])
    if not gpus:
        return Text(f"\nGPU: {status.get('reason') or 'no GPU figures'}", style="dim")
    table = Table(title="\nGPU", title_justify="left", show_header=False, box=None, padding=(0, 2))
    table.add_column(style="dim")
    table.add_column()
    for gpu in gpus:
        table.add_row(gpu_name(gpu), "; ".join(gpu_phrases(gpu)))
    chosen = job_gpus_line(status, gpus)
    if chosen:
        table.add_row("job's GPUs", chosen)
    if reason := status.get("reason"):
        return Group(table, Text(reason, style="dim"))
    return table


def notes(report: Report):
    gpu_reason = report.get("system", {}).get("gpu_status", {}).get("reason") or ""
    items = [n for n in report.get("notes") or [] if not (gpu_reason and gpu_reason in n)]
    if not items:
        return None
    text = Text("\n")
    for note in items:
        text.append(f"note: {note}\n", style="dim")
    return text
