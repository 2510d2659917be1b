"""device-preprocessing: do the CPU-bound preparation as batched tensor ops on the training
device. Assumed to make a batch several times cheaper: most on a GPU, less for a hand-written
per-row batcher vectorised on a CPU, least for a DataLoader's per-sample transforms batched on a CPU
(prior device-preprocessing.times-cheaper)."""

from gpuprof.advise.fix import MIN_GAIN, Fix, pct
from gpuprof.advise.loader_terms import where as loader_where
from gpuprof.priors.input_fixes import BATCHED_ON_DEVICE
from gpuprof.judge.verdict.evidence import HANDWRITTEN
from gpuprof.judge.verdict import bottlenecks
from gpuprof.judge.sections.batch_parts import token_batch


def build(ev, s):
    if s.input_kind != bottlenecks.INPUT_CPU.id:
        return None
    if token_batch(ev.loader):
        return None         # token ids: tokenizing has no batched tensor form on the device
    handwritten = ev.wait_source in HANDWRITTEN
    k = cheaper_by(ev.gpu, handwritten)
    gain = s.cheaper_input(ev, k)
    if gain < MIN_GAIN:
        return None
    if ev.wait_source == "sampled":
        detail = (f"build each batch in {ev.data_where or 'the batch function'} with whole-batch tensor ops (one "
                  "index or gather for all rows, vectorised clean-up) instead of per-row Python work")
        snippet = ("rows = data[idx]             # one fancy index for the whole batch, not a slice per row\n"
                   "batch = torch.as_tensor(rows).to(device, non_blocking=True)")
        where = None
    elif handwritten:
        detail = ("build each batch with one vectorised op on the device (index_put_/scatter_ or a sparse "
                  "tensor's to_dense()) instead of per-row Python loops on the host")
        snippet = ("rows = torch.repeat_interleave(torch.arange(B), lengths)        # row of every nonzero\n"
                   "dense = torch.zeros(B, D, device=device)\n"
                   "dense.index_put_((rows.to(device), cols.to(device)), values.to(device), accumulate=True)")
        where = None
    else:
        detail = ("return raw samples (uint8 where possible) from __getitem__ and run the transforms on whole "
                  "batches on the device after the copy")
        snippet = ("x = x.to(device, non_blocking=True).float().div_(255)\n"
                   "x = augment(x)          # batched: e.g. torchvision.transforms.v2 on device tensors")
        where = loader_where(ev)
    return {"estimated_speedup": gain, "where": where, "detail": detail, "snippet": snippet,
            "why": f"batch preparation is CPU-bound ({pct(ev.producer_cpu_ratio or 0)} CPU); {s.input_cost(ev)}"
                   + ("" if ev.gpu else "; on this CPU-only machine the "
                   "gain comes from vectorising, on a GPU it is larger")}


def cheaper_by(gpu: bool, handwritten: bool) -> float:
    """The assumed times cheaper a batch gets (prior device-preprocessing.times-cheaper)."""
    times = BATCHED_ON_DEVICE.value
    if gpu:
        return times["on a GPU"]
    return times["hand-written batcher, CPU" if handwritten else "per-sample transforms, CPU"]


FIX = Fix(id="device-preprocessing", title="Do the preprocessing as batched tensor ops on the training device",
          effort=3, addresses=(bottlenecks.INPUT_CPU.id,), build=build)
