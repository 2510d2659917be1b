"""hdf5-chunk-cache: size the HDF5 chunk cache for how the data is read, and keep the data set's
handle open so the cache survives between reads.

Applies when a read decompresses at least twice the bytes it returns (the h5py probe counts the
chunks each read touches). A read finds its chunk in the cache with the chance the cache gives it:
every time for reads in order, for reads in random order the share of the data set's chunks the
cache holds, never where the data set is opened again for each read; a hit costs a copy, a miss the
whole amplification. The cache helps only with the hits it adds to those it gives now, and only the
reads' own time (the probe times them) gets that much cheaper; opening the file again for each read
goes with a kept handle, and the rest of making a sample stays (the batch at most 20x cheaper)."""

import math

from gpuprof.advise.fix import MIN_GAIN, Fix
from gpuprof.advise.model import TINY, next_prime
from gpuprof.priors.input_fixes import CHUNK_CACHE_MOST
from gpuprof.judge.verdict import bottlenecks
from gpuprof.stats.sizes import GIB, MIB

#: Opening the file counts as at most this share of making a batch (the reads keep the rest).
MOST_OPENING_SHARE = 0.95
#: The largest chunk cache proposed (1 GiB); a cache is proposed in whole MiB.
MOST_CACHE_BYTES = GIB


