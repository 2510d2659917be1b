"""setup: the time from launch to the end of the first training step is a notable share of the
run (analysis.startup: 20% of the wall time and 5 s, or 30 s and 10%). Reported beside
the step verdict, never as it: the steps' verdict stays what the steps measured, and this finding
says what filled the start-up (imports, the dataset, the model load, distributed init,
compilation) and the user's function that took most of it. Likewise the start each epoch pays
again when a DataLoader's workers are not persistent: their start and first batches."""

from gpuprof.judge.verdict.bottleneck import BESIDE, Bottleneck
from gpuprof.judge.verdict.evidence import Evidence
from gpuprof.stats.digits import REPORT_DIGITS
from gpuprof.judge.verdict.rules import Finding, step_confidence
from gpuprof.judge.sections.startup import where_words

ID = "setup"

SAMPLED_CONFIDENCE = 0.9      # the launch time and the first step's end are measured; parts are sampled
PART_NOTABLE = 0.05           # a start-up part's share worth naming in the reason


def evaluate(ev: Evidence):
    startup = ev.startup or {}
    if not startup.get("notable"):
        return None
    share = startup.get("share") or 0.0
    parts = [p for p in startup.get("parts") or [] if (p.get("share") or 0) >= PART_NOTABLE][:3]
    where = startup.get("where") or {}
    breakdown = ", ".join(f"{p['part']} {p['share']:.0%}" for p in parts)
    reason = f"{startup['seconds']:.1f} s from launch to the end of the first step"
    if breakdown:
        reason += f" ({breakdown})"
    if where.get("line"):
        reason += f"; most in {where_words(where)} ({where['seconds']:.1f} s, {where.get('part')})"
    return Finding(ID, share, SAMPLED_CONFIDENCE,
                   {"share_of": "the run's wall time", "seconds": startup.get("seconds"),
                    "parts": {p["part"]: p["seconds"] for p in startup.get("parts") or []},
                    "where": where.get("line"), "where_part": where.get("part")},
                   reason)


#: Worker start per epoch worth a finding: this share of the measured steps' time, and this many seconds.
RESTART_NOTABLE = 0.10
RESTART_FLOOR_S = 1.0


def restarted_workers(ev: Evidence):
    """Each epoch after the first starts the DataLoader's workers again (no persistent_workers) and
    waits for their first batches: start-up paid again inside the measured steps."""
    loader = ev.loader or {}
    epochs = loader.get("epochs") or 0
    if not loader.get("num_workers") or loader.get("persistent_workers") or epochs < 2 or not ev.window_s:
        return None
    per_epoch = (loader.get("epoch_start_wait_s") or 0.0) / epochs
    lost = per_epoch * (epochs - 1)
    share = lost / ev.window_s
    if share < RESTART_NOTABLE or lost < RESTART_FLOOR_S:
        return None
    context = loader.get("context")
    spawned = context in ("spawn", "forkserver")
    reason = (f"each of {epochs - 1} later epochs waited {per_epoch:.2f} s for the DataLoader at "
              f"{loader.get('where') or '?'} to start its {loader['num_workers']} workers and fetch their first "
              f"batches ({lost:.1f} s; persistent_workers=True starts them once)")
    if spawned:
        reason += f"; {context} workers import the main script again, running its top-level code and imports"
    return Finding(ID, min(share, 1.0), step_confidence(ev),
                   {"share_of": "the measured steps' time", "worker_start_s": round(per_epoch, REPORT_DIGITS),
                    "epochs": epochs, "lost_s": round(lost, 3), "context": context, "where": loader.get("where")},
                   reason)


BOTTLENECK = Bottleneck(id=ID, label="Start-up", tier=BESIDE, rules=(evaluate, restarted_workers))
