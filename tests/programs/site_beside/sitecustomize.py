"""A sitecustomize beside the script: plain python does not run it at start-up (the script's folder
joins sys.path later), but a later `import sitecustomize` finds it."""
import builtins

builtins.SITE_RUNS = getattr(builtins, "SITE_RUNS", 0) + 1
WHERE = "beside the script"
