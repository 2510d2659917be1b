"""Says a line on each stream, then dies of the signal named by argv[1] (SIGSEGV, SIGKILL, SIGTERM...),
sent to itself with the default disposition, as a crash or an out-of-memory kill would end it."""
import os
import signal
import sys

sig = getattr(signal, sys.argv[1])
print("about to die", flush=True)
sys.stderr.write("dying of " + sys.argv[1] + "\n")
sys.stderr.flush()
if sig != signal.SIGKILL:
    signal.signal(sig, signal.SIG_DFL)
os.kill(os.getpid(), sig)
