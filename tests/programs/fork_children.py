"""Forks children that leave at once through os._exit, then one that ends through sys.exit (its
atexit handlers run), waiting for each."""
import os
import sys

for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 5):
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
pid = os.fork()
if pid == 0:
    sys.exit(0)
_, status = os.waitpid(pid, 0)
print("children done, last status", os.waitstatus_to_exitcode(status))
