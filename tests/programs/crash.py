"""Raises: the user's own traceback must reach stderr and the status must be 1."""
def inner():
    raise ValueError("boom from the user's code")

print("before the crash", flush=True)
inner()
