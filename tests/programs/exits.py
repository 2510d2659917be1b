"""Leaves in the way named by argv[1], after writing to both streams."""
import os
import sys

print("out before", flush=True)
sys.stderr.write("err before\n")
sys.stderr.flush()
how = sys.argv[1]
if how == "exit17":
    sys.exit(17)
elif how == "exit_none":
    sys.exit(None)
elif how == "exit_msg":
    sys.exit("fatal: configuration missing")
elif how == "os_exit3":
    os._exit(3)
elif how == "keyboard":
    raise KeyboardInterrupt
elif how == "syntax":
    exec(compile("def broken(:\n    pass\n", "generated.py", "exec"))
print("normal end")
