"""What making one batch costs, by part: the dataset's samples (`__getitem__`, or an iterable's
next items), the collate_fn that assembles them (named where it is the user's or a framework's own,
e.g. a collator that tokenizes the batch), and, for batches made in the training process, the rest
of the wait (the sampler's indices, pinning). The collate is timed inside each fetch by the probe,
on the same clock as the fetch itself."""

from gpuprof.stats.digits import FINE_DIGITS, REPORT_DIGITS

#: A collate taking at least this share of making a batch is named as the part to work on. A
#: reporting threshold (what is worth a line), not an estimate: the estimates use the measured share.
NOTABLE_SHARE = 0.25
COLLATE_MOST = 0.5      # a notable collate's share from which it makes most of each batch


def batch_parts(entry: dict):
    """{"samples_s", "collate_s", "collate_share", "rest_s", "collate", "notable"} per batch for one
    analysed loader entry; None where its collate was not timed (an older record, an attached run)."""
    producer = entry.get("producer") or {}
    made = producer.get("batches") or 0
    if not made or producer.get("collate_s") is None or not producer.get("wall_s"):
        return None
    wall = producer["wall_s"] / made
    collate = min(producer["collate_s"] / made, wall)
    rest = None
    if producer.get("in_main_process") and entry.get("batches"):
        rest = max((entry.get("wait_s") or 0.0) / entry["batches"] - wall, 0.0)
    share = collate / wall if wall > 0 else 0.0
    named = entry.get("collate")
    return {"samples_s": round(wall - collate, FINE_DIGITS), "collate_s": round(collate, FINE_DIGITS),
            "collate_share": round(share, REPORT_DIGITS),
            "rest_s": round(rest, FINE_DIGITS) if rest is not None else None,
            "collate": named, "notable": bool(named) and share >= NOTABLE_SHARE}


def collate_words(parts: dict) -> str:
    """'the collate_fn Collator.__call__ (train.py:30)' or 'the collate_fn' where it is not named."""
    named = parts.get("collate") or {}
    if named.get("name"):
        return f"the collate_fn {named['name']} ({named.get('where')})"
    return "the collate_fn"


#: Integer dtypes of token ids (uint8 is an image's).
_ID_DTYPES = ("int64", "int32", "int16")


def token_batch(loader: dict) -> bool:
    """Whether a loader's batches are token ids: its largest tensor a 2-D integer one (batch, length)."""
    batch = (loader or {}).get("batch") or {}
    return batch.get("dtype") in _ID_DTYPES and len(batch.get("shape") or ()) == 2


def collate_dominates(loader: dict) -> bool:
    """Whether a named collate makes most of each batch: the deterministic work to cache is the
    collate's (gpuprof.advise.fixes.collate_once), not the samples'."""
    parts = (loader or {}).get("batch_parts") or {}
    return bool(parts.get("notable")) and parts.get("collate_share", 0.0) >= COLLATE_MOST
