"""NCCL among simulated GPUs: a process group for `init_process_group("nccl")` on the simulated
machine, so DistributedDataParallel and FSDP run under torchrun as they do on GPUs.

The CPU build of torch has no NCCL, and device tensors hold no values, so nothing is sent: each
collective on device tensors is costed and queued on the device, and the ranks agree on when it can
start. A collective starts on the GPUs once every rank's stream has reached it (each rank sends the
time its stream gets there to the others through the job's store, on the host), and takes NCCL's ring
traffic at the link's bandwidth: an all-reduce moves 2(n-1)/n of its bytes through each GPU's link,
an all-gather or a reduce-scatter (n-1)/n, a broadcast all of them (nccl-tests' PERFORMANCE.md:
bus bandwidth), after a fixed latency. On the device a rank that got there first runs the collective
from then on, waiting for the others inside it, as NCCL's kernels spin on their GPU while a peer is
late (NVML counts the GPU busy meanwhile). Collectives on host tensors go through the gloo group.

Simplifications: the host exchange makes a rank's host wait for the others' hosts at each collective
(NCCL's launch does not), and every collective of a group runs on the current stream of its
tensors' device in the order the host issues it."""

#: The name the simulated group is registered under; `init_process_group("nccl")` and a device
#: backend map's "cuda:nccl" are turned into it.
BACKEND = "gpuprof_simnccl"
#: Share of the SMs NCCL's kernels keep busy (a ring all-reduce runs on a few channels, one block each).
NCCL_SM_SHARE = 0.1


def traffic(op: str, nbytes: int, world: int) -> float:
    """Bytes each GPU's link carries for a collective of `nbytes` (the tensor's, or the gathered
    whole's) among `world` ranks, by NCCL's ring algorithms."""
    if world <= 1:
        return 0.0
    if op == "allreduce":
        return 2.0 * (world - 1) / world * nbytes
    if op in ("allgather", "reduce_scatter", "alltoall"):
        return (world - 1) / world * nbytes
    return float(nbytes)                    # broadcast, reduce


def install(torch, face) -> None:
    """Register the simulated NCCL group and route "nccl" to it; DDP's check of the parameters'
    shapes across ranks reads values, so it is left to the shapes the ranks build alike."""
    import torch.distributed as dist

    if not dist.is_available() or BACKEND in getattr(dist.Backend, "backend_list", ()):
        return
    group_class = _group_class(torch, dist, face)
    dist.Backend.register_backend(BACKEND, lambda store, rank, size, timeout: group_class(store, rank, size, timeout),
                                  devices=["cuda", "cpu"])
    c10d = dist.distributed_c10d
    for name in ("init_process_group", "new_group"):
        original = getattr(c10d, name)
        routed = _routing(original)
        setattr(c10d, name, routed)
        if getattr(dist, name, None) is original:
            setattr(dist, name, routed)
    real_get_backend = c10d.get_backend

    def get_backend(group=None):
        found = real_get_backend(group)
        return "nccl" if str(found) == BACKEND else found
    c10d.get_backend = dist.get_backend = get_backend

    def verify_shapes(process_group, tensors, logger=None):
        if any(on_device(t) for t in tensors):
            return None
        return real_verify(process_group, tensors, logger)
    import torch.distributed.utils as dist_utils
    real_verify = dist_utils._verify_param_shape_across_processes
    dist_utils._verify_param_shape_across_processes = verify_shapes
    # DDP rebuilds its buckets after the first step in the order gradients arrived, with rank 0's
    # order broadcast to the others and read back on the host: values a device tensor does not hold.
    # The buckets keep the order DDP built them in (the parameters reversed, near backward's order).
    torch._C._distributed_c10d.Reducer._rebuild_buckets = lambda self: False
    _time_ddp(torch, face)
    ddp_module = __import__("torch.nn.parallel.distributed", fromlist=["_verify_param_shape_across_processes"])
    if getattr(ddp_module, "_verify_param_shape_across_processes", None) is real_verify:
        ddp_module._verify_param_shape_across_processes = verify_shapes


