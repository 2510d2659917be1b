"""memory.oom: the run died of running out of memory (an exception, or the kernel's out-of-memory
killer). It leads the report whatever else was measured: the step verdict stays as its `before`.
Its fixes are the memory fixes, ranked by the bytes each frees (advise/oom.py)."""

from gpuprof.judge.verdict.bottleneck import LEADS, Bottleneck
from gpuprof.stats.sizes import mib

ID = "memory.oom"

EXCEPTION_CONFIDENCE = 0.95     # the job's own out-of-memory exception
KILLER_CONFIDENCE = 0.8         # the kernel's out-of-memory killer: no exception of the job's own
NOT_A_FIX = ("torch.cuda.empty_cache() is not a fix: it returns cached blocks to the driver, but the next step's "
             "peak needs the same memory again; it only helps another process on the same GPU")


def leads(sections: dict, before: dict):
    """The out-of-memory verdict where the memory section noted one, else None."""
    memory = sections.get("memory") or {}
    if not memory.get("oom"):
        return None
    return verdict(memory, before)


def verdict(memory: dict, previous: dict) -> dict:
    oom = memory["oom"]
    anatomy = memory.get("anatomy") or {}
    held = ""
    if anatomy:
        held = (f"; the training held {mib(anatomy['param_bytes'])} of parameters, {mib(anatomy['grad_bytes'])} of "
                f"gradients and {mib(anatomy['state_bytes'])} of optimizer state")
    if memory.get("peak_bytes"):
        held += f", {mib(memory['peak_bytes'])} at its peak ({memory.get('basis')})"
    confidence = EXCEPTION_CONFIDENCE if oom["kind"] != "oom-killer" else KILLER_CONFIDENCE
    return {"bottleneck": ID, "share": None, "confidence": confidence, "basis": "probes", "reason": oom["how"],
            "evidence": {"oom": oom, "anatomy": anatomy or None, "peak_bytes": memory.get("peak_bytes"),
                         "before": (previous or {}).get("summary")},
            "summary": f"Out of memory: {oom['how']}{held}." + (f" {NOT_A_FIX}." if memory.get("device") == "cuda" else "")}


BOTTLENECK = Bottleneck(id=ID, label="Out of memory", tier=LEADS, leads=leads)
