"""Prints what a script sees of its own start-up, then exits with the status given as argv[1]."""
import os
import sys

print("argv", sys.argv)
print("name", __name__, "file", __file__)
print("path0", sys.path[0])
print("path", [p for p in sys.path if "gpuprof" not in p or "site-packages" in p] == sys.path)
print("cwd", os.getcwd())
print("spec", __spec__)
print("stdin", sys.stdin.readline().strip() if not sys.stdin.isatty() else "tty")
sys.stderr.write("to stderr\n")
sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
