"""decode-reduced-size: decode images no larger than the model sees.

A producer that decodes a 500x375 photo in full and then shrinks it to 64x64 pays for pixels it
throws away: the resize reads every one of them, and the decode makes them. JPEG's draft mode has
the decoder itself reduce the image by 1/2, 1/4 or 1/8 (inverse DCT at a smaller scale), to no less
than the size asked for, before the program's own resize; resizing once ahead of training does
the same for any format (the deterministic decode and resize only: random augmentation stays
online); on a GPU, torchvision.io.decode_jpeg(device="cuda") moves decoding off the cores.

Offered where the probe (gpuprof.capture.probes.image_sizes) saw the decoded image at least REDUCIBLE
times the resize's target on each side, and decoding and resizing took at least DOMINANT of the
producers' CPU time per sample. The estimate: the resize's cost falls with the area (1/scale²); the
decode's by DECODE_SAVED at the draft scale (entropy decoding is not reduced, only the inverse DCT,
upsampling and colour conversion), its ends the estimate's."""

from gpuprof.advise.fix import MIN_GAIN, Fix, pct
from gpuprof.advise.loader_terms import where
from gpuprof.priors.input_fixes import DRAFT_MODE_DECODE_SAVED, DRAFT_MODE_MOST_SAVED
from gpuprof.judge.verdict import bottlenecks
from gpuprof.judge.sections.augmentation import random_parts
from gpuprof.judge.sections.image_sizes import decode_share, reduction

REDUCIBLE = 2.0         # decoded image at least this many times the target on each side
DOMINANT = 0.3          # decode and resize at least this share of the producers' CPU time per sample
#: The share of the decode's time draft mode saves at each scale: (low, central, high); smoother
#: photos save more, since entropy decoding is the part draft mode leaves.
DECODE_SAVED = DRAFT_MODE_DECODE_SAVED.value
#: The most of a sample's making (CPU) the reduced decode and resize save: a sample at most 10x cheaper.
MOST_SAVED = DRAFT_MODE_MOST_SAVED.value
#: The reductions JPEG's draft mode offers, largest first (1: none).
DRAFT_SCALES = (8, 4, 2, 1)


def draft_scale(ratio: float) -> int:
    """The decoder's reduction draft mode picks: the largest of 8, 4, 2 no larger than the ratio."""
    return next(scale for scale in DRAFT_SCALES if ratio >= scale)


def producer_saving(images: dict, per_sample_s: float, scale: int, end: int) -> float:
    """The share of a sample's making (CPU) saved at `scale` (end 0 low, 1 central, 2 high)."""
    resize_saved = 1.0 - 1.0 / (scale * scale)
    saved = images["decode_s"] * DECODE_SAVED[scale][end] + images["resize_s"] * resize_saved
    return min(saved / per_sample_s, MOST_SAVED)


def build(ev, s):
    loader = ev.loader or {}
    images = loader.get("images") or {}
    if not images or s.input_kind is None:
        return None
    ratio, share = reduction(images), decode_share(loader)
    if ratio < REDUCIBLE or share is None or share < DOMINANT:
        return None
    scale = draft_scale(ratio)
    per_sample = (images["decode_s"] + images["resize_s"]) / share
    gains = [s.cheaper_input(ev, 1.0 / (1.0 - producer_saving(images, per_sample, scale, end))) for end in (0, 1, 2)]
    if gains[1] < MIN_GAIN:
        return None
    (dw, dh), (tw, th) = images["decoded"], images["target"]
    side = max(tw, th)
    jpeg = (images.get("format") or "").upper() == "JPEG"
    detail = (f"images are decoded at {dw}x{dh} and resized to {tw}x{th}: "
              + (f"put each JPEG in draft mode before it is decoded (the decoder reduces it 1/{scale}, to "
                 f"{-(-dw // scale)}x{-(-dh // scale)})" if jpeg else "decode them smaller") + _ahead(loader)
              + ("; on the GPU, torchvision.io.decode_jpeg(data, device='cuda') takes decoding off the cores"
                 if ev.gpu else ""))
    snippet = (f"image = Image.open(path)\nimage.draft('RGB', ({side}, {side}))   # before convert/load: decode "
               f"reduced, no smaller than {side}x{side}\nimage = image.convert('RGB').resize(({tw}, {th}))")
    change = {"jpeg_draft": side} if jpeg else None
    return {"estimated_speedup": gains[1], "estimate_low": gains[0], "estimate_high": gains[2],
            "where": where(ev), "detail": detail, "snippet": snippet, "change": change,
            "why": f"decoding and resizing take {pct(share)} of the producers' CPU time per sample, and the decoded image "
                   f"is {ratio:.1f}x the model's input a side; {s.input_cost(ev)}"}


def _ahead(loader: dict) -> str:
    """Resizing once ahead of training: the deterministic part only where augmentation is random."""
    if random_parts(loader):
        return ("; or resize once ahead of training, caching only the deterministic decode and resize and "
                "keeping the random augmentation online")
    return "; or resize the images once ahead of training (the deterministic decode and resize only)"


def keep(settings: dict, loader, framework=None) -> str:
    side = (settings or {}).get("jpeg_draft")
    return f"call image.draft('RGB', ({side}, {side})) after Image.open, before the image is converted or loaded"


FIX = Fix(id="decode-reduced-size", title="Decode images no larger than the model's input", effort=2,
          addresses=(bottlenecks.INPUT_CPU.id,), build=build, try_keys=("jpeg_draft",), keep=keep)
