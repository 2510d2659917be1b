"""shm-size: a larger /dev/shm for the job, where a container's default (64 MB) holds a few batches."""

from gpuprof.advise.fix import SharedMemoryFix


def build(shm, loader):
    return {"detail": "run the container with --shm-size=8g (or --ipc=host); on Kubernetes mount an emptyDir with "
                      "medium: Memory at /dev/shm",
            "snippet": "docker run --shm-size=8g ...   # or --ipc=host"}


FIX = SharedMemoryFix(id="shm-size", title="Give the job a larger /dev/shm", effort=1, build=build)
