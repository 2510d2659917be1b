"""hdf5-chunk-cache: size the HDF5 chunk cache for how the data is read, and keep the data set's
handle open so the cache survives between reads.

Applies when a read decompresses at least twice the bytes it returns (the h5py probe counts the
chunks each read touches). After the change a read finds its chunk in the cache with the chance
the cache gives it: every time for reads in order, and for reads in random order the share of the
data set's chunks the cache holds; a hit costs a copy, a miss the whole amplification. The
estimate makes each batch as many times cheaper as that (at most 20x)."""

import math

from gpuprof.advice.fix import MIN_GAIN, Fix
from gpuprof.advice.model import next_prime
from gpuprof.priors.input_fixes import CHUNK_CACHE_MOST
from gpuprof.analysis import bottlenecks


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
    cached = max(max(nbytes, current or 0) // chunk, 1)
    total = _chunk_count(worst.get("shape"), worst.get("chunks"))
    hit = min(1.0, cached / total) if random_order and total else 1.0
    cheaper = amplification / ((1.0 - hit) * amplification + hit)
    # A handle kept also saves opening the file for every read: that time (timed by the probe) goes,
    # and the rest gets `cheaper`.
    wall = ((ev.loader or {}).get("producer") or {}).get("wall_s")
    opening = min((worst.get("open_s") or 0.0) / wall, 0.95) if keep_handle and wall else 0.0
    cheaper = 1.0 / ((1.0 - opening) / cheaper)
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


def _cache_size(worst: dict, chunk: int, batch: int, random_order: bool) -> tuple:
    """(bytes, slots) for a cache that holds the chunks one batch's reads touch, in whole MiB."""
    per_read = max(1, round((worst.get("chunks_touched") or 1) / max(worst.get("reads") or 1, 1)))
    in_use = per_read * (batch if random_order else 1)
    nbytes = min(max(chunk * in_use, 2 * chunk), 1 << 30)
    nbytes = int(math.ceil(nbytes / (1 << 20)) * (1 << 20))
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
