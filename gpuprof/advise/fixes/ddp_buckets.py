"""ddp-buckets: fewer, larger gradient buckets in DDP (bucket_cap_mb): fewer all-reduce calls, each
started as soon as its gradients are ready, so more communication overlaps the backward pass. The
gain depends on the network and the model's layer sizes: not estimated."""

from gpuprof.advise.fix import Fix
from gpuprof.judge.verdict import bottlenecks
def build(ev, s):
    if s.bottleneck != bottlenecks.COMM.id:
        return None
    return {"estimated_speedup": None, "where": None,
            "detail": "DistributedDataParallel(model, bucket_cap_mb=100, gradient_as_bucket_view=True) "
                      "(the default bucket is 25 MB); with static graphs also static_graph=True",
            "snippet": "model = DistributedDataParallel(model, device_ids=[local_rank], bucket_cap_mb=100, "
                       "gradient_as_bucket_view=True)",
            "why": f"{s.share:.0%} of each step waits in collectives; fewer, larger all-reduces overlap "
                   "better with the backward pass; not estimated (the network and the layers' sizes decide how much "
                   "overlaps): measure it"}


FIX = Fix(id="ddp-buckets", title="Fewer, larger gradient buckets in DDP (bucket_cap_mb)", effort=1,
          addresses=(bottlenecks.COMM.id,), build=build)
