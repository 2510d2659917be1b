"""The terminal report, written to stderr so the program's stdout stays the user's alone.

Sections are small functions over the Report dict; each returns a renderable or None."""

import re

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from gpuprof.render.units import gain, pct, plural, rate, seconds, size

SECTIONS = []


def section(func):
    SECTIONS.append(func)
    return func


def render_console(report: dict, console: Console) -> None:
    parts = [part for part in (func(report) for func in SECTIONS) if part is not None]
    console.print(Group(*parts))


def stream_console(stream) -> Console:
    """A console for `stream`: colours and the terminal's width on a terminal; plain and never
    wrapped on a log or a pipe (CI logs keep whole sentences)."""
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError, OSError):
        terminal = False
    if terminal:
        return Console(file=stream, highlight=False)
    return Console(file=stream, force_terminal=False, no_color=True, width=100000, highlight=False,
                   soft_wrap=True, color_system=None)


def console_text(report: dict, terminal: bool = False, width: int = None) -> str:
    """The report as text. For a terminal: colours, wrapped to its width with hanging indents. For
    a log or a pipe: plain text, never wrapped (a line is as long as what it says)."""
    import io
    import shutil

    buffer = io.StringIO()
    if terminal:
        width = width or shutil.get_terminal_size((100, 24)).columns
        console = Console(file=buffer, force_terminal=True, width=width, highlight=False)
    else:
        console = Console(file=buffer, force_terminal=False, no_color=True, width=width or 100000,
                          highlight=False, soft_wrap=True, color_system=None)
    del _SNIPPETS[:]
    render_console(report, console)
    text = _put_snippets_back(buffer.getvalue(), terminal)
    if not terminal:
        text = "\n".join(line.rstrip() for line in text.split("\n"))
    return text


@section
def header(report: dict):
    text = Text()
    text.append("gpuprof", style="bold cyan")
    command = " ".join(report.get("command") or [])
    text.append(f"  {command}\n", style="bold")
    text.append(f"{report.get('outcome', '')} after {seconds(report.get('duration_s'))}")
    if len(report.get("run_dirs") or []) > 1:
        text.append(f"  ·  merged from {len(report['run_dirs'])} run folders", style="dim")
    elif report.get("run_dir"):
        text.append(f"  ·  run saved in {report['run_dir']}", style="dim")
    return text


def hanging(first: str, rest, style_first: str = None, style_rest: str = None, indent: int = 3):
    """`first` then `rest` on one line; wrapped lines of `rest` hang under its start."""
    grid = Table.grid(padding=(0, 0))
    grid.add_column(no_wrap=True, width=len(first) if indent is None else max(len(first), indent))
    grid.add_column()
    grid.add_row(Text(first, style=style_first or ""), rest if isinstance(rest, Text) else Text(rest, style=style_rest or ""))
    return grid


_SNIPPETS = []       # code lines of the report being rendered, put in after rich lays it out


def snippet(code: str, indent: int = 5):
    """Code never wraps nor is cut: a pasted snippet must run. Each line is laid out as a short
    placeholder and written in whole afterwards (console_text); a line longer than the terminal
    runs past its edge, which the terminal shows soft-wrapped and copies as one line."""
    lines = []
    for line in code.splitlines():
        _SNIPPETS.append(" " * indent + line)
        lines.append(Text(f"\x00{len(_SNIPPETS) - 1}\x00", no_wrap=True))
    return Group(*lines)


def _put_snippets_back(text: str, terminal: bool) -> str:
    def whole(match):
        line = _SNIPPETS[int(match.group(1))]
        return f"\x1b[32m{line}\x1b[0m" if terminal else line
    return re.sub(r"\x00(\d+)\x00[ ]*", whole, text)


@section
def verdict_line(report: dict):
    verdict = report.get("verdict")
    if not verdict:
        return None
    parts = [Text("")]
    style = "bold green" if verdict.get("bottleneck") == "compute" else "bold yellow"
    parts.append(Text(verdict.get("summary", ""), style=style))
    if verdict.get("bottleneck"):
        parts.append(Text(f"confidence {verdict.get('confidence', 0):.0%}", style="dim"))
    for finding in report.get("findings") or []:
        parts.append(hanging("also: ", f"{finding['bottleneck']} ({finding['share']:.0%} of step time): "
                             f"{finding['reason']}", "dim", "dim", indent=None))
    for finding in ((report.get("memory") or {}).get("findings")) or []:
        parts.append(hanging("memory: ", finding["summary"] + (f"; fix: {finding['fix']}" if finding.get("fix") else ""),
                             "yellow", None, indent=None))
    return Group(*parts)