def build(ev, s):
    if s.input_kind not in (bottlenecks.INPUT_CPU.id, bottlenecks.INPUT_DISK.id):
        return None
    bad = [d for d in ev.hdf5 if (d.get("read_amplification") or 0) >= 2 and d.get("chunk_bytes")]
    if not bad:
        return None
    worst = max(bad, key=lambda d: d["read_amplification"])
    amplification = worst["read_amplification"]
    chunk = worst["chunk_bytes"]
    batch = (ev.loader or {}).get("batch_size") or 1
    random_order = (ev.loader or {}).get("sampler") == "RandomSampler"
    nbytes, nslots = _cache_size(worst, chunk, batch, random_order)
    current = worst.get("rdcc_nbytes")
    resize = current is None or current < nbytes
    keep_handle = bool(worst.get("reopened_per_read"))
    if not resize and not keep_handle:
        return None         # the cache is already this size: nothing to change
    cache_after = max(nbytes, current or 0)
    cached = max(cache_after // chunk, 1)
    total = _chunk_count(worst.get("shape"), worst.get("chunks"))
    hit = hit_rate(cache_after, worst, random_order, kept=True)
    # A handle kept also saves opening the file for every read: that time (timed by the probe) goes;
    # the reads get cheaper by the hits the cache adds over those it gives now; the rest of making a
    # sample stays as it is.
    wall = ((ev.loader or {}).get("producer") or {}).get("wall_s")
    opening = min((worst.get("open_s") or 0.0) / wall, MOST_OPENING_SHARE) if keep_handle and wall else 0.0
    reads = _read_shares(bad, wall, opening)
    after = 1.0 - opening - sum(reads.values())
    for d in bad:
        now = hit_rate(current, d, random_order, kept=not d.get("reopened_per_read"))
        later = hit_rate(cache_after, d, random_order, kept=True)
        after += reads[id(d)] * _miss_cost(d["read_amplification"], later) / _miss_cost(d["read_amplification"], now)
    cheaper = 1.0 / max(after, TINY)
    gain = s.cheaper_input(ev, min(cheaper, CHUNK_CACHE_MOST.value))
    if gain < MIN_GAIN:
        return None
    name = worst["dataset"].strip("/")
    changes = []
    if keep_handle:
        changes.append(f"open the data set once per worker and keep its handle (it was opened {worst.get('opens')} "
                       f"times for {worst.get('reads')} reads; each new handle starts with an empty chunk cache, so "
                       "no cache size helps until the handle is kept)")
    if resize:
        changes.append(f"chunk cache {current} B -> {nbytes} B ({nbytes // chunk} chunks of {chunk} B, chunk shape "
                       f"{worst.get('chunks')}), rdcc_nslots {worst.get('rdcc_nslots')} -> {nslots}")
    chunks = worst.get("chunks")
    if random_order and chunks and chunks[0] > 1:
        changes.append(f"reading samples in random order, chunks of 1 along the first axis ({[1] + list(chunks[1:])}) "
                       f"avoid decompressing {chunks[0]} samples per sample")
    snippet = _snippet(name, max(nbytes, current or 0), nslots)
    hits = _hits_note(cached, total, hit, opening, cheaper)
    if all(d.get("read_s") is not None for d in bad) and wall:
        hits += f" (the reads took {sum(reads.values()):.0%} of the time making batches; the rest stays)"
    data_set = f"{worst['file']}:{worst['dataset']}"
    return {
        "estimated_speedup": gain,
        "where": f"{worst['opened_at']} (data set {data_set})" if worst.get("opened_at") else data_set,
        "detail": "; ".join(changes),
        "snippet": snippet,
        "why": f"each read decompresses {amplification:.0f}x the bytes it returns: "
               + ("the data set is opened again for each read, which throws its cache away"
                  if keep_handle and not resize else
                  f"the cache ({current} B) {'cannot hold one' if not worst.get('cache_holds_a_chunk') else 'holds too few'} "
                  f"{chunk} B chunk{'s' if worst.get('cache_holds_a_chunk') else ''}") + hits,
        "change": {"hdf5_cache_bytes": max(nbytes, current or 0), "hdf5_cache_slots": nslots,
                   "hdf5_keep_handles": True},
    }


def hit_rate(cache_bytes, dataset: dict, random_order: bool, kept: bool) -> float:
    """The share of reads that find their chunk in a cache of `cache_bytes`: none where the handle
    is opened again for each read (a new handle starts with an empty cache) or the cache cannot hold
    a chunk; in random order the share of the data set's chunks the cache holds; in order all."""
    chunk = dataset.get("chunk_bytes") or 0
    if not kept or not cache_bytes or not chunk or cache_bytes < chunk:
        return 0.0
    total = _chunk_count(dataset.get("shape"), dataset.get("chunks"))
    return min(1.0, (cache_bytes // chunk) / total) if random_order and total else 1.0


def _miss_cost(amplification: float, hit: float) -> float:
    """A read's cost in returned bytes' worth: a hit copies, a miss decompresses the whole chunk."""
    return (1.0 - hit) * amplification + hit


def _read_shares(bad: list, wall, opening: float) -> dict:
    """{id(data set): share of making batches its reads took}, from the probe's read times; where
    reads were not timed (runs saved before), the whole of making a batch but the opening is taken
    as the worst data set's reads, as estimates were made then."""
    timed = {id(d): d["read_s"] / wall for d in bad if d.get("read_s") is not None} if wall else {}
    if wall and len(timed) == len(bad):
        scale = min(1.0, (1.0 - opening) / max(sum(timed.values()), TINY))
        return {key: share * scale for key, share in timed.items()}
    worst = max(bad, key=lambda d: d["read_amplification"])
    return {id(d): (1.0 - opening if d is worst else 0.0) for d in bad}


def _cache_size(worst: dict, chunk: int, batch: int, random_order: bool) -> tuple:
    """(bytes, slots) for a cache that holds the chunks one batch's reads touch, in whole MiB."""
    per_read = max(1, round((worst.get("chunks_touched") or 1) / max(worst.get("reads") or 1, 1)))
    in_use = per_read * (batch if random_order else 1)
    nbytes = min(max(chunk * in_use, 2 * chunk), MOST_CACHE_BYTES)
    nbytes = int(math.ceil(nbytes / MIB) * MIB)
    nslots = max(next_prime(100 * max(1, nbytes // chunk)), worst.get("rdcc_nslots") or 0)
    return nbytes, nslots


def _snippet(name: str, cache_bytes: int, nslots: int) -> str:
    """A Dataset.__getitem__ that opens the data set once per worker, so its chunk cache survives between reads."""
    opened = f'h5py.File(path, "r", rdcc_nbytes={cache_bytes}, rdcc_nslots={nslots})'
    return "\n".join([
        "def __getitem__(self, i):",
        "    if self.data is None:          # once per worker: the handle keeps its chunk cache",
        f"        self.data = {opened}[\"{name}\"]",
        "    return self.data[i]",
    ])


def _hits_note(cached: int, total, hit: float, opening: float, cheaper: float) -> str:
    """The tail of the `why`: the cache's hit rate in random order, the opening time saved, and the gain per batch."""
    hits = (f"; in random order the cache holds {cached} of the data set's {total} chunks, so about {hit:.0%} of "
            f"reads find theirs there" if hit < 1.0 else "")
    if opening:
        hits += (f"; opening the file, looking the data set up and closing it took {opening:.0%} of the time making "
                 "batches, which a kept handle saves")
    hits += f"; each batch gets up to {cheaper:.1f}x cheaper" if hit < 1.0 or opening else ""
    return hits


def _chunk_count(shape, chunks):
    """How many chunks the data set has (None without its shape and chunk shape)."""
    if not shape or not chunks or len(shape) != len(chunks):
        return None
    total = 1
    for size, chunk in zip(shape, chunks):
        total *= -(-int(size) // max(int(chunk), 1))
    return total


def keep(settings, loader, framework=None) -> str:
    return "where the file is opened: h5py.File(path, 'r', rdcc_nbytes=..., rdcc_nslots=...), and keep the data set handle"


FIX = Fix(id="hdf5-chunk-cache", title="Size the HDF5 chunk cache (and chunk shape) for how the data is read",
          effort=1, addresses=(bottlenecks.INPUT_CPU.id, bottlenecks.INPUT_DISK.id), build=build,
          try_keys=("hdf5_cache_bytes", "hdf5_cache_slots", "hdf5_keep_handles"), keep=keep)
