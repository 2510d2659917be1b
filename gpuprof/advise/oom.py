"""A run that ran out of memory: the memory fixes ranked by the bytes each frees
(where the anatomy lets it be counted). Kept apart from the speed advice: these trade speed for
memory, and their measure is bytes, not a speed-up."""

from gpuprof.advise import fixes
from gpuprof.advise.memory_facts import MemoryFacts
from gpuprof.judge.verdict import bottlenecks
from gpuprof.stats.sizes import mib


def oom_advice(memory: dict, batch_size=None, evidence=None) -> list:
    facts = MemoryFacts.of(memory, batch_size, evidence)
    out = []
    for fix in fixes.MEMORY:
        built = fix.build(facts)
        if built is None:
            continue
        frees = built["frees"]
        out.append({"id": fix.id, "title": fix.title, "estimated_speedup": None,
                    "frees_bytes": int(frees) if frees else None, "where": None, "detail": built["detail"],
                    "snippet": built["snippet"], "effort": fix.effort, "addresses": [bottlenecks.MEMORY_OOM.id],
                    "change": None,
                    "why": "ranked by the memory it frees" + (f": about {mib(frees)}" if frees else
                                                              " (not counted on a CPU run: the activations are not "
                                                              "told apart from the rest of the process)")})
    out.sort(key=lambda a: (-(a["frees_bytes"] or 0), a["effort"]))
    return out
