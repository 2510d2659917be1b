"""Which advice a verdict gets: a memory failure its own fixes (measured in bytes freed, or none),
any other verdict the speed fixes, ranked; no verdict, none."""

from gpuprof.advise.oom import oom_advice
from gpuprof.advise.rank import advise
from gpuprof.advise.shm import shm_advice
from gpuprof.judge.verdict import bottlenecks
#: (judged, memory section, probe sections) -> advice, for verdicts whose fixes are not speed fixes.
_NOT_SPEED = {
    bottlenecks.MEMORY_OOM.id: lambda judged, memory, probes: oom_advice(memory, probes["steps"].get("batch_size"),
                                                                         judged.get("evidence")),
    bottlenecks.MEMORY_SHM.id: lambda judged, memory, probes: shm_advice(
        memory["shm"], (probes.get("dataloaders") or [None])[0]),
}


def advice_for(judged: dict, memory: dict, probes: dict) -> list:
    verdict = judged["verdict"]
    bottleneck = verdict["bottleneck"]
    if bottleneck in _NOT_SPEED:
        return _NOT_SPEED[bottleneck](judged, memory, probes)
    return advise(judged["evidence"], verdict, judged["findings"]) if bottleneck else []
