"""What NVML says about this machine: the driver, and each GPU with its UUID, memory, MIG devices
and GPM support. It only reads; one GPU that errors costs that GPU's line, not the others'. The
NVML calls themselves are the sampler's (gpuprof.capture.samplers.nvml_devices, nvml_gpm)."""

from gpuprof.capture.samplers.nvml import load_nvml
from gpuprof.capture.samplers.nvml_devices import describe, mig_enabled, mig_handles, nvml_uuid, text
from gpuprof.capture.samplers.nvml_gpm import gpm_supported


def read_nvml(nvml=None, load=load_nvml) -> dict:
    """{"importable", "import_error", "init_error", "driver", "cuda_driver", "gpus", "error"}.

    `nvml` is a module with pynvml's names (the real one when None); `gpus` lists, in NVML's order,
    {"index", "name", "uuid", "memory_bytes", "mig" (in MIG mode), "mig_instances": [{"uuid",
    "gpu_instance_id", "memory_bytes"}], "gpm", "error"}."""
    facts = {"importable": True, "import_error": None, "init_error": None, "driver": None, "cuda_driver": None,
             "gpus": [], "error": None}
    if nvml is None:
        nvml, reason = load()
        if nvml is None:
            return dict(facts, importable=False, import_error=reason)
    try:
        nvml.nvmlInit()
    except Exception as exc:
        return dict(facts, init_error=describe(exc))
    try:
        facts["driver"] = _optional(lambda: text(nvml.nvmlSystemGetDriverVersion()))
        facts["cuda_driver"] = _optional(lambda: cuda_version(nvml.nvmlSystemGetCudaDriverVersion()))
        try:
            count = int(nvml.nvmlDeviceGetCount())
        except Exception as exc:
            facts["error"] = f"NVML could not count the GPUs ({describe(exc)})"
            count = 0
        facts["gpus"] = [_read_gpu(nvml, index) for index in range(count)]
    finally:
        _shutdown(nvml)
    return facts


def _read_gpu(nvml, index: int) -> dict:
    gpu = {"index": index, "name": None, "uuid": None, "memory_bytes": None, "mig": False, "mig_instances": [],
           "gpm": False, "error": None}
    try:
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        gpu["name"] = text(nvml.nvmlDeviceGetName(handle))
        gpu["uuid"] = nvml_uuid(nvml.nvmlDeviceGetUUID(handle))
    except Exception as exc:
        gpu["error"] = describe(exc)
        return gpu
    gpu["memory_bytes"] = _optional(lambda: int(nvml.nvmlDeviceGetMemoryInfo(handle).total))
    gpu["mig"] = mig_enabled(nvml, handle)
    if gpu["mig"]:
        gpu["mig_instances"] = [{"uuid": _optional(lambda: nvml_uuid(nvml.nvmlDeviceGetUUID(mig))),
                                 "gpu_instance_id": instance,
                                 "memory_bytes": _optional(lambda: int(nvml.nvmlDeviceGetMemoryInfo(mig).total))}
                                for mig, instance in mig_handles(nvml, handle)]
    gpu["gpm"] = gpm_supported(nvml, handle)
    return gpu


def running_pids(nvml=None, load=load_nvml):
    """{uuid: [pids]} from nvmlDeviceGetComputeRunningProcesses on every GPU and MIG device, or None
    when NVML cannot be used or gives no process list on any device."""
    if nvml is None:
        nvml, _ = load()
        if nvml is None:
            return None
    try:
        nvml.nvmlInit()
    except Exception:
        return None
    found = {}
    try:
        for index in range(int(nvml.nvmlDeviceGetCount())):
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            migs = [mig for mig, _ in mig_handles(nvml, handle)] if mig_enabled(nvml, handle) else []
            for each in [handle] + migs:
                try:
                    found[nvml_uuid(nvml.nvmlDeviceGetUUID(each))] = \
                        [int(p.pid) for p in nvml.nvmlDeviceGetComputeRunningProcesses(each)]
                except Exception:
                    continue
    except Exception:
        pass
    finally:
        _shutdown(nvml)
    return found or None


def cuda_version(number) -> str:
    """NVML's CUDA driver version (12040) as people write it (12.4)."""
    number = int(number)
    return f"{number // 1000}.{number % 1000 // 10}"


def _shutdown(nvml) -> None:
    try:
        nvml.nvmlShutdown()
    except Exception:
        pass


def _optional(read):
    """A value NVML may not offer on this GPU or driver: None when it raises."""
    try:
        return read()
    except Exception:
        return None
