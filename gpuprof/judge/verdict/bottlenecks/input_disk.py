"""input.disk: waiting for data that is being read from storage."""

from gpuprof.judge.verdict.bottleneck import BY_SHARE, Bottleneck
from gpuprof.judge.verdict.evidence import INPUT_BOUND, Evidence
from gpuprof.judge.verdict.rules import Finding, clamp, step_confidence
from gpuprof.judge.verdict.rules.inputs import (input_evidence, kind_margin, margin_confidence,
                                          waits_on, waits_on_producers, who)

ID = "input.disk"

#: The machine's figures that corroborate the producers' reads: its iowait, I/O pressure (some) or disk busy.
IOWAIT_CORROBORATES = 0.05
IO_PRESSURE_CORROBORATES = 0.1
DISK_BUSY_CORROBORATES = 0.3
CORROBORATED_CONFIDENCE = 0.9
UNCORROBORATED_CONFIDENCE = 0.75    # the producers' own reads only
#: ... times a factor for the producers' user CPU over wall: full with none, falling by the span to
#: the base at USER_CPU_SPAN (decoding, not reading, then fills their time).
USER_CONFIDENCE_BASE = 0.7
USER_CONFIDENCE_SPAN = 0.3
USER_CPU_SPAN = 0.4


def evaluate(ev: Evidence):
    found = waits_on_producers(ev, "disk")
    if found is None:
        return None
    wait, ratio = found
    corroborated = ((ev.iowait or 0) > IOWAIT_CORROBORATES or (ev.io_pressure or 0) > IO_PRESSURE_CORROBORATES
                    or (ev.disk_busy or 0) > DISK_BUSY_CORROBORATES)
    user = ev.producer_user_ratio if ev.producer_user_ratio is not None else ratio
    confidence = (step_confidence(ev) * (CORROBORATED_CONFIDENCE if corroborated else UNCORROBORATED_CONFIDENCE)
                  * (USER_CONFIDENCE_BASE + USER_CONFIDENCE_SPAN * clamp(1 - user / USER_CPU_SPAN)))
    confidence *= margin_confidence(kind_margin(ev))   # near the boundary of two kinds: less sure
    rate = (ev.producer_disk_rate or 0) / 1e6
    return Finding(ID, wait, confidence, input_evidence(ev),
                   who(ev, f"waiting on disk reads ({rate:.0f} MB/s while producing)"))


BOTTLENECK = Bottleneck(id=ID, label="Input-bound (disk)", tier=BY_SHARE, rules=(evaluate,),
                        wins=lambda finding: finding.share >= INPUT_BOUND, words=waits_on)
