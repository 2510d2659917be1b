"""A program that imports sitecustomize itself: it must get the module that ran at start-up, not run
it again. Prints its pid (to tell its own runs of sitecustomize from other processes') and what the
import gave."""
import os

import sitecustomize

print("pid:", os.getpid())
print("module:", getattr(sitecustomize, "USER_MARK", "another sitecustomize"))
