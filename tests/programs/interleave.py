"""Alternates writes to stdout and stderr, flushing each, with bytes that are not UTF-8."""
import sys

for i in range(50):
    sys.stdout.write(f"out {i}\n")
    sys.stdout.flush()
    sys.stderr.write(f"err {i}\n")
    sys.stderr.flush()
sys.stdout.buffer.write(b"raw \xff\xfe bytes\n")
sys.stdout.flush()
