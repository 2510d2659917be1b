"""pin-memory: pinned host memory and non-blocking copies, so copies overlap compute; applies when
most bytes copied came from pageable memory, and saves an assumed share of the copy time (prior
pin-memory.copy-time-saved)."""

from gpuprof.advise.fix import MIN_GAIN, Fix, pct
from gpuprof.advise.flag_terms import PINNED, command_first
from gpuprof.advise.loader_terms import keep_loader_line, loader_detail, loader_snippet, where
from gpuprof.advise.model import cheaper_share
from gpuprof.priors.copy_fixes import PINNED_COPY_SAVED
from gpuprof.judge.verdict import bottlenecks
#: Offered where at least this share of the copied bytes came from pageable memory.
MOSTLY_PAGEABLE = 0.5


def pageable_share(ev) -> float:
    copies = ev.copies
    return copies.get("pageable_bytes", 0) / copies["bytes"] if copies.get("bytes") else 0.0


def build(ev, s):
    if not ev.copy_share or pageable_share(ev) < MOSTLY_PAGEABLE:
        return None
    gain = cheaper_share(ev.copy_share, PINNED_COPY_SAVED.value)
    if gain < MIN_GAIN:
        return None
    loader = ev.loader or {}
    return {"estimated_speedup": gain, "where": where(ev),
            "detail": loader_detail(ev, "pin_memory " + ("False -> True" if loader and not loader.get("pin_memory")
                                                          else "on") + ", and .to(device, non_blocking=True) so copies "
                                    "overlap compute"),
            "snippet": command_first(ev, PINNED, True, loader_snippet(ev, {"pin_memory": True})
                                     + "\nx = x.to(device, non_blocking=True)"),
            "change": {"pin_memory": True},
            "why": f"{pct(pageable_share(ev))} of {ev.copies.get('bytes', 0) / 1e6:.0f} MB copied came from pageable "
                   f"memory; copies take {pct(ev.copy_share)} of the time"}


FIX = Fix(id="pin-memory", title="Pin host memory and copy asynchronously", effort=1,
          addresses=(bottlenecks.TRANSFER_H2D.id,),
          build=build, try_keys=("pin_memory",), keep=keep_loader_line, unadvised=lambda report: {"pin_memory": True})
