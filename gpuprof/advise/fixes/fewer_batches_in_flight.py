"""fewer-batches-in-flight: workers x prefetch_factor batches sit in /dev/shm at once; fewer of
either keeps them within it."""

from gpuprof.advise.fix import SharedMemoryFix


def build(shm, loader):
    return {"detail": "fewer workers or a smaller prefetch_factor: workers x prefetch_factor batches sit in /dev/shm "
                      "at once",
            "snippet": "DataLoader(dataset, num_workers=2, prefetch_factor=1, ...)"}


FIX = SharedMemoryFix(id="fewer-batches-in-flight", title="Keep fewer batches in flight", effort=1, build=build)
