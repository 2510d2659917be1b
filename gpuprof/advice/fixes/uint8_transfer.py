"""uint8-transfer: batches of floats that hold byte values travel as uint8 (4x fewer bytes) and
are converted on the device; saves an assumed share of the copy time (prior
uint8-transfer.copy-time-saved)."""

from gpuprof.advice.fix import MIN_GAIN, Fix, pct
from gpuprof.advice.loader_terms import where
from gpuprof.advice.model import cheaper_share
from gpuprof.priors.copy_fixes import UINT8_COPY_SAVED
from gpuprof.analysis import bottlenecks


def build(ev, s):
    batch = (ev.loader or {}).get("batch") or {}
    if not batch.get("uint8_candidate") or not ev.copy_share:
        return None
    gain = cheaper_share(ev.copy_share, UINT8_COPY_SAVED.value)
    if gain < MIN_GAIN:
        return None
    normalise = {"0..255": "", "k/255": ".div_(255)", "affine": ".div_(255).sub_(mean).div_(std)"}.get(batch.get("uint8_form"), "")
    return {"estimated_speedup": gain, "where": where(ev),
            "detail": f"batches of {batch.get('dtype')} {batch.get('shape')} hold uint8 values ({batch.get('uint8_form')}): "
                      "send uint8 (4x fewer bytes) and convert on the device",
            "snippet": f"x = x.to(device, non_blocking=True).float(){normalise}   # dataset returns uint8",
            "why": f"copies take {pct(ev.copy_share)} of the time and every sampled value fits in a byte"}


FIX = Fix(id="uint8-transfer", title="Ship uint8 to the device and normalise there", effort=2,
          addresses=(bottlenecks.TRANSFER_H2D.id, bottlenecks.INPUT_CPU.id), build=build)
