"""The job's CUDA devices, as its processes identified them: `sections["cuda_devices"]`.

Each process that used CUDA noted its devices by UUID (NVML's spelling) with their CUDA index, which
depends on that process's CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER (probes.cuda_devices). Here
they are merged by UUID across the job: which processes and ranks used each device, and the peak of
the memory they held there. The NVML figures of the job's own GPUs are picked by these UUIDs."""

from gpuprof.record import kinds

NO_INDEX_LAST = 1 << 30     # sorts a device no process gave a CUDA index after every indexed one


def _process(events: list) -> dict:
    head = events[0] if events and events[0].get("k") == kinds.PROCESS else {}
    rank = next((e.get("rank") for e in events if e.get("k") == kinds.RANK and e.get("rank") is not None),
                head.get("rank"))
    return {"pid": head.get("pid"), "rank": rank}


def analyse_devices(groups: list) -> list:
    """[{"uuid", "name", "cuda_index", "cuda_indices", "pids", "ranks", "visible_devices",
    "peak_bytes", "reserved_peak_bytes"}] for every CUDA device a process of the job used, ordered by
    CUDA index then UUID. `ranks[i]` is the rank of `pids[i]` (None for a process without one);
    `cuda_index` is the index the first process to note the device gave it, `cuda_indices` every
    index processes gave it (CUDA_VISIBLE_DEVICES differs between ranks)."""
    found: dict = {}
    for events in groups:
        process = _process(events)
        pid = process["pid"]
        by_index = {}
        for event in events:
            if event.get("k") != kinds.CUDA_DEVICES:
                continue
            for device in event.get("devices") or []:
                index = device.get("cuda_index")
                key = device.get("uuid") or ("unidentified", pid, index)
                by_index[index] = key
                entry = found.setdefault(key, {"uuid": device.get("uuid"), "name": device.get("name"),
                                               "cuda_index": index, "cuda_indices": set(), "pids": set(),
                                               "rank_of": {}, "visible_devices": event.get("visible"),
                                               "peaks": {}})
                entry["name"] = entry["name"] or device.get("name")
                entry["cuda_indices"].add(index)
                if pid is not None:
                    entry["pids"].add(pid)
                    entry["rank_of"][pid] = process["rank"]
        for event in events:
            if event.get("k") != kinds.DEVICE_MEMORY:
                continue
            for device in event.get("devices") or []:
                key = by_index.get(device.get("cuda_index"))
                if key is None:
                    continue
                held = found[key]["peaks"].setdefault(pid, [0, 0])
                held[0] = max(held[0], device.get("peak_bytes") or 0)
                held[1] = max(held[1], device.get("reserved_peak_bytes") or 0)
    out = []
    for entry in found.values():
        peaks = entry.pop("peaks")
        entry["cuda_indices"] = sorted(i for i in entry["cuda_indices"] if i is not None)
        rank_of = entry.pop("rank_of")
        entry["pids"] = sorted(entry["pids"])
        entry["ranks"] = [rank_of.get(pid) for pid in entry["pids"]]
        # Several processes on one device each hold their own memory there: their peaks add up.
        entry["peak_bytes"] = sum(p[0] for p in peaks.values()) if peaks else None
        entry["reserved_peak_bytes"] = sum(p[1] for p in peaks.values()) if peaks else None
        out.append(entry)
    return sorted(out, key=lambda e: (e["cuda_index"] if e["cuda_index"] is not None else NO_INDEX_LAST,
                                      e["uuid"] or ""))