def next_steps_for_compute(report: dict) -> str:
    """A compute-bound run with nothing to fix in its input: say so, and where to look next."""
    wait = (report.get("steps") or {}).get("data_wait_share")
    waited = f" (steps wait for data {pct(wait)} of the time)" if wait is not None else ""
    gpus = ((report.get("system") or {}).get("gpus")) or []
    device = ("mixed precision (torch.autocast with bfloat16), a larger batch while GPU memory allows, torch.compile"
              if gpus else "torch.compile, a larger batch (fewer Python steps per sample), and torch.set_num_threads "
              "matched to the physical cores when other processes share them")
    return (f"Fixes: none needed in the input pipeline, which keeps up{waited}. Speed now depends on the model "
            f"itself: profile its slowest operators (torch.profiler), then try {device}.")


def speedup_text(item: dict) -> str:
    """Every estimate is an upper bound: it says so."""
    return gain(item)


@section
def advice_list(report: dict):
    advice = report.get("advice") or []
    verdict = report.get("verdict") or {}
    if not advice:
        if verdict.get("bottleneck") == "compute":
            return Text("\n" + next_steps_for_compute(report), style="dim")
        return None
    heading = ("Fixes, ranked by the memory each frees" if verdict.get("bottleneck") == "memory.oom" else
               "Fixes, ranked by estimated speed-up (each an upper bound)")
    parts = [Text("\n" + heading, style="bold")]
    for rank, item in enumerate(advice[:6], 1):
        head = Text()
        head.append(item["title"], style="bold")
        head.append(f"  {speedup_text(item)}", style="bold green")
        head.append(f"  [{item['id']}]", style="dim")
        parts.append(hanging(f"{rank}. ", head, indent=3))
        body = Text()
        if item.get("where"):
            body.append(f"at {item['where']}: ", style="cyan")
        body.append(item.get("detail") or "")
        parts.append(hanging("", body, indent=3))
        if item.get("snippet"):
            parts.append(snippet(item["snippet"]))
        if item.get("why"):
            parts.append(hanging("", Text("why: " + item["why"], style="dim"), indent=3))
        if item.get("ranked_by"):
            parts.append(hanging("", Text("ranked " + item["ranked_by"], style="dim"), indent=3))
    return Group(*parts)


@section
def loop_table(report: dict):
    steps = report.get("steps") or {}
    if not steps.get("count"):
        return None
    table = Table(title="\nTraining loop", title_justify="left", show_header=False, box=None, padding=(0, 2))
    table.add_column(style="dim")
    table.add_column()
    source = {"optimizer": "optimizer steps", "dataloader": "DataLoader batches, taken as steps (no optimizer step "
              "was seen)", "backward": "backward passes, taken as steps (parameters updated without an optimizer)"
              }.get(steps.get("source"), "steps")
    table.add_row("steps", f"{steps['count']} {source}; {steps.get('measured', 0)} measured after "
                  f"{plural(steps.get('warmup', 0), 'warm-up step')}")
    table.add_row("step time", f"median {seconds(steps.get('median_step_s'))}, mean {seconds(steps.get('mean_step_s'))}")
    wait_from = {"dataloader": "blocked in the DataLoader",
                 "before-first-forward": "between a step's end and the next forward",
                 "sampled": f"making batches inside the step, in {steps.get('data_wait_where') or 'host code'} (sampled)"
                 }.get(steps.get("data_wait_source"), "")
    table.add_row("data wait", f"{pct(steps.get('data_wait_share'))} of step time {wait_from}"
                  if steps.get("data_wait_share") is not None else "n/a")
    if steps.get("samples_per_second"):
        table.add_row("throughput", f"{steps['samples_per_second']:.1f} samples/s "
                      f"({steps['steps_per_second']:.1f} steps/s x batch {steps.get('batch_size')})")
    rank = (report.get("verdict") or {}).get("rank")
    if report.get("ranks") and rank is not None:
        table.add_row("rank", f"these figures are rank {rank}'s, the rank that sets the job's pace")
    return table


@section
def ranks_table(report: dict):
    """One row per rank: its step, its own work, its data wait, its waiting on the others, its verdict."""
    rows = report.get("ranks") or []
    if not rows:
        return None
    job = report.get("job") or {}
    straggler = (job.get("straggler") or {}).get("rank")
    hosts = job.get("hosts") or []
    table = Table(title=f"\nRanks ({len(rows)} on {plural(len(hosts) or 1, 'host')})", title_justify="left",
                  box=None, padding=(0, 2), header_style="dim")
    for name in ("rank", "host", "steps", "step time", "own work", "data wait", "waiting on others", "verdict"):
        table.add_column(name)
    for row in rows:
        verdict = (row.get("verdict") or {}).get("bottleneck") or "none"
        if row.get("rank") == straggler:
            verdict += "  <- straggler"
        table.add_row(str(row.get("rank")), str(row.get("host") or "?"), str(row.get("steps") or 0),
                      seconds(row.get("mean_step_s")), seconds(row.get("own_step_s")), pct(row.get("data_wait_share")),
                      pct(row.get("waiting_share")), verdict)
    evidence = straggler_evidence(job)
    return Group(table, hanging("  ", evidence, "dim", "dim")) if evidence else table


