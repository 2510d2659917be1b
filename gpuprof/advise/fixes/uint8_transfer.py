"""uint8-transfer: batches of floats that hold byte values travel as uint8 (4x fewer bytes) and
are converted on the device; saves an assumed share of the copy time (prior
uint8-transfer.copy-time-saved). The values are a DataLoader batch's, or those of the first large
float copies to the GPU (a loop that slices decoded 8-bit pixels held as floats in memory)."""

from gpuprof.advise.fix import MIN_GAIN, Fix, pct
from gpuprof.advise.loader_terms import where
from gpuprof.advise.model import cheaper_share
from gpuprof.priors.copy_fixes import UINT8_COPY_SAVED
from gpuprof.judge.verdict import bottlenecks
def build(ev, s):
    batch = (ev.loader or {}).get("batch") or {}
    copied = (ev.copies or {}).get("values") or {}
    from_loader = bool(batch.get("uint8_candidate"))
    if not (from_loader or copied.get("uint8_candidate")) or not ev.copy_share:
        return None
    gain = cheaper_share(ev.copy_share, UINT8_COPY_SAVED.value)
    if gain < MIN_GAIN:
        return None
    facts = batch if from_loader else copied
    form = facts.get("uint8_form")
    suffixes: dict[str | None, str] = {"0..255": "", "k/255": ".div_(255)", "affine": ".div_(255).sub_(mean).div_(std)"}
    normalise = suffixes.get(form, "")
    if from_loader:
        return {"estimated_speedup": gain, "where": where(ev),
                "detail": f"batches of {batch.get('dtype')} {batch.get('shape')} hold uint8 values ({form}): "
                          "send uint8 (4x fewer bytes) and convert on the device",
                "snippet": f"x = x.to(device, non_blocking=True).float(){normalise}   # dataset returns uint8",
                "why": f"copies take {pct(ev.copy_share)} of the time and every sampled value fits in a byte"}
    # a float tensor of 8-bit values copied outside a DataLoader (decoded pixels held in memory)
    return {"estimated_speedup": gain, "where": copied.get("where"),
            "detail": f"the {copied.get('dtype')} {copied.get('shape')} copied to the GPU holds uint8 values ({form}): "
                      "keep the data as uint8 in host memory, copy that (4x fewer bytes) and convert on the device",
            "snippet": "data = data.to(torch.uint8)   # once, where the data is loaded\n"
                       f"x = data[i:i + batch].to(device, non_blocking=True).float(){normalise}",
            "why": f"copies take {pct(ev.copy_share)} of the time and every sampled value of the "
                   f"{copied.get('looked_at')} largest copies looked at fits in a byte"}


FIX = Fix(id="uint8-transfer", title="Ship uint8 to the device and normalise there", effort=2,
          addresses=(bottlenecks.TRANSFER_H2D.id, bottlenecks.INPUT_CPU.id), build=build)
