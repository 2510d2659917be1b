"""Host-to-device copies and HDF5 reads, summed over the job's processes."""


def analyse_copies(events) -> dict:
    if not events:
        return {"count": 0, "bytes": 0, "pageable_bytes": 0, "seconds": None, "observed": False}
    keys = ("n", "bytes", "pageable_bytes", "pinned_bytes", "non_blocking", "small", "host_s", "gpu_s",
            "timed", "pin_n", "pin_bytes", "pin_s")
    sums = {k: sum(e.get(k) or 0 for e in events) for k in keys}
    dtypes = {}
    for event in events:
        for dtype, nbytes in (event.get("dtypes") or {}).items():
            dtypes[dtype] = dtypes.get(dtype, 0) + nbytes
    # Device time when every copy was timed by CUDA events, else the host's view of the calls.
    seconds = sums["gpu_s"] if sums["timed"] and sums["timed"] == sums["n"] else sums["host_s"]
    return {
        "observed": True,
        "count": sums["n"], "bytes": sums["bytes"], "pageable_bytes": sums["pageable_bytes"],
        "pinned_bytes": sums["pinned_bytes"], "non_blocking": sums["non_blocking"], "small": sums["small"],
        "seconds": seconds, "host_s": sums["host_s"], "gpu_s": sums["gpu_s"] if sums["timed"] else None,
        "timed": sums["timed"], "dtypes": dtypes,
        "pin_memory": {"count": sums["pin_n"], "bytes": sums["pin_bytes"], "seconds": sums["pin_s"]},
    }


def analyse_hdf5(descriptions, reads) -> list:
    latest = {}
    for read in reads:   # each h5read event carries running totals for one process's data set
        key = (read.get("pid"), read.get("file"), read.get("name"))
        if key not in latest or read["calls"] >= latest[key]["calls"]:
            latest[key] = read
    merged = {}
    for (_, file, name), read in latest.items():
        entry = merged.setdefault((file, name), {"calls": 0, "bytes": 0, "elements": 0, "chunks_touched": 0, "opens": 0,
                                                 "open_s": 0.0, "processes": 0})
        for k in ("calls", "bytes", "elements", "chunks_touched", "opens", "open_s"):
            entry[k] += read.get(k) or 0
        entry["processes"] += 1
    out = []
    seen = set()
    for desc in descriptions:
        key = (desc.get("file"), desc.get("name"))
        if key in seen:
            continue
        seen.add(key)
        reads_of = merged.get(key, {"calls": 0, "bytes": 0, "elements": 0, "chunks_touched": 0, "opens": 0,
                                    "open_s": 0.0, "processes": 0})
        chunk_bytes = desc.get("chunk_bytes")
        cache = desc.get("rdcc_nbytes")
        decoded = reads_of["chunks_touched"] * chunk_bytes if chunk_bytes else None
        out.append({
            "file": desc.get("file"), "dataset": desc.get("name"), "shape": desc.get("shape"),
            "dtype": desc.get("dtype"), "chunks": desc.get("chunks"), "chunk_bytes": chunk_bytes,
            "compression": desc.get("compression"), "compression_opts": desc.get("compression_opts"),
            "rdcc_nbytes": cache, "rdcc_nslots": desc.get("rdcc_nslots"), "rdcc_w0": desc.get("rdcc_w0"),
            "cache_holds_a_chunk": (cache >= chunk_bytes) if cache is not None and chunk_bytes else None,
            "reads": reads_of["calls"], "bytes_read": reads_of["bytes"], "chunks_touched": reads_of["chunks_touched"],
            "read_amplification": decoded / reads_of["bytes"] if decoded and reads_of["bytes"] else None,
            "processes": reads_of["processes"],
            # Opened again for most reads (`f["images"][i]` in __getitem__): each new handle starts
            # with an empty chunk cache, so no cache size helps until the handle is kept.
            "opens": reads_of["opens"],
            "reopened_per_read": bool(reads_of["calls"]) and reads_of["opens"] * 2 > reads_of["calls"],
            **({"opened_at": desc["opened_at"]} if desc.get("opened_at") else {}),
            **({"open_s": round(reads_of["open_s"], 6)} if reads_of.get("open_s") else {}),
        })
    return out
