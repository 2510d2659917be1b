"""Byte counts in words, for verdicts and advice alike."""


def mib(nbytes) -> str:
    """The count in the largest binary unit it reaches: "1.5 GiB", "512.0 MiB", "12 B"."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{int(nbytes)} B"
