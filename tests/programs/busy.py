"""Keeps one core busy for the given number of seconds (default 1.5)."""
import sys
import time

end = time.monotonic() + (float(sys.argv[1]) if len(sys.argv) > 1 else 1.5)
x = 0
while time.monotonic() < end:
    x += 1
print("busy done")