class DdpTiming:
    """What DDP's own logger times with CUDA events on a GPU (its reducer has no timer for the
    simulated device's tensors), from the simulated device's timeline, per iteration: the forward
    (from its start to the end of its kernels), the backward's compute (from there to the moment the
    last bucket is ready), the all-reduce (from the first bucket's start to the last one's end) and
    the part of it that overlaps the backward's compute. Averages in nanoseconds, under DDP's names."""

    def __init__(self):
        self.sums = {"forward": 0.0, "backward_compute": 0.0, "allreduce": 0.0, "overlap": 0.0}
        self.iterations = 0
        self.current = None

    def forward_started(self, t: float) -> None:
        self._finish()
        self.current = {"forward": t, "backward": None, "first": None, "last_ready": None, "end": None}

    def forward_ended(self, t: float) -> None:
        if self.current is not None and self.current["backward"] is None:
            self.current["backward"] = t

    def collective(self, ready: float, end: float) -> None:
        now = self.current
        if now is None or now["backward"] is None:
            return
        now["first"] = ready if now["first"] is None else min(now["first"], ready)
        now["last_ready"] = ready if now["last_ready"] is None else max(now["last_ready"], ready)
        now["end"] = end if now["end"] is None else max(now["end"], end)

    def _finish(self) -> None:
        now, self.current = self.current, None
        if not now or now["end"] is None:
            return
        self.sums["forward"] += now["backward"] - now["forward"]
        self.sums["backward_compute"] += max(0.0, now["last_ready"] - now["backward"])
        self.sums["allreduce"] += now["end"] - now["first"]
        self.sums["overlap"] += max(0.0, now["last_ready"] - now["first"])
        self.iterations += 1

    def logging_data(self) -> dict:
        if not self.iterations:
            return {}
        average = {name: int(total / self.iterations * 1e9) for name, total in self.sums.items()}
        return {"avg_forward_compute_time": average["forward"],
                "avg_backward_compute_time": average["backward_compute"],
                "avg_backward_comm_time": average["allreduce"],
                "avg_backward_compute_comm_overlap_time": average["overlap"], "iteration": self.iterations}


TIMING = DdpTiming()


def on_device(tensor) -> bool:
    """A simulated device tensor: its storage is on the meta device (what the tensor says of itself
    passes through the face's function mode, which answers "cuda")."""
    return tensor.untyped_storage().device.type == "meta"


def _time_ddp(torch, face) -> None:
    """DDP's forward marks each iteration on the device's timeline, and its logging data carries the
    times DdpTiming kept where its reducer kept none."""
    ddp = torch.nn.parallel.DistributedDataParallel
    real_forward, real_logging = ddp.forward, ddp._get_ddp_logging_data

    def device_now(module):
        first = next((p for p in module.parameters() if on_device(p)), None)
        if first is None:
            return None
        ordinal = face.ops.ordinal(first)
        return face.runtime.device(ordinal).stream_ready(face.runtime.current_stream(ordinal))

    def forward(self, *args, **kwargs):
        started = device_now(self.module)
        if started is not None:
            TIMING.forward_started(started)
        out = real_forward(self, *args, **kwargs)
        if started is not None:
            TIMING.forward_ended(device_now(self.module))
        return out

    def logging_data(self):
        data = real_logging(self)
        timed = TIMING.logging_data()
        if timed and not data.get("avg_backward_comm_time"):
            data.update(timed)
        return data

    forward.__wrapped__, logging_data.__wrapped__ = real_forward, real_logging
    ddp.forward, ddp._get_ddp_logging_data = forward, logging_data


def _routed_backend(backend):
    """"nccl" (any case, alone or as a device's backend in "cpu:gloo,cuda:nccl") as the simulated group."""
    if backend is None:
        return None
    text = str(backend)
    parts = []
    for part in text.split(","):
        device, _, name = part.rpartition(":")
        if name.strip().lower() == "nccl":
            name = BACKEND
        parts.append(f"{device}:{name}" if device else name)
    return ",".join(parts)


def _routing(original):
    def routed(*args, **kwargs):
        if "backend" in kwargs:
            kwargs["backend"] = _routed_backend(kwargs["backend"])
        elif args and original.__name__ == "init_process_group":
            args = (_routed_backend(args[0]),) + tuple(args[1:])
        elif len(args) >= 3 and original.__name__ == "new_group":
            args = tuple(args[:2]) + (_routed_backend(args[2]),) + tuple(args[3:])
        if original.__name__ == "init_process_group" and "backend" not in kwargs and not args:
            kwargs["backend"] = "cpu:gloo,cuda:" + BACKEND      # torch's default pairs CUDA with NCCL
        return original(*args, **kwargs)
    routed.__name__ = original.__name__
    routed.__doc__ = original.__doc__
    routed.__wrapped__ = original
    return routed


