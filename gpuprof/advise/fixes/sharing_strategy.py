"""sharing-strategy: torch's file-system sharing strategy, which hands batches over through files
rather than shared-memory handles."""

from gpuprof.advise.fix import SharedMemoryFix


def build(shm, loader):
    return {"detail": "torch.multiprocessing.set_sharing_strategy('file_system') before the DataLoader is built",
            "snippet": "import torch.multiprocessing\ntorch.multiprocessing.set_sharing_strategy('file_system')"}


FIX = SharedMemoryFix(id="sharing-strategy", title="Share batches through files instead of shared-memory handles",
                      effort=1, build=build)
