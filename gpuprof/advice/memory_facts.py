"""What the out-of-memory fixes read from the memory section: the activations (on a GPU, what the
CUDA allocator held beyond the parameters, gradients and optimizer state), the optimizer state,
the gradients and the batch size."""

from dataclasses import dataclass


@dataclass(frozen=True)
class MemoryFacts:
    anatomy: dict
    activations: int = None          # bytes, on a CUDA run only
    state: int = 0
    grads: int = 0
    batch_size: int = None

    @classmethod
    def of(cls, memory: dict, batch_size=None) -> "MemoryFacts":
        anatomy = memory.get("anatomy") or {}
        return cls(anatomy=anatomy, activations=memory.get("rest_bytes") if memory.get("device") == "cuda" else None,
                   state=anatomy.get("state_bytes") or 0, grads=anatomy.get("grad_bytes") or 0,
                   batch_size=batch_size)