def _group_class(torch, dist, face):
    from torch._C._distributed_c10d import _create_work_from_future
    from torch.futures import Future

    def done(result):
        future = Future()
        future.set_result(result)
        return _create_work_from_future(future)

    class SimulatedNccl(dist.ProcessGroup):
        """One rank's NCCL group on simulated GPUs (see the module's docstring)."""

        def __init__(self, store, rank, size, timeout):
            super().__init__(rank, size)
            self.world = size
            self.gloo = dist.ProcessGroupGloo(dist.PrefixStore("gpuprof-simgpu-nccl", store), rank, size, timeout)
            self.arrivals = dist.PrefixStore("gpuprof-simgpu-arrivals", store)
            self.exchanged = 0
            # A group's name lives on its backends (a group with none has no name, and DeviceMesh,
            # which FSDP2 builds, reads it): the gloo group stands as the one for host tensors.
            self._register_backend(torch.device("cpu"), dist.ProcessGroup.BackendType.GLOO, self.gloo)

        def getBackendName(self):
            return BACKEND

        # ---- the collectives

        def allreduce(self, tensors, opts=None):
            return self._collective("allreduce", tensors, tensors, lambda: self.gloo.allreduce(tensors, opts)
                                    if opts is not None else self.gloo.allreduce(tensors))

        def allreduce_coalesced(self, tensors, opts=None):
            return self._collective("allreduce", tensors, tensors, lambda: self.gloo.allreduce_coalesced(tensors, opts))

        def broadcast(self, tensors, opts=None):
            return self._collective("broadcast", tensors, tensors, lambda: self.gloo.broadcast(tensors, opts)
                                    if opts is not None else self.gloo.broadcast(tensors))

        def allgather(self, outputs, inputs, opts=None):
            flat = [t for group in outputs for t in group]
            return self._collective("allgather", flat, outputs, lambda: self.gloo.allgather(outputs, inputs, opts)
                                    if opts is not None else self.gloo.allgather(outputs, inputs))

        def _allgather_base(self, output, input, opts=None):
            return self._collective("allgather", [output], [output], lambda: self.gloo._allgather_base(output, input, opts)
                                    if opts is not None else self.gloo._allgather_base(output, input))

        def reduce_scatter(self, outputs, inputs, opts=None):
            flat = [t for group in inputs for t in group]
            return self._collective("reduce_scatter", flat, outputs,
                                    lambda: self.gloo.reduce_scatter(outputs, inputs, opts)
                                    if opts is not None else self.gloo.reduce_scatter(outputs, inputs))

        def _reduce_scatter_base(self, output, input, opts=None):
            return self._collective("reduce_scatter", [input], [output],
                                    lambda: self.gloo._reduce_scatter_base(output, input, opts)
                                    if opts is not None else self.gloo._reduce_scatter_base(output, input))

        # torch 2.13's names for the one-tensor forms (all_gather_into_tensor, reduce_scatter_tensor:
        # FSDP's gathers and reductions) and their coalesced lists
        all_gather_single = _allgather_base
        reduce_scatter_single = _reduce_scatter_base

        def all_gather_single_coalesced(self, outputs, inputs, opts=None):
            return self._collective("allgather", outputs, outputs, lambda: self._each(
                self.gloo._allgather_base, outputs, inputs, opts))

        def reduce_scatter_single_coalesced(self, outputs, inputs, opts=None):
            return self._collective("reduce_scatter", inputs, outputs, lambda: self._each(
                self.gloo._reduce_scatter_base, outputs, inputs, opts))

        allgather_into_tensor_coalesced = all_gather_single_coalesced
        reduce_scatter_tensor_coalesced = reduce_scatter_single_coalesced

        def _each(self, collective, outputs, inputs, opts):
            """A coalesced list on host tensors, one gloo collective a pair."""
            works = [collective(out, inp, opts) if opts is not None else collective(out, inp)
                     for out, inp in zip(outputs, inputs)]
            for work in works[:-1]:
                work.wait()
            return works[-1] if works else done(outputs)

        def barrier(self, opts=None):
            return self.gloo.barrier(opts) if opts is not None else self.gloo.barrier()

        # ---- costing

        def _collective(self, op, moved, result, on_host):
            device_tensors = [t for t in moved if on_device(t)]
            if not device_tensors:
                return on_host()
            nbytes = sum(t.numel() * t.element_size() for t in device_tensors)
            ordinal = face.ops.ordinal(device_tensors[0])
            device = face.runtime.device(ordinal)
            stream = face.runtime.current_stream(ordinal)
            ready = device.stream_ready(stream)
            everyone = self._latest(ready)
            _, end = device.collective(stream, ready, everyone, traffic(op, nbytes, self.world), NCCL_SM_SHARE)
            TIMING.collective(ready, end)
            return done(result)

        def _latest(self, ready: float) -> float:
            """The latest time any rank's stream reaches this collective, exchanged through the
            store in the calling thread. A gloo collective would do, but its work keeps a copy of
            the caller's thread-local state (the face's modes among it) and gloo's worker thread
            drops it later: if the interpreter is finalising by then, the drop takes the GIL, Python
            ends that thread inside a C++ destructor and the process aborts ("terminate called
            without an active exception"), as a loaded machine showed at the end of FSDP runs."""
            self.exchanged += 1
            key = f"{self.exchanged}/"
            self.arrivals.set(key + str(self.rank()), repr(ready))
            latest = max(float(self.arrivals.get(key + str(rank))) for rank in range(self.world))
            if self.exchanged > 1:
                # every rank has set this exchange's key, so each has read all of the last one's
                self.arrivals.delete_key(f"{self.exchanged - 1}/{self.rank()}")
            return latest

    SimulatedNccl.__module__ = __name__
    return SimulatedNccl

