"""Prints lines and a carriage-return progress bar for a few seconds, as training scripts do."""
import sys
import time

for i in range(40):
    print(f"chatty line {i:02d}", flush=True)
    for j in range(3):
        sys.stderr.write(f"\rprogress {j}/3 of {i:02d}")
        sys.stderr.flush()
        time.sleep(0.02)
    sys.stderr.write("\n")
    time.sleep(0.05)
print("chatty done", flush=True)
