"""Byte counts in words, for verdicts and advice alike."""

KIB = 2**10
MIB = 2**20
GIB = 2**30
BYTES_TO_MB = 1e-6      # rates are shown in (decimal) megabytes per second


def mib(nbytes) -> str:
    """The count in the largest binary unit it reaches: "1.5 GiB", "512.0 MiB", "12 B"."""
    for unit, scale in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{int(nbytes)} B"
