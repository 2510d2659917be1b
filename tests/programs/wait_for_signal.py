"""Prints 'ready' and waits; with 'checkpoint' it saves on SIGTERM/SIGINT and exits 5."""
import signal
import sys
import time

if len(sys.argv) > 1 and sys.argv[1] == "checkpoint":
    def save(signum, frame):
        print(f"saving checkpoint on {signal.Signals(signum).name}", flush=True)
        time.sleep(0.3)
        print("checkpoint saved", flush=True)
        sys.exit(5)
    signal.signal(signal.SIGTERM, save)
    signal.signal(signal.SIGINT, save)
print("ready", flush=True)
for _ in range(600):
    time.sleep(0.1)
print("nobody stopped me")
