"""SM activity from GPM (GPU Performance Monitoring, Hopper and later), per device.

NVML's utilisation says only whether some kernel ran; GPM counts how many SMs were busy and how
many warps they held. A GPM metric is computed from two samples of the device's counters
(nvmlGpmSampleGet, or nvmlGpmMigSampleGet on the parent GPU for a MIG GPU instance) taken at least
100 ms apart (NVML API reference, GPM Functions, nvmlGpmMetricsGet): each reading covers the time
since the previous one. Only read: GPM streaming and every other setting are left as they are."""

#: NVML's GPM metric ids (nvml.h): time any context was active, share of SMs busy, warp occupancy.
GRAPHICS_UTIL, SM_UTIL, SM_OCCUPANCY = 1, 2, 3
COLUMNS = {GRAPHICS_UTIL: "gpm_busy", SM_UTIL: "sm_active", SM_OCCUPANCY: "sm_occupancy"}
MIN_SPACING_S = 0.1         # NVML computes GPM metrics from samples at least this far apart


def gpm_supported(nvml, handle) -> bool:
    try:
        return bool(nvml.nvmlGpmQueryDeviceSupport(handle).isSupportedDevice)
    except Exception:
        return False


class GpmReader:
    """Two sample buffers taken in turn; `read(now)` gives {column: 0..1} for the time since the last
    sample, {} while the samples are too close, None once GPM failed (dropped for this device)."""

    def __init__(self, nvml, handle, gpu_instance_id=None):
        self.nvml = nvml
        self.handle = handle                # the GPU's own handle, also for a MIG instance
        self.gpu_instance_id = gpu_instance_id
        self.ids = [getattr(nvml, "NVML_GPM_METRIC_GRAPHICS_UTIL", GRAPHICS_UTIL),
                    getattr(nvml, "NVML_GPM_METRIC_SM_UTIL", SM_UTIL),
                    getattr(nvml, "NVML_GPM_METRIC_SM_OCCUPANCY", SM_OCCUPANCY)]
        self.names = [COLUMNS[GRAPHICS_UTIL], COLUMNS[SM_UTIL], COLUMNS[SM_OCCUPANCY]]
        self.samples = [nvml.nvmlGpmSampleAlloc(), nvml.nvmlGpmSampleAlloc()]
        self.previous = None               # index into samples of the last one taken
        self.previous_t = None
        self.working = True

    def _take(self, sample) -> None:
        if self.gpu_instance_id is None:
            self.nvml.nvmlGpmSampleGet(self.handle, sample)
        else:
            self.nvml.nvmlGpmMigSampleGet(self.handle, self.gpu_instance_id, sample)

    def read(self, now: float):
        if not self.working:
            return None
        try:
            if self.previous is not None and now - self.previous_t < MIN_SPACING_S - 1e-6:
                return {}
            current = 0 if self.previous is None else 1 - self.previous
            self._take(self.samples[current])
            values = {}
            if self.previous is not None:
                values = self._metrics(self.samples[self.previous], self.samples[current])
            self.previous, self.previous_t = current, now
            return values
        except Exception:
            self.working = False
            return None

    def _metrics(self, first, second) -> dict:
        request = self.nvml.c_nvmlGpmMetricsGet_t()
        request.version = getattr(self.nvml, "NVML_GPM_METRICS_GET_VERSION", 1)
        request.numMetrics = len(self.ids)
        request.sample1, request.sample2 = first, second
        for i, metric in enumerate(self.ids):
            request.metrics[i].metricId = metric
        self.nvml.nvmlGpmMetricsGet(request)
        out = {}
        for i, name in enumerate(self.names):
            metric = request.metrics[i]
            if metric.nvmlReturn == 0:
                out[name] = min(max(float(metric.value) / 100.0, 0.0), 1.0)
        return out

    def free(self) -> None:
        for sample in self.samples:
            try:
                self.nvml.nvmlGpmSampleFree(sample)
            except Exception:
                pass
        self.samples = []
        self.working = False
