"""A run that ran out of memory: its verdict, and the memory fixes ranked by the bytes each frees
(where the anatomy lets it be counted). Kept apart from the speed advice: these trade speed for
memory, and their measure is bytes, not a speed-up."""

from gpuprof.advice import fixes
from gpuprof.advice.memory_facts import MemoryFacts, mib


def oom_advice(memory: dict, batch_size=None) -> list:
    facts = MemoryFacts.of(memory, batch_size)
    out = []
    for fix in fixes.MEMORY:
        built = fix.build(facts)
        if built is None:
            continue
        frees = built["frees"]
        out.append({"id": fix.id, "title": fix.title, "estimated_speedup": None,
                    "frees_bytes": int(frees) if frees else None, "where": None, "detail": built["detail"],
                    "snippet": built["snippet"], "effort": fix.effort, "addresses": ["memory.oom"], "change": None,
                    "why": "ranked by the memory it frees" + (f": about {mib(frees)}" if frees else
                                                              " (not counted on a CPU run: the activations are not "
                                                              "told apart from the rest of the process)")})
    out.sort(key=lambda a: (-(a["frees_bytes"] or 0), a["effort"]))
    return out


NOT_A_FIX = ("torch.cuda.empty_cache() is not a fix: it returns cached blocks to the driver, but the next step's "
             "peak needs the same memory again; it only helps another process on the same GPU")


def oom_verdict(memory: dict, previous: dict) -> dict:
    oom = memory["oom"]
    anatomy = memory.get("anatomy") or {}
    held = ""
    if anatomy:
        held = (f"; the training held {mib(anatomy['param_bytes'])} of parameters, {mib(anatomy['grad_bytes'])} of "
                f"gradients and {mib(anatomy['state_bytes'])} of optimizer state")
    if memory.get("peak_bytes"):
        held += f", {mib(memory['peak_bytes'])} at its peak ({memory.get('basis')})"
    return {"bottleneck": "memory.oom", "share": None, "confidence": 0.95 if oom["kind"] != "oom-killer" else 0.8,
            "basis": "probes", "reason": oom["how"],
            "evidence": {"oom": oom, "anatomy": anatomy or None, "peak_bytes": memory.get("peak_bytes"),
                         "before": (previous or {}).get("summary")},
            "summary": f"Out of memory: {oom['how']}{held}." + (f" {NOT_A_FIX}." if memory.get("device") == "cuda" else "")}
