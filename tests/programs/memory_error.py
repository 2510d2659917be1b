"""Limits its own address space, then allocates past it: MemoryError, exit status 1."""
import resource

limit = 1 << 30
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
print("limited", flush=True)
block = bytearray(2 << 30)
