"""GPM (GPU Performance Monitoring) for the simulated NVML face: samples and the metrics between two.

NVML's GPM takes two samples of a GPU's (or one MIG instance's) counters and computes metrics over
the time between them (NVML API Reference, "GPM Functions"). Here a sample is a real
`c_nvmlGpmSample_t` pointing at memory the face owns, mapped to the instant and the GPU or instance
it was taken on; the metrics come from the activity records between the two instants. A mixin of
`NvmlFace`, whose helpers (_target, _parent, _kernels, _fail, ...) it uses."""

import ctypes

from . import busy
from .real_nvml import address_of

# The metrics the simulation computes, with the short and long names NVML gives them.
METRIC_NAMES = {"GRAPHICS_UTIL": (b"gr_util", b"Graphics utilization"),
                "SM_UTIL": (b"sm_util", b"SM utilization"),
                "SM_OCCUPANCY": (b"sm_occupancy", b"SM occupancy"),
                "ANY_TENSOR_UTIL": (b"any_tensor_util", b"Any tensor utilization")}


class GpmQueries:
    def nvmlGpmQueryDeviceSupport(self, device):
        support = self.real.c_nvmlGpmSupport_t()
        support.version = self.real.NVML_GPM_SUPPORT_VERSION
        support.isSupportedDevice = 1 if self._target(device).gpu.gpm else 0
        return support

    def nvmlGpmSampleAlloc(self):
        self._check_init()
        memory = ctypes.create_string_buffer(8)
        sample = ctypes.cast(memory, self.real.c_nvmlGpmSample_t)
        with self._lock:
            self._samples[ctypes.addressof(memory)] = (memory, None)
        return sample

    def nvmlGpmSampleFree(self, gpmSample):
        self._check_init()
        with self._lock:
            if self._samples.pop(address_of(gpmSample), None) is None:
                self._fail("INVALID_ARGUMENT")

    def nvmlGpmSampleGet(self, device, gpmSample):
        target = self._target(device)
        self._take(target, target.mig.gpu_instance_id if target.mig else None, gpmSample)
        return gpmSample

    def nvmlGpmMigSampleGet(self, device, gpuInstanceId, gpmSample):
        target = self._parent(device)
        if not target.gpu.mig:
            self._fail("INVALID_ARGUMENT")
        if gpuInstanceId not in [inst.gpu_instance_id for inst in target.gpu.mig]:
            self._fail("NOT_FOUND")
        self._take(target, gpuInstanceId, gpmSample)
        return gpmSample

    def nvmlGpmMetricsGet(self, metricsGet):
        """Fill metricsGet.metrics[:numMetrics]: the GPU's activity between sample1 and sample2."""
        self._check_init()
        real = self.real
        if metricsGet.version != real.NVML_GPM_METRICS_GET_VERSION:
            self._fail("ARGUMENT_VERSION_MISMATCH")
        first, second = (self._samples.get(address_of(s), (None, None))[1]
                         for s in (metricsGet.sample1, metricsGet.sample2))
        if first is None or second is None or first[1:] != second[1:] or first[0] == second[0] \
                or metricsGet.numMetrics > real.NVML_GPM_METRIC_MAX:
            self._fail("INVALID_ARGUMENT")
        index, instance = first[1], first[2]
        self._live(self._gpus[index])
        values = self._metric_values(self._sampled(index, instance), *sorted((first[0], second[0])))
        by_id = {getattr(real, "NVML_GPM_METRIC_" + key): key for key in values}
        for i in range(metricsGet.numMetrics):
            metric = metricsGet.metrics[i]
            key = by_id.get(metric.metricId)
            if key is None:
                metric.nvmlReturn, metric.value = real.NVML_ERROR_NOT_SUPPORTED, 0.0
                continue
            metric.nvmlReturn, metric.value = real.NVML_SUCCESS, values[key]
            metric.metricInfo.shortName, metric.metricInfo.longName = METRIC_NAMES[key]
            metric.metricInfo.unit = b"%"
        return metricsGet

    def _metric_values(self, target, lo, hi):
        """Percent of [lo, hi): any kernel running (graphics activity), and the SMs kept active
        (SM utilisation). The records hold no warp or instruction mix: occupancy is the SM-active
        figure times the GPU's `active_sm_occupancy`, tensor activity the SM-active figure (an upper
        bound)."""
        kernels = self._kernels(target, since=lo)
        active = min(100.0, 100.0 * busy.union_time(kernels, lo, hi) / (hi - lo))
        sm = min(100.0, 100.0 * busy.weighted_time(kernels, lo, hi) / (hi - lo))
        occupancy = sm * min(1.0, max(0.0, float(target.gpu.active_sm_occupancy)))
        return {"GRAPHICS_UTIL": active, "SM_UTIL": sm, "SM_OCCUPANCY": occupancy, "ANY_TENSOR_UTIL": sm}

    def _sampled(self, index, instance):
        if instance is None:
            return self._gpus[index]
        return next(t for t in self._migs[index].values() if t.mig.gpu_instance_id == instance)

    def _take(self, target, instance, sample):
        if not target.gpu.gpm:
            self._fail("NOT_SUPPORTED")
        address = address_of(sample)
        with self._lock:
            if address not in self._samples:
                self._fail("INVALID_ARGUMENT")
            self._samples[address] = (self._samples[address][0], (self.clock(), target.index, instance))
