"""CUDA graphs on the simulated device: `torch.cuda.CUDAGraph`, captured with `torch.cuda.graph`.

While a graph captures a stream, the kernels launched on it are kept for the graph and do not run
(CUDA's stream capture: work issued to a capturing stream is recorded, not executed). `replay()`
queues the kept kernels back to back on the current stream in one call of the host, which is the
effect CUDA graphs are documented for: one launch for the whole graph instead of one per kernel
(CUDA C Programming Guide, *CUDA Graphs*; PyTorch *CUDA semantics*, *CUDA Graphs*: "reduces CPU
overhead"). Inside the graph kernels keep the device's measured gap between queued kernels.
Not simulated: the graph's private memory pool (its tensors are counted as any others), copies
and collectives captured into a graph (they run at capture), and the errors CUDA raises for a sync
inside a capture."""


def graph_class(api):
    runtime = api.runtime

    class CUDAGraph:
        """torch.cuda.CUDAGraph on the simulated device."""

        def __init__(self, keep_graph: bool = False):
            self._kernels, self._device, self._stream = [], None, None

        def capture_begin(self, pool=None, capture_error_mode: str = "global", **kwargs):
            ordinal = runtime.current()
            self._device = runtime.device(ordinal)
            self._stream = runtime.current_stream(ordinal)
            self._kernels = []
            self._stream.capture = self._kernels

        def capture_end(self):
            if self._stream is not None:
                self._stream.capture = None

        def replay(self):
            if self._device is None:
                raise RuntimeError("CUDA graph replayed before it was captured")
            self._device.replay(runtime.current_stream(self._device.index), self._kernels)

        def instantiate(self):
            pass

        def reset(self):
            self.capture_end()
            self._kernels, self._device, self._stream = [], None, None

        def pool(self):
            return (0, id(self))

        def enable_debug_mode(self):
            pass

        def debug_dump(self, path):
            pass

    return CUDAGraph
