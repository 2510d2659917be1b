"""The terminal report's section for `gpuprof attach`: where the training thread's sampled time
went, what each DataLoader worker did, at which lines, and what sampling from outside cannot see."""

from rich.table import Table

from gpuprof.record.report_format import Report
from gpuprof.present.render.units import pct, seconds

TRAINING_PARTS = (("waiting_on_dataloader", "waiting on the DataLoader"), ("making_batches", "making batches itself"),
                  ("forward", "forward"), ("backward", "backward"), ("optimizer", "optimizer"),
                  ("collective", "collectives"), ("evaluation", "evaluation"), ("other", "other"))
MAX_WORKERS_SHOWN = 8


def attached_table(report: Report):
    attached = report.get("attached")
    if not attached:
        return None
    table = Table(title=f"\nAttached to PID {attached.get('pid')} for {seconds(attached.get('window_s'))} "
                        f"(stacks sampled {attached.get('rate_hz')} times a second from outside, no probes)",
                  title_justify="left", show_header=False, box=None, padding=(0, 2))
    table.add_column(style="dim")
    table.add_column()
    training = attached.get("training")
    if training:
        split = training.get("split") or {}
        table.add_row("training thread", f"PID {training.get('pid')} ({training.get('thread') or 'thread'} "
                                         f"{training.get('tid')}): " + "  ".join(
                          f"{label} {pct(split.get(key))}" for key, label in TRAINING_PARTS if split.get(key)))
        for loop in training.get("loops") or []:
            table.add_row("DataLoader loop", f"{loop['at']} ({pct(loop['share'])} of the time)")
        hot = training.get("host_hot") or []
        if hot:
            table.add_row("host code", ", ".join(f"{item['at']} {pct(item['share'])}" for item in hot[:3]))
    trainers = attached.get("trainers") or []
    if len(trainers) > 1:
        for row in trainers:
            split = row.get("split") or {}
            waiting = (split.get("waiting_on_dataloader") or 0) + (split.get("making_batches") or 0)
            table.add_row(f"trainer {row.get('pid')}", f"data {pct(waiting)}  collectives {pct(split.get('collective'))}")
    workers = attached.get("workers") or []
    for worker in workers[:MAX_WORKERS_SHOWN]:
        split = worker.get("split") or {}
        hot = ", ".join(f"{item['at']} {item['doing']} {pct(item['share'])}" for item in (worker.get("hot") or [])[:2])
        table.add_row(f"worker {worker.get('pid')}", f"reading {pct(split.get('reading'))}  computing "
                      f"{pct(split.get('computing'))}  idle {pct(split.get('idle'))}" + (f"; busiest at {hot}" if hot else ""))
    if len(workers) > MAX_WORKERS_SHOWN:
        table.add_row("", f"and {len(workers) - MAX_WORKERS_SHOWN} more workers")
    if attached.get("stopped_by") == "job ended":
        table.add_row("ended", "the job ended during sampling: the figures cover what was seen")
    table.add_row("not seen", ", ".join(attached.get("unknown") or []))
    return table
