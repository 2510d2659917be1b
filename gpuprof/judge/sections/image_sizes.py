"""The images the producers decode against the size they resize them to (gpuprof.capture.probes.image_sizes),
on the dominant DataLoader: the decode-reduced-size fix reads how much larger the decoded image
is than the model's input on each side, and what share of making a sample decoding and resizing
take."""


def with_image_sizes(dataloaders: list, events: list) -> list:
    """`dataloaders` with `images` on the first (dominant) loader where the probe timed any resize:
    {decoded, target, format, samples, decode_s, resize_s} per sample (CPU seconds), summed over the
    processes that decoded. Unchanged where none did."""
    timed = [e for e in events if e.get("resizes") and e.get("decoded") and e.get("target")]
    if not dataloaders or not timed:
        return dataloaders
    samples = sum(e["resizes"] for e in timed)
    first = timed[0]
    images = {"decoded": list(first["decoded"]), "target": list(first["target"]), "format": first.get("format"),
              "samples": samples, "decode_s": sum(e.get("decode_s") or 0.0 for e in timed) / samples,
              "resize_s": sum(e.get("resize_s") or 0.0 for e in timed) / samples}
    return [dict(dataloaders[0], images=images)] + list(dataloaders[1:])


def reduction(images: dict) -> float:
    """How many times larger the decoded image is than the target on its shorter ratio of sides (1.0
    where unknown)."""
    try:
        (dw, dh), (tw, th) = images["decoded"], images["target"]
        return min(dw / tw, dh / th)
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return 1.0


def decode_share(loader: dict) -> float | None:
    """The share of the producers' CPU time per sample that decoding and resizing took (None where
    the producers' CPU time or the images are unknown). CPU against CPU: the probe times the first
    samples, when the job's start-up may make them wait for a core longer than later ones."""
    images = (loader or {}).get("images") or {}
    producer = (loader or {}).get("producer") or {}
    batches, size = producer.get("batches"), (loader or {}).get("batch_size")
    if not images or not producer.get("cpu_s") or not batches or not size:
        return None
    per_sample = producer["cpu_s"] / (batches * size)
    return min((images["decode_s"] + images["resize_s"]) / per_sample, 1.0) if per_sample > 0 else None