@section
def nodes_table(report: dict):
    """One row per machine of a job merged from several run folders."""
    nodes = report.get("nodes") or []
    if len(nodes) < 2:
        return None
    table = Table(title=f"\nNodes ({len(nodes)})", title_justify="left", box=None, padding=(0, 2), header_style="dim")
    for name in ("host", "ranks", "outcome", "CPU busy", "disk read", "GPUs", "run folder"):
        table.add_column(name)
    for node in nodes:
        cores = node.get("cores_busy")
        table.add_row(str(node.get("host")), ", ".join(str(r) for r in node.get("ranks") or []) or "-",
                      str(node.get("outcome")), "n/a" if cores is None else f"{cores:.2f} of {node.get('cpu_count')}",
                      rate(node.get("read_mb_s")), str(node.get("gpus") or 0), str(node.get("run_dir")))
    return table


def straggler_evidence(job: dict) -> str:
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
            + f"the others wait for it {pct(s.get('others_waiting_share'))} of their step")


@section
def loader_tables(report: dict):
    parts = []
    split = (((report.get("verdict") or {}).get("evidence") or {}).get("producer_time_split"))
    for index, loader in enumerate(report.get("dataloaders") or []):
        table = Table(title=f"\nDataLoader at {loader.get('where') or '?'}", title_justify="left",
                      show_header=False, box=None, padding=(0, 2))
        table.add_column(style="dim")
        table.add_column()
        table.add_row("settings", f"batch_size={loader.get('batch_size')} num_workers={loader.get('num_workers')} "
                      f"pin_memory={loader.get('pin_memory')} prefetch_factor={loader.get('prefetch_factor')} "
                      f"persistent_workers={loader.get('persistent_workers')}"
                      + (f" context={loader['context']}" if loader.get("context") else ""))
        producer = loader.get("producer") or {}
        who = "main process" if producer.get("in_main_process") else f"{loader.get('workers_seen', 0)} workers seen"
        ratio = producer.get("cpu_per_wall")
        table.add_row("producers", f"{who}; {seconds(producer.get('wall_per_batch_s'))} per batch, "
                      f"CPU {pct(ratio)} of that time; {size(producer.get('read_bytes'))} read from disk")
        if index == 0 and split:
            table.add_row("their time", "  ".join(f"{name.replace('_', ' ')} {pct(share)}" for name, share in split.items()
                                                  if share is not None))
        if loader.get("built_in"):
            table.add_row("built by", f"{loader.get('framework') or 'a library'} at {loader['built_in']}")
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


@section
def copies_and_files(report: dict):
    rows = []
    copies = report.get("copies") or {}
    if copies.get("count"):
        rows.append(("copies to GPU", f"{copies['count']} copies, {size(copies.get('bytes'))} "
                     f"({size(copies.get('pageable_bytes'))} from pageable memory), {seconds(copies.get('seconds'))}"))
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


@section
def memory_table(report: dict):
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


@section
def system_table(report: dict):
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


@section
def gpu_table(report: dict):
    system = report.get("system", {})
    status = system.get("gpu_status", {})
    gpus = system.get("gpus", [])
    if not gpus:
        return Text(f"\nGPU: {status.get('reason') or 'no GPU figures'}", style="dim")
    table = Table(title="\nGPU", title_justify="left", show_header=False, box=None, padding=(0, 2))
    table.add_column(style="dim")
    table.add_column()
    for gpu in gpus:
        events = ", ".join(k for k in gpu.get("clock_events", {}) if k != "gpu_idle") or "none"
        clock = "n/a" if gpu.get("sm_clock_mhz") is None else f"{gpu['sm_clock_mhz']:.0f} MHz"
        table.add_row(f"{gpu.get('index')} {gpu.get('name') or ''}",
                      f"busy {pct(gpu.get('util_gpu'))}, memory busy {pct(gpu.get('util_memory'))}; "
                      f"memory {size(gpu.get('mem_used_max_bytes'))} of {size(gpu.get('mem_total_bytes'))}; "
                      f"PCIe in {rate(gpu.get('pcie_rx_mb_s'))}, out {rate(gpu.get('pcie_tx_mb_s'))}; "
                      f"SM clock {clock}; clock events: {events}")
    if status.get("reason"):
        return Group(table, Text(status["reason"], style="dim"))
    return table


@section
def notes(report: dict):
    gpu_reason = report.get("system", {}).get("gpu_status", {}).get("reason") or ""
    items = [n for n in report.get("notes") or [] if not (gpu_reason and gpu_reason in n)]
    if not items:
        return None
    text = Text("\n")
    for note in items:
        text.append(f"note: {note}\n", style="dim")
    return text
