"""memory.shm: DataLoader workers ran out of shared memory. Workers hand each batch to the training
process through /dev/shm; a container's default of 64 MB holds a few batches at most. It leads the
report after an out-of-memory death; its fixes are about where batches travel between processes
(advise/shm.py), not about the model's memory."""

from gpuprof.judge.verdict.bottleneck import LEADS, Bottleneck

ID = "memory.shm"

CONFIDENCE = 0.9    # the workers' own error names the shared memory they ran out of


def leads(sections: dict, before: dict):
    """The shared-memory verdict where the memory section noted the failure, else None."""
    shm = (sections.get("memory") or {}).get("shm")
    if not shm:
        return None
    return verdict(shm, before)


def verdict(shm: dict, previous: dict) -> dict:
    return {"bottleneck": ID, "share": None, "confidence": CONFIDENCE, "basis": "probes", "reason": shm["how"],
            "evidence": {"shm": shm, "before": (previous or {}).get("summary")},
            "summary": f"Out of shared memory: {shm['how']}. DataLoader workers hand batches to the training "
                       "process through /dev/shm."}


BOTTLENECK = Bottleneck(id=ID, label="Out of shared memory", tier=LEADS, leads=leads)
