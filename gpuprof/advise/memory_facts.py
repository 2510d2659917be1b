"""What the out-of-memory fixes read from the memory section: the activations (on a GPU, what the
CUDA allocator held beyond the parameters, gradients and optimizer state), the optimizer state,
the gradients and the batch size; and, to word the fixes, the framework that runs the training and
the run's command with its script's options."""

from dataclasses import dataclass
from typing import Optional

from gpuprof.advise.framework_terms import framework_of


@dataclass(frozen=True)
class MemoryFacts:
    anatomy: dict
    activations: Optional[int] = None    # bytes, on a CUDA run only
    state: int = 0
    grads: int = 0
    batch_size: Optional[int] = None
    framework: Optional[str] = None      # advice.framework_terms
    program: Optional[dict] = None       # the run's command and its script's options (analysis.script_flags)

    @classmethod
    def of(cls, memory: dict, batch_size=None, evidence=None) -> "MemoryFacts":
        anatomy = memory.get("anatomy") or {}
        return cls(anatomy=anatomy, activations=memory.get("rest_bytes") if memory.get("device") == "cuda" else None,
                   state=anatomy.get("state_bytes") or 0, grads=anatomy.get("grad_bytes") or 0,
                   batch_size=batch_size, framework=framework_of(evidence) if evidence is not None else None,
                   program=getattr(evidence, "program", None))
