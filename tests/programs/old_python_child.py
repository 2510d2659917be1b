"""Starts the interpreter named in argv[1] as a child (a job that runs python2.7 or an old python3)
and prints what it saw and said: sys.path, what sys.modules holds, its stderr and its status."""
import subprocess
import sys

CODE = ("import sys; print(sys.path); print('sitecustomize' in sys.modules); "
        "print(sorted(name for name in sys.modules if 'gpuprof' in name))")
done = subprocess.run([sys.argv[1], "-c", CODE], capture_output=True, text=True)
print(done.stdout, end="")
print("stderr:", repr(done.stderr))
print("status:", done.returncode)
