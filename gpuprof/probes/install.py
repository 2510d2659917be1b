"""Arms the torch-facing probes without importing torch: they are installed the moment the program
itself imports the module they watch."""


def arm(config: dict) -> None:
    """Placeholder until the torch probes exist: registration alone is recorded."""
    return None
