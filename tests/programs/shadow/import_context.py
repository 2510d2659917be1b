"""Says where its imports come from: its own gpuprof.py beside it, a module found through an empty
PYTHONPATH entry (the cwd), and how many threads the process has."""
import os
import sys
import threading

print("path0", sys.path[0] == os.path.dirname(os.path.abspath(__file__)))
try:
    import localmod
    print("localmod from", os.path.relpath(localmod.__file__))
except ImportError:
    print("no localmod")
import gpuprof
print("gpuprof is", gpuprof.WHO)
print("python threads", threading.active_count())
with open("/proc/self/status") as status:
    print([line.strip() for line in status if line.startswith("Threads:")][0])
